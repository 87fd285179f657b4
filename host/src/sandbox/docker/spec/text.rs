//! The text rules of `sandbox.docker:`: `build.extra_args` parsed into Engine API build
//! fields, `$VAR` expansion as coder_eval does it, the built image's tag, and paths that
//! climb out of a folder.

use super::DockerSpecError;
use std::path::{Component, Path};

/// What a `docker build` takes from `build.extra_args`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct BuildFlags {
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

/// `coder-eval-task-<task_id>:built`, lowercased, with every character Docker does not
/// allow in a repository name (a dataset row's `/` too) made `-`.
pub(crate) fn built_tag(task_id: &str) -> String {
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

pub(super) fn climbs_out(path: &Path) -> bool {
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

pub(super) fn parse_build_flags(args: &[String]) -> Result<BuildFlags, DockerSpecError> {
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
pub(crate) fn expand_env(text: &str) -> String {
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
