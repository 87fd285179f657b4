//! coder_eval's ignore-pattern rules for `template_dir` sources, and the checks that keep
//! task-relative paths inside the task root or the workspace.

use std::path::{Path, PathBuf};

/// coder_eval's default ignore list (`resources/default_ignore_patterns.yaml`): names
/// matched against every path component of a `template_dir` source.
pub(crate) const DEFAULT_IGNORE_PATTERNS: &[&str] = &[
    ".venv",
    "venv",
    "ENV",
    "env",
    "virtualenv",
    ".git",
    ".svn",
    ".hg",
    "__pycache__",
    "*.pyc",
    "*.pyo",
    "*.pyd",
    ".pytest_cache",
    ".ruff_cache",
    "*.egg-info",
    ".eggs",
    "dist",
    "build",
    ".vscode",
    ".idea",
    "*.swp",
    "*.swo",
    "*~",
    ".DS_Store",
    "Thumbs.db",
    "node_modules",
    ".npm",
    "bower_components",
    ".coverage",
    "htmlcov",
    ".tox",
    ".nox",
    "*.so",
    "*.dylib",
    "*.dll",
    "cli_mocks",
];

/// An ignore-pattern entry is valid: not empty, not a bare `!`.
pub(crate) fn check_ignore_pattern(entry: &str) -> Result<(), String> {
    let trimmed = entry.trim();
    if trimmed.is_empty() || trimmed == "!" {
        return Err(format!("`{entry}` is not a pattern"));
    }
    Ok(())
}

/// The effective ignore list: the defaults, plus bare entries, minus `!` entries.
pub(crate) fn ignore_list(overrides: &[String]) -> Vec<String> {
    let mut list: Vec<String> = DEFAULT_IGNORE_PATTERNS
        .iter()
        .map(|s| s.to_string())
        .collect();
    for entry in overrides {
        let entry = entry.trim();
        match entry.strip_prefix('!') {
            Some(removed) => list.retain(|p| p != removed.trim()),
            None => {
                if !list.iter().any(|p| p == entry) {
                    list.push(entry.to_string());
                }
            }
        }
    }
    list
}

/// Whether a file or folder name matches an ignore pattern (coder_eval's rule: a
/// leading `*` matches a suffix, a trailing `*` a prefix, else the whole name).
pub(crate) fn name_matches(name: &str, pattern: &str) -> bool {
    if let Some(suffix) = pattern.strip_prefix('*') {
        name.ends_with(suffix)
    } else if let Some(prefix) = pattern.strip_suffix('*') {
        name.starts_with(prefix)
    } else {
        name == pattern
    }
}

/// The folder that task-relative paths must stay inside: the nearest folder at or above
/// the task file's folder that holds `.git` (a suite's repository, so `../templates`
/// works), else the task file's folder itself.
pub(crate) fn task_root(dir: &Path) -> PathBuf {
    let dir = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    dir.ancestors()
        .find(|a| a.join(".git").exists())
        .map(Path::to_path_buf)
        .unwrap_or(dir)
}

/// Resolves a task-relative path that must exist and stay inside the task root.
pub(crate) fn inside_root(dir: &Path, path: &Path, what: &str) -> Result<PathBuf, String> {
    let joined = dir.join(path);
    let real = joined
        .canonicalize()
        .map_err(|e| format!("{what}: {}: {e}", joined.display()))?;
    let root = task_root(dir);
    if !real.starts_with(&root) {
        return Err(format!(
            "{what}: {} leaves the task folder {} (paths stay inside the task's folder, or the \
             git repository holding it): move it inside",
            path.display(),
            root.display()
        ));
    }
    Ok(real)
}

/// A workspace-relative path (no absolute path, no `..`).
pub(crate) fn check_relative(path: &str, what: &str) -> Result<(), String> {
    if path.is_empty()
        || Path::new(path).is_absolute()
        || path.replace('\\', "/").split('/').any(|c| c == "..")
    {
        return Err(format!(
            "{what}: `{path}` must be a relative path inside the workspace"
        ));
    }
    Ok(())
}
