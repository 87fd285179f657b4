//! Filling a fresh workspace for the tempdir driver: coder_eval's `template_sources`
//! (with its ignore list), `mock_path_dirs`, a per-task Python virtualenv
//! (`sandbox.python`), npm packages (`sandbox.node`), and staging the reference solution
//! outside the workspace once the agent has finished.
//!
//! The agent runs as root here, so file modes cannot hide anything from it: the
//! reference is not copied anywhere near the run until the turn has ended; then it is
//! staged into `<run dir>/reference/` (beside, not inside, the workspace) and criteria
//! see it as `$REFERENCE_DIR`.

use crate::task::sandbox::{TemplateSource, ignore_list, name_matches};
use crate::task::{Reference, Task};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long a package install (`pip install`, `npm install`) may take
/// ([`crate::limits::INSTALL_TIMEOUT`]).
pub(crate) const INSTALL_TIMEOUT: Duration = crate::limits::INSTALL_TIMEOUT;

/// What the filled workspace adds to the environment of the agent, `pre_run`/`post_run`
/// and `run_command` criteria.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct WorkspaceEnv {
    /// Folders put first on PATH, in order: `mock_path_dirs`, then `.venv/bin`, then
    /// `node_modules/.bin`. Absolute.
    pub path_prefix: Vec<PathBuf>,
    /// `VIRTUAL_ENV` when a venv was made.
    pub venv: Option<PathBuf>,
}

impl WorkspaceEnv {
    /// `PATH` with the prefix before `base`; `None` when there is no prefix.
    pub(crate) fn path(&self, base: &str) -> Option<String> {
        if self.path_prefix.is_empty() {
            return None;
        }
        let mut parts: Vec<String> = self
            .path_prefix
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        if !base.is_empty() {
            parts.push(base.to_string());
        }
        Some(parts.join(":"))
    }

    /// The variables to set for a process in this workspace (`PATH`, `VIRTUAL_ENV`).
    pub(crate) fn vars(&self, base_path: &str) -> Vec<(String, String)> {
        let mut vars = Vec::new();
        if let Some(path) = self.path(base_path) {
            vars.push(("PATH".to_string(), path));
        }
        if let Some(venv) = &self.venv {
            vars.push(("VIRTUAL_ENV".to_string(), venv.display().to_string()));
        }
        vars
    }
}

/// Writes `.profile` and `.bash_profile` into the CLI's private HOME that put the
/// workspace's PATH prefix back in front: a CLI that runs its shell commands in a login
/// shell (Codex: `bash -lc`) gets the system's PATH from `/etc/profile`, which would lose
/// the task's mock commands and `.venv`. Nothing is written when there is no prefix.
pub(crate) fn write_login_profile(home: &Path, env: &WorkspaceEnv) -> std::io::Result<()> {
    let Some(prefix) = env.path("") else {
        return Ok(());
    };
    let mut text = format!(
        "# Written by coder-eval: the task's commands and .venv first on PATH.\nexport PATH={}:\"$PATH\"\n",
        sh_quote(&prefix)
    );
    if let Some(venv) = &env.venv {
        text += &format!(
            "export VIRTUAL_ENV={}\n",
            sh_quote(&venv.display().to_string())
        );
    }
    for name in [".profile", ".bash_profile"] {
        std::fs::write(home.join(name), &text)?;
    }
    Ok(())
}

/// The host's PATH (a default when unset).
pub(crate) fn host_path() -> String {
    std::env::var("PATH").unwrap_or_else(|_| "/usr/local/bin:/usr/bin:/bin".into())
}

/// Applies `sandbox.template_sources` in order (a `repo` source is cloned first, into the
/// empty workspace). Errors name the source.
pub(crate) async fn apply_template_sources(task: &Task, workspace: &Path) -> Result<(), String> {
    let ignore = ignore_list(&task.sandbox.ignore_patterns);
    for (i, source) in task.sandbox.template_sources.iter().flatten().enumerate() {
        let what = format!("sandbox.template_sources[{i}]");
        match source {
            TemplateSource::TemplateDir { path, mount_point } => {
                let target = workspace.join(mount_point);
                std::fs::create_dir_all(&target)
                    .map_err(|e| format!("{what}: {}: {e}", target.display()))?;
                copy_filtered(path, &target, &ignore)
                    .map_err(|e| format!("{what}: copying {}: {e}", path.display()))?;
            }
            TemplateSource::StarterFiles { files } => {
                for f in files {
                    let target = workspace.join(&f.path);
                    if let Some(parent) = target.parent() {
                        std::fs::create_dir_all(parent).map_err(|e| format!("{what}: {e}"))?;
                    }
                    std::fs::write(&target, &f.content)
                        .map_err(|e| format!("{what}: {}: {e}", f.path))?;
                }
            }
            TemplateSource::Repo { url, commit } => {
                let ws = workspace.display().to_string();
                run(
                    &format!("git clone --quiet {} {}", sh_quote(url), sh_quote(&ws)),
                    workspace,
                    &what,
                )
                .await?;
                if let Some(commit) = commit {
                    run(
                        &format!(
                            "git -c advice.detachedHead=false checkout --quiet {}",
                            sh_quote(commit)
                        ),
                        workspace,
                        &what,
                    )
                    .await?;
                }
            }
        }
    }
    Ok(())
}

/// Makes the virtualenv, installs npm packages and marks mock commands executable.
pub(crate) async fn prepare_env(task: &Task, workspace: &Path) -> Result<WorkspaceEnv, String> {
    let mut env = WorkspaceEnv::default();
    for dir in task.sandbox.mock_path_dirs.iter().flatten() {
        let dir = workspace.join(dir);
        // Missing entries are skipped (coder_eval).
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            if entry.file_type().is_ok_and(|t| t.is_file()) {
                use std::os::unix::fs::PermissionsExt;
                let path = entry.path();
                let mode = std::fs::metadata(&path)
                    .map(|m| m.permissions().mode())
                    .unwrap_or(0o644);
                std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode | 0o755))
                    .map_err(|e| format!("sandbox.mock_path_dirs: {}: {e}", path.display()))?;
            }
        }
        env.path_prefix.push(dir);
    }
    if let Some(Some(python)) = &task.sandbox.python {
        let program = crate::task::workspace_python(python.python_version.as_deref());
        let venv = workspace.join(".venv");
        run(
            &format!(
                "{program} -m venv {}",
                sh_quote(&venv.display().to_string())
            ),
            workspace,
            "sandbox.python (making .venv)",
        )
        .await?;
        if !python.env_packages.is_empty() {
            let packages: Vec<String> = python.env_packages.iter().map(|p| sh_quote(p)).collect();
            run(
                &format!(
                    ".venv/bin/python -m pip install --quiet --disable-pip-version-check {}",
                    packages.join(" ")
                ),
                workspace,
                "sandbox.python.env_packages (pip install)",
            )
            .await?;
        }
        env.path_prefix.push(venv.join("bin"));
        env.venv = Some(venv);
    }
    if let Some(node) = &task.sandbox.node
        && !node.env_packages.is_empty()
    {
        let packages: Vec<String> = node.env_packages.iter().map(|p| sh_quote(p)).collect();
        run(
            &format!(
                "npm install --no-audit --no-fund --silent --prefix . {}",
                packages.join(" ")
            ),
            workspace,
            "sandbox.node.env_packages (npm install)",
        )
        .await?;
        env.path_prefix
            .push(workspace.join("node_modules").join(".bin"));
    }
    Ok(env)
}

/// Stages the task's reference into `dir/reference/` (made afresh) and returns that
/// folder; `None` when the task has no reference. Call only after the agent finished.
pub(crate) fn stage_reference(task: &Task, dir: &Path) -> Result<Option<PathBuf>, String> {
    let Some(reference) = &task.reference else {
        return Ok(None);
    };
    let target = dir.join("reference");
    if target.exists() {
        std::fs::remove_dir_all(&target).map_err(|e| format!("reference: {e}"))?;
    }
    std::fs::create_dir_all(&target).map_err(|e| format!("reference: {e}"))?;
    match reference {
        Reference::Directory(from) => copy_filtered(from, &target, &[])
            .map_err(|e| format!("reference: copying {}: {e}", from.display()))?,
        Reference::File(from) => {
            let name = from.file_name().unwrap_or_else(|| "solution".as_ref());
            std::fs::copy(from, target.join(name))
                .map_err(|e| format!("reference: copying {}: {e}", from.display()))?;
        }
        Reference::Code(code) => {
            std::fs::write(target.join("solution"), code).map_err(|e| format!("reference: {e}"))?
        }
    }
    let target = target.canonicalize().unwrap_or(target);
    Ok(Some(target))
}

/// Copies `from` into `to`, skipping every entry whose name matches an ignore pattern.
/// Symbolic links are copied as links.
pub(crate) fn copy_filtered(from: &Path, to: &Path, ignore: &[String]) -> std::io::Result<()> {
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let name = entry.file_name();
        let name_text = name.to_string_lossy();
        if ignore.iter().any(|p| name_matches(&name_text, p)) {
            continue;
        }
        let target = to.join(&name);
        let kind = entry.file_type()?;
        if kind.is_dir() {
            std::fs::create_dir_all(&target)?;
            copy_filtered(&entry.path(), &target, ignore)?;
        } else if kind.is_symlink() {
            let link = std::fs::read_link(entry.path())?;
            let _ = std::fs::remove_file(&target);
            std::os::unix::fs::symlink(link, &target)?;
        } else {
            std::fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}

/// Runs a set-up command in the workspace; a failure names `what` and the end of stderr.
async fn run(command: &str, cwd: &Path, what: &str) -> Result<(), String> {
    let out = crate::process::run_shell(command, cwd, &[], INSTALL_TIMEOUT, 64 * 1024)
        .await
        .map_err(|e| format!("{what}: could not start `{command}`: {e}"))?;
    if out.exit_code != Some(0) {
        let last = |text: &str| {
            text.lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .map(str::to_string)
        };
        let tail = last(&out.stderr)
            .or_else(|| last(&out.stdout))
            .unwrap_or_default();
        return Err(format!(
            "{what}: `{command}` failed ({}): {tail}",
            if out.timed_out {
                "timed out".to_string()
            } else {
                format!("exit {:?}", out.exit_code)
            }
        ));
    }
    Ok(())
}

/// Single-quotes `s` for `sh`.
fn sh_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filtered_copy_honours_defaults_and_negation() {
        let tmp = std::env::temp_dir().join(format!("ce-ws-{}", std::process::id()));
        let src = tmp.join("src");
        for d in [
            "src/dist",
            "src/node_modules/x",
            "src/keep",
            "src/__pycache__",
        ] {
            std::fs::create_dir_all(tmp.join(d)).unwrap();
        }
        std::fs::write(src.join("keep/a.py"), "a").unwrap();
        std::fs::write(src.join("keep/a.pyc"), "a").unwrap();
        std::fs::write(src.join("dist/b.js"), "b").unwrap();
        let to = tmp.join("to");
        std::fs::create_dir_all(&to).unwrap();
        copy_filtered(&src, &to, &ignore_list(&["!dist".into()])).unwrap();
        assert!(to.join("keep/a.py").exists());
        assert!(!to.join("keep/a.pyc").exists());
        assert!(to.join("dist/b.js").exists());
        assert!(!to.join("node_modules").exists());
        assert!(!to.join("__pycache__").exists());
        std::fs::remove_dir_all(&tmp).unwrap();
    }

    #[test]
    fn path_puts_prefixes_first() {
        let env = WorkspaceEnv {
            path_prefix: vec!["/w/mocks".into(), "/w/.venv/bin".into()],
            venv: Some("/w/.venv".into()),
        };
        assert_eq!(
            env.path("/usr/bin").unwrap(),
            "/w/mocks:/w/.venv/bin:/usr/bin"
        );
        assert_eq!(WorkspaceEnv::default().path("/usr/bin"), None);
    }
}
