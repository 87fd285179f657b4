//! `sandbox.docker:` as coder_eval task files write it, and its checks at load.
//!
//! The field names, types and defaults are coder_eval's (`DockerDriverConfig` and
//! `DockerBuildConfig` in its `models/sandbox.py`, described in its
//! `docs/DOCKER_ISOLATION.md`). Where coder-eval gives a field a different reading, the
//! field's doc comment says so; a field that cannot be honoured here is refused by
//! [`DockerSpec::validate`] with an error that names it.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

/// The image used when a task names none: what `scripts/docker-setup.sh` builds. coder_eval's
/// default is its framework image `coder-eval-agent:<version>`; here the agent CLIs and
/// `node` come from the host through read-only mounts, so any image with a shell and a
/// glibc compatible with the host's `node` serves.
pub const DEFAULT_IMAGE: &str = "coder-eval-base:local";

/// coder_eval's default `env_passthrough` list (v0.12).
pub const DEFAULT_ENV_PASSTHROUGH: &[&str] = &[
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
    /// The container's network. Default `bridge`.
    #[serde(default)]
    pub network: DockerNetwork,
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
            network: DockerNetwork::default(),
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

/// `sandbox.docker.network:`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
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
}

impl DockerNetwork {
    /// The Docker `NetworkMode` this network runs with.
    pub fn network_mode(self) -> &'static str {
        match self {
            DockerNetwork::Bridge | DockerNetwork::Host => "host",
            DockerNetwork::None => "none",
        }
    }

    /// Whether the CLI reaches services on the host's loopback (the scripted model) without
    /// a port forwarded in.
    pub fn reaches_host_loopback(self) -> bool {
        self.network_mode() == "host"
    }
}

/// What a `docker build` takes from `build.extra_args`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BuildFlags {
    /// `--target`.
    pub target: Option<String>,
    /// `--network`.
    pub network: Option<String>,
    /// `--platform`.
    pub platform: Option<String>,
    /// `--no-cache`.
    pub no_cache: bool,
    /// `--pull` (refused later if it would need a registry: the base must be local).
    pub pull: bool,
}

/// Where the task's image comes from, resolved against the task folder.
#[derive(Debug, Clone, PartialEq)]
pub enum ImageSource {
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
pub struct ExtraMount {
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

    /// `env_passthrough` then `env_passthrough_extra`, without repeats.
    pub fn passthrough_names(&self) -> Vec<String> {
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
    pub fn image_source(
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
    pub fn working_dir_checked(&self) -> Result<Option<&str>, DockerSpecError> {
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
    pub fn extra_mounts(&self, task_dir: &Path) -> Result<Vec<ExtraMount>, DockerSpecError> {
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

/// `coder-eval-task-<task_id>:built`, lowercased, with every character Docker does not
/// allow in a repository name (a dataset row's `/` too) made `-`.
pub fn built_tag(task_id: &str) -> String {
    let name: String = task_id
        .to_ascii_lowercase()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '_' || c == '-' {
                c
            } else {
                '-'
            }
        })
        .collect();
    format!("coder-eval-task-{name}:built")
}

fn climbs_out(path: &Path) -> bool {
    let mut depth = 0i32;
    for part in path.components() {
        match part {
            Component::ParentDir => {
                depth -= 1;
                if depth < 0 {
                    return true;
                }
            }
            Component::Normal(_) => depth += 1,
            _ => {}
        }
    }
    false
}

fn parse_build_flags(args: &[String]) -> Result<BuildFlags, DockerSpecError> {
    let mut flags = BuildFlags::default();
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let refuse = || DockerSpecError::ExtraArg { arg: arg.clone() };
        let (name, inline) = match arg.split_once('=') {
            Some((n, v)) => (n, Some(v.to_string())),
            None => (arg.as_str(), None),
        };
        let mut value = || {
            inline
                .clone()
                .or_else(|| it.next().cloned())
                .ok_or_else(refuse)
        };
        match name {
            "--target" => flags.target = Some(value()?),
            "--network" => flags.network = Some(value()?),
            "--platform" => flags.platform = Some(value()?),
            "--no-cache" if inline.is_none() => flags.no_cache = true,
            "--pull" if inline.is_none() => flags.pull = true,
            _ => return Err(refuse()),
        }
    }
    Ok(flags)
}

/// `$VAR` and `${VAR}` replaced by the host environment's values; an unset variable is
/// left as written (Python's `os.path.expandvars`, which coder_eval uses).
pub fn expand_env(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let (name, len) = if let Some(inner) = after.strip_prefix('{') {
            match inner.find('}') {
                Some(end) => (&inner[..end], end + 2),
                None => ("", 0),
            }
        } else {
            let end = after
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(after.len());
            (&after[..end], end)
        };
        match (!name.is_empty())
            .then(|| std::env::var(name).ok())
            .flatten()
        {
            Some(value) => out.push_str(&value),
            None => out.push_str(&rest[at..at + 1 + len]),
        }
        rest = &rest[at + 1 + len..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(yaml: &str) -> Result<DockerSpec, serde_yaml_ng::Error> {
        serde_yaml_ng::from_str(yaml)
    }

    #[test]
    fn defaults_are_coder_evals() {
        let s = spec("{}").unwrap();
        assert_eq!(s, DockerSpec::default());
        assert_eq!(s.network, DockerNetwork::Bridge);
        assert!(s.agent_isolation);
        assert!(s.env_passthrough.iter().any(|n| n == "HOME"));
        let dir = std::env::temp_dir();
        assert_eq!(
            s.image_source(&dir, "t").unwrap(),
            ImageSource::Local(DEFAULT_IMAGE.into())
        );
    }

    #[test]
    fn every_documented_field_loads() {
        let s = spec(
            "image: my:tag\ndockerfile_path: ./env/Dockerfile\nbuild: {args: {A: b}, secrets: [], extra_args: [--target, rt], buildkit: false}\nnetwork: none\nworking_dir: /app\nenv_passthrough: [X]\nenv_passthrough_extra: [Y]\nextra_mounts: []\nagent_isolation: false\n",
        )
        .unwrap();
        assert_eq!(s.network.network_mode(), "none");
        assert_eq!(s.passthrough_names(), ["X", "Y"]);
        assert!(
            spec("network: bridge")
                .unwrap()
                .network
                .reaches_host_loopback()
        );
        assert!(
            spec("network: host")
                .unwrap()
                .network
                .reaches_host_loopback()
        );
    }

    #[test]
    fn unknown_fields_and_values_are_refused() {
        let err = spec("imagee: x").unwrap_err().to_string();
        assert!(err.contains("unknown field `imagee`"), "{err}");
        let err = spec("network: llm").unwrap_err().to_string();
        assert!(err.contains("unknown variant `llm`"), "{err}");
        let err = spec("build: {arg: {}}").unwrap_err().to_string();
        assert!(err.contains("unknown field `arg`"), "{err}");
    }

    #[test]
    fn dockerfile_path_is_checked_against_the_task_folder() {
        let root = std::env::temp_dir().join(format!("ce-docker-spec-{}", std::process::id()));
        let task = root.join("task");
        std::fs::create_dir_all(task.join("env")).unwrap();
        std::fs::write(task.join("env/Dockerfile"), "FROM x\n").unwrap();
        std::fs::write(root.join("Dockerfile"), "FROM x\n").unwrap();
        let with = |p: &str| DockerSpec {
            dockerfile_path: Some(p.into()),
            ..DockerSpec::default()
        };
        match with("./env/Dockerfile")
            .image_source(&task, "My/Row 1")
            .unwrap()
        {
            ImageSource::Build { tag, context, .. } => {
                assert_eq!(tag, "coder-eval-task-my-row-1:built");
                assert!(context.ends_with("task/env"));
            }
            other => panic!("{other:?}"),
        }
        let err = with("env/Nope")
            .validate(&task, "t")
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("sandbox.docker.dockerfile_path: ") && err.ends_with("does not exist"),
            "{err}"
        );
        let err = with("../Dockerfile")
            .validate(&task, "t")
            .unwrap_err()
            .to_string();
        assert!(err.contains("leaves the task folder"), "{err}");
        let abs = root.join("Dockerfile").display().to_string();
        let err = with(&abs).validate(&task, "t").unwrap_err().to_string();
        assert!(err.contains("leaves the task folder"), "{err}");
        std::os::unix::fs::symlink(root.join("Dockerfile"), task.join("link")).unwrap();
        let err = with("link").validate(&task, "t").unwrap_err().to_string();
        assert!(err.contains("leaves the task folder"), "{err}");
        let mut s = with("env/Dockerfile");
        s.build.secrets = vec!["id=a,env=B".into()];
        let err = s.validate(&task, "t").unwrap_err().to_string();
        assert!(
            err.starts_with("sandbox.docker.build.secrets: needs BuildKit"),
            "{err}"
        );
        let mut s = with("env/Dockerfile");
        s.build.extra_args = vec!["--squash".into()];
        let err = s.validate(&task, "t").unwrap_err().to_string();
        assert!(err.contains("\"--squash\" is not supported"), "{err}");
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn working_dir_mounts_and_names() {
        let dir = std::env::temp_dir();
        let with_wd = |w: &str| DockerSpec {
            working_dir: Some(w.into()),
            ..DockerSpec::default()
        };
        assert!(with_wd("/app").validate(&dir, "t").is_ok());
        assert!(with_wd("auto").validate(&dir, "t").is_ok());
        for bad in ["app", "/", "/work", "/work/agent", "/a/../.."] {
            let err = with_wd(bad).validate(&dir, "t").unwrap_err().to_string();
            assert!(err.starts_with("sandbox.docker.working_dir: "), "{err}");
        }
        let mounts = |m: &str| DockerSpec {
            extra_mounts: vec![m.into()],
            ..DockerSpec::default()
        };
        let ok = mounts(&format!("{}:/data:ro", dir.display()))
            .extra_mounts(&dir)
            .unwrap();
        assert!(ok[0].read_only);
        for bad in ["x", "/nope-nope:/d", "/tmp:rel", "/tmp:/d:rx"] {
            let err = mounts(bad).validate(&dir, "t").unwrap_err().to_string();
            assert!(err.starts_with("sandbox.docker.extra_mounts: "), "{err}");
        }
        let s = DockerSpec {
            env_passthrough_extra: vec!["A-B".into()],
            ..DockerSpec::default()
        };
        let err = s.validate(&dir, "t").unwrap_err().to_string();
        assert_eq!(
            err,
            "sandbox.docker.env_passthrough_extra: \"A-B\" is not an environment variable name"
        );
    }

    #[test]
    fn env_expansion_follows_expandvars() {
        // SAFETY: single-threaded use of a variable no other test reads.
        unsafe { std::env::set_var("CE_DOCKER_SPEC_V", "val") };
        assert_eq!(
            expand_env("a/$CE_DOCKER_SPEC_V/${CE_DOCKER_SPEC_V}x"),
            "a/val/valx"
        );
        assert_eq!(
            expand_env("$CE_DOCKER_UNSET_V/${CE_DOCKER_UNSET_V}"),
            "$CE_DOCKER_UNSET_V/${CE_DOCKER_UNSET_V}"
        );
        assert_eq!(expand_env("cost $ 5 ${"), "cost $ 5 ${");
    }
}
