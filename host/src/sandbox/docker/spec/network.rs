//! `sandbox.docker.network:` and the Docker network mode each value runs with.

use serde::{Deserialize, Serialize};

/// `sandbox.docker.network:`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DockerNetwork {
    /// coder_eval's default: the agent reaches its model and package registries. Here the
    /// model is the host's loopback scripted model (or a real API through `--pass-env`),
    /// which only the host's network namespace reaches, so `bridge` runs the container
    /// in the host's network namespace (Docker's `host` mode).
    #[default]
    Bridge,
    /// No network (fully sealed runs): not even the host's loopback, except the ports the
    /// run forwards in (`DockerSandbox::forward_host_port`: the scripted model's).
    None,
    /// The host's network namespace, said explicitly (coder-eval's own value).
    Host,
    /// coder_eval's egress allowlist: the agent reaches its model API and nothing else.
    /// Here that is `none` with the scripted model's port forwarded in; a run against a
    /// real API is refused when the container starts (no egress proxy here).
    LlmOnly,
}

impl DockerNetwork {
    /// The Docker `NetworkMode` this network runs with.
    pub(crate) fn network_mode(self) -> &'static str {
        match self {
            DockerNetwork::Bridge | DockerNetwork::Host => "host",
            DockerNetwork::None | DockerNetwork::LlmOnly => "none",
        }
    }

    /// The value as task files write it.
    pub fn as_str(self) -> &'static str {
        match self {
            DockerNetwork::Bridge => "bridge",
            DockerNetwork::None => "none",
            DockerNetwork::Host => "host",
            DockerNetwork::LlmOnly => "llm_only",
        }
    }

    /// Whether the CLI reaches services on the host's loopback (the scripted model) without
    /// a port forwarded in.
    pub(crate) fn reaches_host_loopback(self) -> bool {
        self.network_mode() == "host"
    }
}
