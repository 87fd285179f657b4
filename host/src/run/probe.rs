//! An agent CLI's version, as a run records it ([`cli_version`]): known without starting
//! the CLI when it can be (`super::version`), else its `--version` probed. Finding the
//! CLI is [`crate::locate`]'s.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

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
