//! Finding an agent CLI: `--cli PATH`, else the project's pinned install
//! (`harnesses/node_modules/.bin`, installed by `scripts/setup.sh`; which `harnesses/`:
//! [`harnesses_dir`]), else `PATH`; and whether a file can be started ([`executable`]).
//! Asked by the task loader (is a criterion's program installed), the turn (the CLI to
//! spawn) and the run (`run::probe` then asks the CLI's version).

use std::path::{Path, PathBuf};

/// The pinned install folder, the first of: `$CODER_EVAL_HARNESSES`; the nearest
/// `harnesses/` holding a `node_modules` above the current folder (a checkout the user
/// works in); the nearest above this binary (a checkout's `target/`, or a copy of the
/// binary placed in one); the `harnesses/` of the source tree this binary was built from.
/// A binary copied elsewhere so still finds the checkout it is run in, not only the one it
/// was built in (which may be gone).
pub fn harnesses_dir() -> PathBuf {
    let dir = pick_harnesses_dir(
        std::env::var_os("CODER_EVAL_HARNESSES").map(PathBuf::from),
        std::env::current_dir().ok().as_deref(),
        std::env::current_exe().ok().as_deref(),
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../harnesses"),
    );
    dir.canonicalize().unwrap_or(dir)
}

/// [`harnesses_dir`]'s choice, from its inputs.
fn pick_harnesses_dir(
    from_env: Option<PathBuf>,
    cwd: Option<&Path>,
    exe: Option<&Path>,
    built_from: &Path,
) -> PathBuf {
    if let Some(dir) = from_env {
        return dir;
    }
    let installed = |start: &Path| {
        start
            .ancestors()
            .map(|a| a.join("harnesses"))
            .find(|h| h.join("node_modules").is_dir())
    };
    cwd.and_then(installed)
        .or_else(|| exe.and_then(installed))
        .unwrap_or_else(|| built_from.to_path_buf())
}

/// The CLI was not found.
#[derive(Debug, thiserror::Error)]
#[error(
    "the `{program}` CLI was not found (looked in {pinned} and on PATH); install the pinned \
     CLIs with `npm install --no-save --prefix {dir}` (what scripts/setup.sh does), or pass \
     --cli PATH"
)]
pub struct CliMissing {
    pub program: String,
    pub pinned: String,
    pub dir: String,
}

/// Where `program` (`argv[0]` of a launch plan) is, by the order in the module docs.
pub fn find_cli(program: &str, override_path: Option<&Path>) -> Result<PathBuf, CliMissing> {
    if let Some(path) = override_path {
        // Absolute: the CLI starts in the task's workspace, not in the caller's folder.
        return Ok(std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf()));
    }
    let pinned = harnesses_dir().join("node_modules/.bin").join(program);
    if pinned.exists() {
        return Ok(pinned);
    }
    if let Some(path) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&path) {
            let candidate = dir.join(program);
            if candidate.is_file() {
                return Ok(candidate);
            }
        }
    }
    Err(CliMissing {
        program: program.to_string(),
        pinned: pinned.display().to_string(),
        dir: harnesses_dir().display().to_string(),
    })
}

/// Whether `program` can be found (for "every installed harness").
pub fn is_installed(program: &str) -> bool {
    find_cli(program, None).is_ok()
}

/// `Ok` when `path` is a file with an execute permission bit; else why not.
pub fn executable(path: &std::path::Path) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    let meta = std::fs::metadata(path).map_err(|e| e.to_string())?;
    if !meta.is_file() {
        return Err("not a file".to_string());
    }
    let mode = meta.permissions().mode();
    if mode & 0o111 == 0 {
        return Err(format!("mode {:o}, no execute permission", mode & 0o7777));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_harnesses_folder_is_the_one_of_the_checkout_in_use() {
        let root = std::env::temp_dir().join(format!("coder-eval-locate-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let (checkout, other) = (root.join("checkout"), root.join("other"));
        for c in [&checkout, &other] {
            std::fs::create_dir_all(c.join("harnesses/node_modules/.bin")).unwrap();
            std::fs::create_dir_all(c.join("tasks/deep")).unwrap();
        }
        let gone = root.join("built-here-then-removed/harnesses");
        let exe = other.join("target/debug/coder-eval");
        // Run inside a checkout: its harnesses, whatever the binary's origin.
        let picked =
            pick_harnesses_dir(None, Some(&checkout.join("tasks/deep")), Some(&exe), &gone);
        assert_eq!(picked, checkout.join("harnesses"));
        // Run elsewhere: the checkout the binary sits in.
        let picked = pick_harnesses_dir(None, Some(&root), Some(&exe), &gone);
        assert_eq!(picked, other.join("harnesses"));
        // Neither: the source tree it was built from (named in the not-found message).
        let picked = pick_harnesses_dir(None, Some(&root), Some(Path::new("/usr/bin/x")), &gone);
        assert_eq!(picked, gone);
        // The variable wins.
        let picked = pick_harnesses_dir(Some(root.join("mine")), Some(&checkout), None, &gone);
        assert_eq!(picked, root.join("mine"));
        std::fs::remove_dir_all(&root).unwrap();
    }
}
