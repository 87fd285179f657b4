//! The `sandbox:`, `reference:`, `pre_run:` and `post_run:` sections of a task file.
//!
//! Field names and defaults are coder_eval's (v0.12, `src/coder_eval/models/sandbox.py`,
//! `templates.py`, `tasks.py`), plus this project's own `starter_files` map and
//! `template_dir` string. What the tempdir driver does with them is in
//! [`crate::workspace`].
//!
//! The ignore-pattern rules and the task-relative path checks are in `paths`; the
//! unit tests in `tests`.

mod paths;
#[cfg(test)]
mod tests;

use crate::sandbox::docker::{DockerLimits, DockerSpec};
pub(crate) use paths::{
    check_ignore_pattern, check_relative, ignore_list, inside_root, name_matches,
};
use serde::{Deserialize, Deserializer, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// `sandbox:`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SandboxSpec {
    /// Files written into the fresh workspace: relative path → content.
    #[serde(default)]
    pub starter_files: BTreeMap<String, String>,
    /// A folder copied into the workspace first (relative to the task file), everything
    /// in it (no ignore patterns: this project's own form).
    #[serde(default)]
    pub template_dir: Option<PathBuf>,
    /// `tempdir` (the default: a fresh folder on this machine) or `docker`.
    #[serde(default)]
    pub driver: Driver,
    /// The `docker:` block (coder_eval's `DockerDriverConfig`), checked at load for
    /// `driver: docker`.
    #[serde(default)]
    pub docker: Option<DockerSpec>,
    /// `python:` absent = no virtualenv (coder_eval makes one by default; here only when
    /// asked); `python: null` = none; `python: {}` = a `.venv` in the workspace.
    #[serde(default, deserialize_with = "present")]
    pub python: Option<Option<PythonEnv>>,
    /// npm packages installed into the workspace (`node_modules`).
    #[serde(default)]
    pub node: Option<NodeEnv>,
    /// Resource limits: `timeout` (s) is enforced; the others bind only under docker.
    #[serde(default)]
    pub limits: Option<SandboxLimits>,
    /// Sources applied in order into the workspace (last wins).
    #[serde(default)]
    pub(crate) template_sources: Option<Vec<TemplateSource>>,
    /// Overrides of the default ignore list for `template_dir` sources: `name` adds a
    /// pattern, `!name` removes a default one.
    #[serde(default, alias = "additional_ignore_patterns")]
    pub ignore_patterns: Vec<String>,
    /// Workspace folders whose files become commands on PATH (marked executable, put
    /// first on PATH for the agent, `pre_run`/`post_run` and `run_command`).
    #[serde(default)]
    pub mock_path_dirs: Option<Vec<String>>,
    /// `false` = the task runs with loopback only (the `--isolate-network` mechanism).
    #[serde(default)]
    pub network_enabled: Option<bool>,
}

/// `sandbox.driver`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Driver {
    #[default]
    Tempdir,
    Docker,
}

/// `sandbox.python`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PythonEnv {
    /// pip requirement strings (a relative path is relative to the workspace).
    #[serde(default)]
    pub env_packages: Vec<String>,
    /// `3.11` etc.: the venv is made with `python<version>` from PATH; absent = `python3`.
    #[serde(default)]
    pub python_version: Option<String>,
}

/// `sandbox.node`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeEnv {
    /// npm package specs (`left-pad@1.3.0`, or a path to a tarball or folder).
    #[serde(default)]
    pub env_packages: Vec<String>,
}

/// `sandbox.limits`.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SandboxLimits {
    /// Seconds: bounds the task's wall clock (as `run_limits.task_timeout`; the smaller
    /// of the two wins).
    #[serde(default)]
    pub timeout: Option<u64>,
    /// MB; docker only.
    #[serde(default)]
    pub max_memory_mb: Option<u64>,
    /// CPUs; docker only.
    #[serde(default)]
    pub max_cpus: Option<f64>,
    /// Processes; docker only.
    #[serde(default)]
    pub max_pids: Option<u64>,
    /// MB; reserved in coder_eval (enforced by no driver).
    #[serde(default)]
    pub max_disk_mb: Option<u64>,
}

/// One `template_sources` entry.
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub(crate) enum TemplateSource {
    /// A folder copied in (default ignore list applies), at `mount_point`.
    TemplateDir {
        /// Relative to the task file; absolute after load.
        path: PathBuf,
        #[serde(default = "dot")]
        mount_point: String,
    },
    /// Inline files.
    StarterFiles { files: Vec<StarterFile> },
    /// A git repository cloned in (must come first). Only local repositories (a path, or
    /// `file://`): runs here have no network.
    Repo {
        url: String,
        #[serde(default)]
        commit: Option<String>,
    },
}

/// One inline file of a `starter_files` source.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct StarterFile {
    pub path: String,
    pub content: String,
}

fn dot() -> String {
    ".".into()
}

/// `reference:`: a solution for the graders, never readable by the agent while it runs.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ReferenceSpec {
    /// A folder (relative to the task file); coder_eval's current form.
    #[serde(default)]
    pub directory: Option<PathBuf>,
    /// One file (coder_eval's older form).
    #[serde(default)]
    pub file: Option<PathBuf>,
    /// Inline code (coder_eval's older form), staged as `reference/solution`.
    #[serde(default)]
    pub code: Option<String>,
}

/// One `pre_run` / `post_run` step: a plain command string, or
/// `{command, timeout, fail_on_error}` (coder_eval's form).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Step {
    pub command: String,
    /// 1–300 s; default 30 (coder_eval).
    #[serde(serialize_with = "ms")]
    pub timeout: Duration,
    /// `pre_run`: a failure is a task ERROR (default true). `post_run` steps are
    /// informational (coder_eval): recorded, never failing the task.
    pub fail_on_error: bool,
}

fn ms<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u64(d.as_millis() as u64)
}

/// Default timeout of a step, s (coder_eval).
pub(crate) const STEP_TIMEOUT_DEFAULT_S: u64 = 30;
/// Largest timeout of a step, s (coder_eval).
pub(crate) const STEP_TIMEOUT_MAX_S: u64 = 300;

impl<'de> Deserialize<'de> for Step {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Step, D::Error> {
        use serde::de::Error;
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Full {
            command: String,
            #[serde(default)]
            timeout: Option<u64>,
            #[serde(default)]
            fail_on_error: Option<bool>,
        }
        let value = serde_yaml_ng::Value::deserialize(d)?;
        let full = match value {
            serde_yaml_ng::Value::String(command) => Full {
                command,
                timeout: None,
                fail_on_error: None,
            },
            serde_yaml_ng::Value::Mapping(_) => Full::deserialize(value).map_err(|e| {
                D::Error::custom(format!(
                    "a step is a command string or {{command, timeout, fail_on_error}}: {e}"
                ))
            })?,
            other => {
                return Err(D::Error::custom(format!(
                    "a step is a command string or {{command, timeout, fail_on_error}}, got {}",
                    kind(&other)
                )));
            }
        };
        let secs = full.timeout.unwrap_or(STEP_TIMEOUT_DEFAULT_S);
        if !(1..=STEP_TIMEOUT_MAX_S).contains(&secs) {
            return Err(D::Error::custom(format!(
                "a step's timeout is 1 to {STEP_TIMEOUT_MAX_S} seconds, got {secs}"
            )));
        }
        if full.command.trim().is_empty() {
            return Err(D::Error::custom("a step's command is empty"));
        }
        Ok(Step {
            command: full.command,
            timeout: Duration::from_secs(secs),
            fail_on_error: full.fail_on_error.unwrap_or(true),
        })
    }
}

fn kind(v: &serde_yaml_ng::Value) -> &'static str {
    match v {
        serde_yaml_ng::Value::Null => "null",
        serde_yaml_ng::Value::Bool(_) => "a boolean",
        serde_yaml_ng::Value::Number(_) => "a number",
        serde_yaml_ng::Value::String(_) => "a string",
        serde_yaml_ng::Value::Sequence(_) => "a list",
        serde_yaml_ng::Value::Mapping(_) => "a mapping",
        serde_yaml_ng::Value::Tagged(_) => "a tagged value",
    }
}

/// Absent → `None`; present (even `null`) → `Some(value)`.
fn present<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
    d: D,
) -> Result<Option<Option<T>>, D::Error> {
    Option::<T>::deserialize(d).map(Some)
}

impl SandboxSpec {
    /// Resolves and checks paths against the task folder `dir`.
    pub(crate) fn resolve(&mut self, dir: &Path) -> Result<(), String> {
        if let Some(template) = &self.template_dir {
            let real = inside_root(dir, template, "sandbox.template_dir")?;
            if !real.is_dir() {
                return Err(format!(
                    "sandbox.template_dir: {} is not a folder",
                    real.display()
                ));
            }
            self.template_dir = Some(real);
        }
        for name in self.starter_files.keys() {
            check_relative(name, "sandbox.starter_files")?;
        }
        for entry in &self.ignore_patterns {
            check_ignore_pattern(entry).map_err(|e| format!("sandbox.ignore_patterns: {e}"))?;
        }
        if let Some(dirs) = &self.mock_path_dirs {
            for d in dirs {
                check_relative(d, "sandbox.mock_path_dirs")?;
            }
        }
        if let Some(limits) = &self.limits
            && limits.timeout == Some(0)
        {
            return Err("sandbox.limits.timeout: must be at least 1 second".into());
        }
        let sources = self.template_sources.get_or_insert_with(Vec::new);
        let repos = sources
            .iter()
            .filter(|s| matches!(s, TemplateSource::Repo { .. }))
            .count();
        if repos > 1 {
            return Err("sandbox.template_sources: only one `repo` source is allowed".into());
        }
        if repos == 1 && !matches!(sources.first(), Some(TemplateSource::Repo { .. })) {
            return Err(
                "sandbox.template_sources: the `repo` source must come first (it is cloned into an empty workspace)".into(),
            );
        }
        for (i, source) in sources.iter_mut().enumerate() {
            let what = format!("sandbox.template_sources[{i}]");
            match source {
                TemplateSource::TemplateDir { path, mount_point } => {
                    let text = path.display().to_string();
                    let expanded = super::expand::expand_env(&text).map_err(|var| {
                        format!("{what}.path `{text}`: the environment variable `{var}` is not set (export it, or write the path)")
                    })?;
                    // A path written in the file stays inside the task root; one the user
                    // gives through the environment (`$VAR`) is theirs to choose.
                    let real = if text.contains('$') {
                        let joined = dir.join(&expanded);
                        joined.canonicalize().map_err(|e| {
                            format!("{what}.path `{text}`: {}: {e}", joined.display())
                        })?
                    } else {
                        inside_root(dir, Path::new(&expanded), &format!("{what}.path"))?
                    };
                    if !real.is_dir() {
                        return Err(format!("{what}.path: {} is not a folder", real.display()));
                    }
                    *path = real;
                    check_relative(mount_point, &format!("{what}.mount_point"))?;
                }
                TemplateSource::StarterFiles { files } => {
                    for f in files {
                        check_relative(&f.path, &format!("{what}.files"))?;
                    }
                }
                TemplateSource::Repo { url, .. } => {
                    let local = url.strip_prefix("file://").map(str::to_string).or_else(|| {
                        (!url.contains("://") && !url.contains('@')).then(|| url.clone())
                    });
                    let Some(local) = local else {
                        return Err(format!(
                            "{what}: repo `{url}` needs the network, which runs here do not \
                             have: clone it beside the task and use \
                             `{{type: repo, url: file://<path>}}` or `{{type: template_dir, path}}`"
                        ));
                    };
                    let real = inside_root(dir, Path::new(&local), &format!("{what}.url"))?;
                    *url = real.display().to_string();
                }
            }
        }
        Ok(())
    }

    /// `sandbox.limits` as the container's limits (`max_disk_mb` binds under no driver,
    /// as in coder_eval).
    pub(crate) fn docker_limits(&self) -> DockerLimits {
        let Some(l) = &self.limits else {
            return DockerLimits::default();
        };
        DockerLimits {
            max_memory_mb: l.max_memory_mb,
            max_cpus: l.max_cpus,
            max_pids: l.max_pids.map(|n| i64::try_from(n).unwrap_or(i64::MAX)),
        }
    }

    /// The limits that bind only under docker and are set here (for a load note).
    pub(crate) fn docker_only_limits(&self) -> Vec<&'static str> {
        let Some(l) = &self.limits else {
            return Vec::new();
        };
        let mut out = Vec::new();
        if l.max_memory_mb.is_some() {
            out.push("max_memory_mb");
        }
        if l.max_cpus.is_some() {
            out.push("max_cpus");
        }
        if l.max_pids.is_some() {
            out.push("max_pids");
        }
        if l.max_disk_mb.is_some() {
            out.push("max_disk_mb");
        }
        out
    }
}

/// A resolved `reference:` (absolute paths).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Reference {
    /// A folder, staged whole.
    Directory(PathBuf),
    /// One file, staged into the reference folder under its own name.
    File(PathBuf),
    /// Inline code, staged as `solution` in the reference folder.
    Code(String),
}

impl ReferenceSpec {
    /// Exactly one of `directory`, `file`, `code`; paths inside the task root.
    pub(crate) fn resolve(self, dir: &Path) -> Result<Reference, String> {
        match (self.directory, self.file, self.code) {
            (Some(d), None, None) => {
                let real = inside_root(dir, &d, "reference.directory")?;
                if !real.is_dir() {
                    return Err(format!(
                        "reference.directory: {} is not a folder",
                        real.display()
                    ));
                }
                Ok(Reference::Directory(real))
            }
            (None, Some(f), None) => {
                let real = inside_root(dir, &f, "reference.file")?;
                if !real.is_file() {
                    return Err(format!("reference.file: {} is not a file", real.display()));
                }
                Ok(Reference::File(real))
            }
            (None, None, Some(code)) => Ok(Reference::Code(code)),
            _ => Err("reference: give exactly one of `directory`, `file`, `code`".into()),
        }
    }
}
