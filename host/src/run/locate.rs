//! Finding an agent CLI: `--cli PATH`, else the project's pinned install
//! (`harnesses/node_modules/.bin`, installed by `scripts/setup.sh`; which `harnesses/`:
//! [`harnesses_dir`]), else `PATH`.

pub use super::version::executable;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

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

/// The most of a `--version` line kept (characters): the version goes to the harness's
/// `totals` call and into every record, and a CLI (or a stand-in) may print anything.
const MAX_VERSION_CHARS: usize = 200;

fn first_chars(text: &str, n: usize) -> String {
    text.chars().take(n).collect()
}

/// The CLI's version, cached per path for the process: its npm package's manifest, else
/// an earlier run's probe of the same file, else the first line of its `--version`
/// (`super::version`; the probe's answer is cached across runs).
///
/// The probe runs with the turn's minimal environment and a private, empty `HOME` (removed
/// after); it leads a process group of its own, and that group is killed once the probe
/// has answered, its time ([`crate::limits::CLI_VERSION_TIMEOUT`]) is up or the host is
/// interrupted (`crate::interrupt`): nothing it started outlives it.
pub async fn cli_version(path: &Path) -> Option<String> {
    static CACHE: Mutex<Option<HashMap<PathBuf, Option<String>>>> = Mutex::new(None);
    if let Some(v) = CACHE.lock().unwrap().get_or_insert_default().get(path) {
        return v.clone();
    }
    let cache_dir = super::version::default_cache_dir();
    let known = super::version::from_manifest(path).or_else(|| {
        cache_dir
            .as_deref()
            .and_then(|dir| super::version::cached(path, dir))
    });
    if let Some(version) = known {
        CACHE
            .lock()
            .unwrap()
            .get_or_insert_default()
            .insert(path.to_path_buf(), Some(version.clone()));
        return Some(version);
    }
    if crate::interrupt::raised().is_some() {
        return None;
    }
    let home = tempfile::Builder::new()
        .prefix("coder-eval-version-home-")
        .tempdir()
        .ok();
    let mark = crate::process::new_mark();
    let mut command = tokio::process::Command::new(path);
    command.env_clear();
    if let Some(home) = &home {
        command.envs(super::version::probe_env(path, home.path()));
    }
    let child = command
        .arg("--version")
        .env(crate::process::MARK_VAR, &mark)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .process_group(0)
        .kill_on_drop(true)
        .spawn();
    let out = match child {
        Ok(child) => {
            let group = child.id();
            // A second interrupt kills the probe's group too, before the host exits.
            let _live = group.map(|g| crate::process::LiveGroup::register(g as i32, &mark));
            // The probe's time is up, or the host is interrupted: either way its group goes.
            let out = tokio::select! {
                out = tokio::time::timeout(
                    crate::limits::CLI_VERSION_TIMEOUT,
                    child.wait_with_output(),
                ) => out.ok(),
                _ = crate::interrupt::wait() => None,
            };
            if let Some(group) = group {
                // SAFETY: killpg has no memory effects; the group is the probe's own.
                unsafe { libc::killpg(group as libc::pid_t, libc::SIGKILL) };
            }
            out
        }
        Err(e) => Some(Err(e)),
    };
    let interrupted = crate::interrupt::raised().is_some();
    let version = match out {
        Some(Ok(out)) if out.status.success() => String::from_utf8_lossy(&out.stdout)
            .lines()
            .next()
            .map(|l| first_chars(l.trim(), MAX_VERSION_CHARS)),
        _ => None,
    };
    drop(home);
    // An answer cut short by an interrupt is not the CLI's answer: not cached.
    if let (false, Some(version), Some(dir)) = (interrupted, &version, &cache_dir) {
        super::version::remember(path, dir, version);
    }
    if !interrupted {
        CACHE
            .lock()
            .unwrap()
            .get_or_insert_default()
            .insert(path.to_path_buf(), version.clone());
    }
    version
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

    /// Processes whose command line holds `marker`.
    fn processes_with(marker: &str) -> usize {
        std::fs::read_dir("/proc")
            .unwrap()
            .filter_map(|e| std::fs::read(e.ok()?.path().join("cmdline")).ok())
            .filter(|c| String::from_utf8_lossy(c).contains(marker))
            .count()
    }

    #[tokio::test]
    async fn the_version_probe_leaves_nothing_running() {
        let dir = std::env::temp_dir().join(format!("coder-eval-probe-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let marker = format!("ce-probe-leftover-{}", std::process::id());
        let cli = dir.join("cli");
        std::fs::write(
            &cli,
            format!(
                "#!/bin/bash\n(exec -a {marker} sleep 300) >/dev/null 2>&1 &\nsleep 0.3\necho fake-cli 1.2.3\n"
            ),
        )
        .unwrap();
        std::fs::set_permissions(&cli, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        assert_eq!(cli_version(&cli).await.as_deref(), Some("fake-cli 1.2.3"));
        // The background child was alive when the probe answered (it sleeps 300 s); the
        // probe's group is killed after the answer.
        for _ in 0..50 {
            if processes_with(&marker) == 0 {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        assert_eq!(processes_with(&marker), 0, "the probe's child outlived it");
        std::fs::remove_dir_all(&dir).ok();
    }
}
