//! [`RunOptions`]: how `coder-eval run` runs its tasks.

use crate::components::ComponentSource;
use crate::limits::StopPolicy;
use std::path::PathBuf;

/// How to run.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Where results go.
    pub out_dir: PathBuf,
    /// Replacement components.
    pub components: ComponentSource,
    /// Use this CLI binary instead of the pinned install or PATH.
    pub cli_override: Option<PathBuf>,
    /// Play this script instead of the task's `agent.scripted_model`.
    pub script_override: Option<PathBuf>,
    /// Pass limits the CLI enforces natively to it (true), or rely on the host's backstop
    /// alone (false: the launch plan is asked for without them).
    pub native_limits: bool,
    /// How the host stops a CLI and what it left behind (graces, give-up).
    pub(crate) stop_policy: StopPolicy,
    /// Host environment variables passed to the CLI (e.g. a real API key); judges may
    /// read them too.
    pub pass_env: Vec<String>,
    /// Host environment variables handed to judges only (`--judge-env`: the judge's API
    /// key, `ANTHROPIC_BASE_URL`), never to the agent.
    pub judge_env: Vec<String>,
    /// Start each agent CLI in a PID namespace of its own where the kernel allows it
    /// (`crate::process::pidns`): every process of the task dies with it, even when the
    /// host is SIGKILLed. On by default; `--no-pid-namespace` turns it off.
    pub pid_namespace: bool,
    /// The experiment the units were resolved with, for `run.json`.
    pub experiment: Option<crate::results::ExperimentRecord>,
    /// Retries of infrastructure errors ([`super::retry`]): the policy a task's `retry:`
    /// block and [`RunOptions::retry_given`] start from.
    pub retry: super::retry::RetryPolicy,
    /// The command line's retry settings (`--infra-retries`, `--retry-initial-delay`):
    /// they beat each task file's `retry:` block.
    pub retry_given: crate::task::retry::RetrySpec,
    /// The suite's live progress display, when one is shown ([`super::progress`]).
    pub progress: Option<std::sync::Arc<super::progress::Progress>>,
    /// Put the model gateway (`crate::gateway`) between each CLI and its model
    /// (`--gateway`): every request recorded, `num_turns` counted and `max_turns` held
    /// there. Off by default.
    pub gateway: bool,
    /// The real API the gateway forwards to (`--upstream URL`); `None`: the task's scripted
    /// model. The credentials among `pass_env` then go to the gateway, not the CLI.
    pub upstream: Option<String>,
    /// Keep request and response bodies in the gateway's call records
    /// (`--gateway-bodies`; secrets redacted).
    pub gateway_bodies: bool,
    /// The price table the gateway prices each call with (`--price-table`, loaded and
    /// checked); `None`: nothing is priced, cost stays what the CLI reported.
    pub price_table: Option<crate::gateway::PriceTable>,
}

impl RunOptions {
    /// The defaults, writing results under `out_dir`.
    pub fn new(out_dir: PathBuf) -> RunOptions {
        RunOptions {
            out_dir,
            components: ComponentSource::default(),
            cli_override: None,
            script_override: None,
            native_limits: true,
            stop_policy: StopPolicy::DEFAULT,
            pass_env: Vec::new(),
            judge_env: Vec::new(),
            pid_namespace: true,
            experiment: None,
            retry: super::retry::RetryPolicy::DEFAULT,
            retry_given: Default::default(),
            progress: None,
            gateway: false,
            upstream: None,
            gateway_bodies: false,
            price_table: None,
        }
    }
}
