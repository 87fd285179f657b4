//! `sandbox.docker:` as coder_eval task files write it, and its checks at load.
//!
//! The field names, types and defaults are coder_eval's (`DockerDriverConfig` and
//! `DockerBuildConfig` in its `models/sandbox.py`, described in its
//! `docs/DOCKER_ISOLATION.md`). Where coder-eval gives a field a different reading, the
//! field's doc comment says so; a field that cannot be honoured here is refused by
//! [`DockerSpec::validate`] with an error that names it.

mod network;
mod text;

pub use network::DockerNetwork;
pub(crate) use text::{BuildFlags, built_tag, expand_env};

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use text::{climbs_out, parse_build_flags};

/// The image used when a task names none: what `scripts/docker-setup.sh` builds. coder_eval's
/// default is its framework image `coder-eval-agent:<version>`; here the agent CLIs and
/// `node` come from the host through read-only mounts, so any image with a shell and a
/// glibc compatible with the host's `node` serves.
pub const DEFAULT_IMAGE: &str = "coder-eval-base:local";

/// coder_eval's default `env_passthrough` list (v0.12).
pub(crate) const DEFAULT_ENV_PASSTHROUGH: &[&str] = &[
    "ANTHROPIC_API_KEY",
    "API_BACKEND",
    "UIPATH_LLM_BACKEND",
    "UIPATH_ACCESS_TOKEN",
    "UIPATH_URL",
    "UIPATH_TENANT_ID",
    "UIPATH_ORGANIZATION_ID",
    "UIPATH_CLI_DISABLE_VERSION_SYNC",
    "AWS_BEARER_TOKEN_BEDROCK",
    "AWS_REGION",
    "BEDROCK_MODEL",
    "CLAUDE_CODE_USE_BEDROCK",
    "ANTHROPIC_MODEL",
    "LITELLM_BASE_URL",
    "LITELLM_AUTH_TOKEN",
    "LITELLM_MODEL",
    "LITELLM_SMALL_MODEL",
    "LITELLM_COST_LOG",
    "CODEX_API_KEY",
    "CODEX_BASE_URL",
    "CODEX_MODEL",
    "GEMINI_API_KEY",
    "ANTIGRAVITY_MODEL",
    "HOME",
];

/// `sandbox.docker:`: which image the task runs in and how its container is set up.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DockerSpec {
    /// The image to run; `None` = [`DEFAULT_IMAGE`]. It must already be on this machine:
    /// no registry is reached for images. Ignored when `dockerfile_path` is set.
    #[serde(default)]
    pub image: Option<String>,
    /// A Dockerfile to build the task's image from, relative to the task file's folder
    /// (`$VAR` / `${VAR}` expanded from the host environment), which it must not leave. The
    /// build context is the Dockerfile's folder; the image is tagged
    /// `coder-eval-task-<task_id>:built`, so a rerun reuses Docker's layer cache.
    #[serde(default)]
    pub dockerfile_path: Option<String>,
    /// How the Dockerfile is built (only with `dockerfile_path`).
    #[serde(default)]
    pub build: DockerBuild,
    /// The container's network; absent = `bridge` ([`DockerSpec::network`]). The run
    /// makes it `none` when the task sets `sandbox.network_enabled: false` (written with
    /// `bridge` or `host` here, that is a load error) or runs under `--isolate-network`.
    #[serde(default)]
    pub network: Option<DockerNetwork>,
    /// Where the agent runs inside the container, instead of the workspace: an absolute
    /// path, or `auto` for the image's `WORKDIR` (`/root` when it has none). The workspace
    /// is copied there before the agent starts and copied back after it ends, so criteria
    /// see what the agent left. coder_eval refuses `/`, `/work` and `/work/*`; so does
    /// coder-eval, so a task valid here is valid there.
    #[serde(default)]
    pub working_dir: Option<String>,
    /// Host environment variables the container may receive (replaces the default list,
    /// [`DEFAULT_ENV_PASSTHROUGH`]). The CLI's environment is still built from nothing
    /// as under `driver: tempdir`: a listed variable reaches it only when the run also
    /// passes it (`--pass-env`), and `HOME` is always the CLI's private home.
    #[serde(default = "default_env_passthrough")]
    pub env_passthrough: Vec<String>,
    /// Added to `env_passthrough` (coder_eval appends it across config layers).
    #[serde(default)]
    pub env_passthrough_extra: Vec<String>,
    /// Extra bind mounts, `SRC:DST[:ro|rw]` as `docker run -v` takes them; `SRC` relative
    /// to the task file's folder, `DST` absolute.
    #[serde(default)]
    pub extra_mounts: Vec<String>,
    /// coder_eval runs the agent as a separate unprivileged user. Here, `true` (the default)
    /// runs every command of the agent with all Linux capabilities dropped and
    /// `no-new-privileges`, as the host user that owns the workspace.
    #[serde(default = "yes")]
    pub agent_isolation: bool,
}

impl Default for DockerSpec {
    fn default() -> Self {
        DockerSpec {
            image: None,
            dockerfile_path: None,
            build: DockerBuild::default(),
            network: None,
            working_dir: None,
            env_passthrough: default_env_passthrough(),
            env_passthrough_extra: Vec::new(),
            extra_mounts: Vec::new(),
            agent_isolation: true,
        }
    }
}

fn default_env_passthrough() -> Vec<String> {
    DEFAULT_ENV_PASSTHROUGH
        .iter()
        .map(|s| s.to_string())
        .collect()
}

fn yes() -> bool {
    true
}

/// `sandbox.docker.build:` (coder_eval's `DockerBuildConfig`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DockerBuild {
    /// `--build-arg KEY=VALUE`; values are `$VAR` / `${VAR}` expanded from the host
    /// environment (an unset variable is left as written, as coder_eval does).
    #[serde(default)]
    pub args: BTreeMap<String, String>,
    /// BuildKit secret specs. Refused: the host builds through the Engine API's classic
    /// builder, which has no secrets.
    #[serde(default)]
    pub secrets: Vec<String>,
    /// Raw `docker build` flags. Those the Engine API has a field for are taken:
    /// `--target T`, `--network N`, `--platform P`, `--no-cache`, `--pull`; any other is
    /// refused, named.
    #[serde(default)]
    pub extra_args: Vec<String>,
    /// `DOCKER_BUILDKIT`: `None` / `false` build with the classic builder; `true` is
    /// refused (see `secrets`).
    #[serde(default)]
    pub buildkit: Option<bool>,
}

/// Where the task's image comes from, resolved against the task folder.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ImageSource {
    /// An image already on this machine.
    Local(String),
    /// Built from a Dockerfile.
    Build {
        /// The Dockerfile (absolute, canonical).
        dockerfile: PathBuf,
        /// Its folder: the build context.
        context: PathBuf,
        /// `coder-eval-task-<task_id>:built`, made a valid Docker reference.
        tag: String,
        /// `build.args`, expanded.
        args: BTreeMap<String, String>,
        /// `build.extra_args`, parsed.
        flags: BuildFlags,
    },
}

/// A bind mount of `extra_mounts`, parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ExtraMount {
    /// Host path (absolute).
    pub source: PathBuf,
    /// Container path (absolute).
    pub target: PathBuf,
    /// `:ro`.
    pub read_only: bool,
}

/// A `sandbox.docker` field that cannot be used, found at load. Each message names the
/// field.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum DockerSpecError {
    /// `dockerfile_path` names no file.
    #[error("sandbox.docker.dockerfile_path: {path} does not exist")]
    DockerfileMissing {
        /// The path as resolved.
        path: PathBuf,
    },
    /// `dockerfile_path` resolves outside the task folder.
    #[error("sandbox.docker.dockerfile_path: {path} leaves the task folder {task_dir}")]
    DockerfileOutside {
        /// The path as written (expanded).
        path: String,
        /// The task file's folder.
        task_dir: PathBuf,
    },
    /// `working_dir` is neither absolute nor `auto`, or is a reserved path.
    #[error("sandbox.docker.working_dir: {value:?} {reason}")]
    WorkingDir {
        /// The value written.
        value: String,
        /// Why it is refused.
        reason: &'static str,
    },
    /// `build.secrets` or `build.buildkit: true`.
    #[error(
        "sandbox.docker.build.{field}: needs BuildKit, which coder-eval does not drive (it builds through the Engine API's classic builder); pass values with build.args or bake them into a base image"
    )]
    BuildKit {
        /// `secrets` or `buildkit`.
        field: &'static str,
    },
    /// An `extra_args` flag the Engine API has no field for, or one missing its value.
    #[error(
        "sandbox.docker.build.extra_args: {arg:?} is not supported (supported: --target, --network, --platform, --no-cache, --pull)"
    )]
    ExtraArg {
        /// The flag.
        arg: String,
    },
    /// A malformed `extra_mounts` entry.
    #[error("sandbox.docker.extra_mounts: {spec:?} {reason}")]
    ExtraMount {
        /// The entry.
        spec: String,
        /// What is wrong with it.
        reason: String,
    },
    /// An empty or malformed variable name in `env_passthrough(_extra)`.
    #[error("sandbox.docker.{field}: {name:?} is not an environment variable name")]
    EnvName {
        /// `env_passthrough` or `env_passthrough_extra`.
        field: &'static str,
        /// The entry.
        name: String,
    },
}

impl DockerSpecError {
    /// The key path of the field it names, under `sandbox.docker` (`["working_dir"]`,
    /// `["build", "extra_args"]`), to find its line in the task file.
    pub fn key(&self) -> Vec<&'static str> {
        match self {
            DockerSpecError::DockerfileMissing { .. }
            | DockerSpecError::DockerfileOutside { .. } => {
                vec!["dockerfile_path"]
            }
            DockerSpecError::WorkingDir { .. } => vec!["working_dir"],
            DockerSpecError::BuildKit { field } => vec!["build", field],
            DockerSpecError::ExtraArg { .. } => vec!["build", "extra_args"],
            DockerSpecError::ExtraMount { .. } => vec!["extra_mounts"],
            DockerSpecError::EnvName { field, .. } => vec![field],
        }
    }
}

impl DockerSpec {
    /// Checks every field against the task file's folder `task_dir`: what can be known
    /// without a Docker daemon (the daemon is reached only by `DockerSandbox::prepare`).
    pub fn validate(&self, task_dir: &Path, task_id: &str) -> Result<(), DockerSpecError> {
        self.image_source(task_dir, task_id)?;
        self.extra_mounts(task_dir)?;
        self.working_dir_checked()?;
        for (field, names) in [
            ("env_passthrough", &self.env_passthrough),
            ("env_passthrough_extra", &self.env_passthrough_extra),
        ] {
            for name in names {
                let ok = !name.is_empty()
                    && !name.starts_with(|c: char| c.is_ascii_digit())
                    && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
                if !ok {
                    return Err(DockerSpecError::EnvName {
                        field,
                        name: name.clone(),
                    });
                }
            }
        }
        Ok(())
    }

    /// The network as written, `bridge` when absent.
    pub fn network(&self) -> DockerNetwork {
        self.network.unwrap_or_default()
    }

    /// `env_passthrough` then `env_passthrough_extra`, without repeats.
    #[cfg(test)]
    pub(crate) fn passthrough_names(&self) -> Vec<String> {
        let mut names: Vec<String> = Vec::new();
        for name in self
            .env_passthrough
            .iter()
            .chain(&self.env_passthrough_extra)
        {
            if !names.contains(name) {
                names.push(name.clone());
            }
        }
        names
    }

    /// Where the image comes from: the Dockerfile (resolved and checked) when
    /// `dockerfile_path` is set, else `image` or [`DEFAULT_IMAGE`].
    pub(crate) fn image_source(
        &self,
        task_dir: &Path,
        task_id: &str,
    ) -> Result<ImageSource, DockerSpecError> {
        let Some(written) = &self.dockerfile_path else {
            return Ok(ImageSource::Local(
                self.image.clone().unwrap_or_else(|| DEFAULT_IMAGE.into()),
            ));
        };
        let written = expand_env(written);
        let joined = task_dir.join(&written);
        let outside = || DockerSpecError::DockerfileOutside {
            path: written.clone(),
            task_dir: task_dir.to_path_buf(),
        };
        // Refused before touching the file system when the path itself climbs out.
        if Path::new(&written).is_absolute() && !joined.starts_with(task_dir)
            || climbs_out(Path::new(&written))
        {
            return Err(outside());
        }
        let dockerfile = joined
            .canonicalize()
            .ok()
            .filter(|p| p.is_file())
            .ok_or_else(|| DockerSpecError::DockerfileMissing {
                path: joined.clone(),
            })?;
        // A symlink may still lead out.
        let root = task_dir
            .canonicalize()
            .unwrap_or_else(|_| task_dir.to_path_buf());
        if !dockerfile.starts_with(&root) {
            return Err(outside());
        }
        let context = dockerfile.parent().unwrap_or(&root).to_path_buf();
        if self.build.buildkit == Some(true) {
            return Err(DockerSpecError::BuildKit { field: "buildkit" });
        }
        if !self.build.secrets.is_empty() {
            return Err(DockerSpecError::BuildKit { field: "secrets" });
        }
        Ok(ImageSource::Build {
            dockerfile,
            context,
            tag: built_tag(task_id),
            args: self
                .build
                .args
                .iter()
                .map(|(k, v)| (k.clone(), expand_env(v)))
                .collect(),
            flags: parse_build_flags(&self.build.extra_args)?,
        })
    }

    /// `working_dir`, checked: `None`, `Some("auto")` or an absolute path.
    pub(crate) fn working_dir_checked(&self) -> Result<Option<&str>, DockerSpecError> {
        let Some(value) = self.working_dir.as_deref() else {
            return Ok(None);
        };
        if value == "auto" {
            return Ok(Some(value));
        }
        let refuse = |reason| DockerSpecError::WorkingDir {
            value: value.into(),
            reason,
        };
        if !value.starts_with('/') {
            return Err(refuse("must be an absolute path or auto"));
        }
        let norm = value.trim_end_matches('/');
        if norm.is_empty() || norm == "/work" || norm.starts_with("/work/") {
            return Err(refuse(
                "is reserved (/, /work and /work/* are refused, as coder_eval does): use the image's own WORKDIR, e.g. /app",
            ));
        }
        if climbs_out(Path::new(value)) {
            return Err(refuse("must not contain .."));
        }
        Ok(Some(value))
    }

    /// `extra_mounts`, parsed; each source must exist.
    pub(crate) fn extra_mounts(&self, task_dir: &Path) -> Result<Vec<ExtraMount>, DockerSpecError> {
        self.extra_mounts
            .iter()
            .map(|spec| {
                let refuse = |reason: String| DockerSpecError::ExtraMount {
                    spec: spec.clone(),
                    reason,
                };
                let parts: Vec<&str> = spec.split(':').collect();
                let (source, target, read_only) = match parts.as_slice() {
                    [s, t] => (*s, *t, false),
                    [s, t, "ro"] => (*s, *t, true),
                    [s, t, "rw"] => (*s, *t, false),
                    _ => return Err(refuse("is not SRC:DST[:ro|rw]".into())),
                };
                if source.is_empty() || !target.starts_with('/') {
                    return Err(refuse("needs a source and an absolute target".into()));
                }
                let source = task_dir.join(expand_env(source));
                if !source.exists() {
                    return Err(refuse(format!("{} does not exist", source.display())));
                }
                Ok(ExtraMount {
                    source,
                    target: PathBuf::from(target),
                    read_only,
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests;
