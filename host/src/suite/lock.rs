//! One coder-eval process at a time per results folder: a shard's folder (`run --plan
//! --shard`), a plain run's (`run --out`, `run --resume`), a merge's (`merge --out`). The lock is the kernel's
//! (`flock` on `<folder>/.shard.lock`): it goes with its process, so a run retried after
//! a crash or a SIGKILL takes it again, and no stale lock is ever left. `merge` asks
//! whether a shard folder is still being run into ([`holder`]).

use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};

pub use super::folders::{LOCK_FILE, OUTPUT_MARKER};

/// Why a run cannot take its folder.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error("{dir}: cannot create the folder or its lock file {LOCK_FILE}")]
    Io {
        dir: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// `doing`: what the holder does, as its lock file says ("is running a shard into
    /// this folder", a run, a merge; "holds this folder" when it does not say).
    /// `advice`: what the refused process may do instead.
    #[error("{dir}: another coder-eval process {doing} ({holder}); {advice}")]
    Busy {
        dir: PathBuf,
        doing: String,
        holder: String,
        advice: &'static str,
    },
}

/// Creates `dir` and takes its exclusive lock for a shard, held until the returned file
/// is dropped; refused ([`LockError::Busy`]) while another process holds it. The file
/// holds the holder's pid (for the message).
pub fn lock_folder(dir: &Path) -> Result<std::fs::File, LockError> {
    lock(dir, "shard", "give each shard process its own --out")
}

/// As [`lock_folder`], for a plain run's folder (`run --out DIR`, `run --resume DIR`).
pub fn lock_run_folder(dir: &Path) -> Result<std::fs::File, LockError> {
    lock(
        dir,
        "run",
        "wait for it to end (then `run --resume` it) or give another --out",
    )
}

/// As [`lock_folder`], for `merge`'s output folder (`merge --out DIR`).
pub fn lock_merge_folder(dir: &Path) -> Result<std::fs::File, LockError> {
    lock(
        dir,
        "merge",
        "wait for it to end (then merge again if need be) or give another --out",
    )
}

/// Takes `dir`'s lock for a `kind` ("shard", "run", "merge": written into the lock file
/// after the pid, so that a process refused says what holds the folder).
fn lock(dir: &Path, kind: &'static str, advice: &'static str) -> Result<std::fs::File, LockError> {
    let io = |source| LockError::Io {
        dir: dir.to_path_buf(),
        source,
    };
    std::fs::create_dir_all(dir).map_err(io)?;
    mark(dir).map_err(io)?;
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(dir.join(LOCK_FILE))
        .map_err(io)?;
    match file.try_lock() {
        Ok(()) => {}
        Err(std::fs::TryLockError::WouldBlock) => {
            let (holder, held_by) = read_holder(&mut file);
            return Err(LockError::Busy {
                dir: dir.to_path_buf(),
                doing: match held_by.as_deref() {
                    Some(kind @ ("shard" | "run" | "merge")) => {
                        format!("is running a {kind} into this folder")
                    }
                    // An older coder-eval's lock file holds the pid alone.
                    _ => "holds this folder".to_string(),
                },
                holder,
                advice,
            });
        }
        // A file system without locks (some NFS mounts): run unlocked, and say so.
        Err(std::fs::TryLockError::Error(e)) if lock_unsupported(&e) => {
            eprintln!(
                "warning: {}: the file system does not lock files ({e}): this folder is not \
                 guarded against a second process",
                dir.display()
            );
            return Ok(file);
        }
        Err(std::fs::TryLockError::Error(e)) => return Err(io(e)),
    }
    file.set_len(0)
        .and_then(|()| file.rewind())
        .and_then(|()| writeln!(file, "{} {kind}", std::process::id()))
        .map_err(io)?;
    Ok(file)
}

/// Writes [`OUTPUT_MARKER`] into `dir` unless it holds one.
pub fn mark(dir: &Path) -> std::io::Result<()> {
    let marker = dir.join(OUTPUT_MARKER);
    if marker.exists() {
        return Ok(());
    }
    std::fs::write(
        marker,
        "coder-eval writes its results into this folder (a run, a shard or a merge); \
         a task folder's digest leaves it out.\n",
    )
}

/// `pid N` from a lock file (`pid unknown` when it holds none), and the kind of process
/// it names after the pid (none in an older coder-eval's lock file).
fn read_holder(file: &mut std::fs::File) -> (String, Option<String>) {
    let mut text = String::new();
    let _ = file.rewind();
    let _ = file.read_to_string(&mut text);
    let mut words = text.split_whitespace();
    let pid = match words.next() {
        None => "pid unknown".to_string(),
        Some(pid) => format!("pid {pid}"),
    };
    (pid, words.next().map(str::to_string))
}

/// Who is running into `dir` right now (`pid N`): `None` when nobody holds its lock (or
/// it has none). Takes nothing: the lock is tried and let go at once.
pub fn holder(dir: &Path) -> Option<String> {
    let mut file = std::fs::File::open(dir.join(LOCK_FILE)).ok()?;
    match file.try_lock_shared() {
        Ok(()) => {
            let _ = file.unlock();
            None
        }
        Err(std::fs::TryLockError::WouldBlock) => Some(read_holder(&mut file).0),
        Err(std::fs::TryLockError::Error(_)) => None,
    }
}

/// Whether `e` says the file system cannot lock (`ENOLCK`, `EOPNOTSUPP`, `ENOSYS`).
fn lock_unsupported(e: &std::io::Error) -> bool {
    e.kind() == std::io::ErrorKind::Unsupported
        || matches!(
            e.raw_os_error(),
            Some(libc::ENOLCK | libc::EOPNOTSUPP | libc::ENOSYS)
        )
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_held_folder_is_refused_and_named_and_free_once_let_go() {
        let dir = tempfile::tempdir().unwrap();
        let held = super::lock_run_folder(dir.path()).unwrap();
        assert_eq!(
            super::holder(dir.path()),
            Some(format!("pid {}", std::process::id()))
        );
        // flock locks belong to the open file: a second open in this process conflicts
        // as another process's would.
        let err = super::lock_run_folder(dir.path()).unwrap_err().to_string();
        assert!(
            err.contains("another coder-eval process is running a run into this folder")
                && err.contains(&format!("pid {}", std::process::id())),
            "{err}"
        );
        drop(held);
        assert_eq!(super::holder(dir.path()), None);
        assert!(super::lock_folder(dir.path()).is_ok());
    }

    #[test]
    fn a_refused_process_is_told_what_holds_the_folder_not_what_it_wanted() {
        let dir = tempfile::tempdir().unwrap();
        let held = super::lock_run_folder(dir.path()).unwrap();
        for err in [
            super::lock_folder(dir.path()).unwrap_err(),
            super::lock_merge_folder(dir.path()).unwrap_err(),
        ] {
            let err = err.to_string();
            assert!(
                err.contains("another coder-eval process is running a run into this folder"),
                "{err}"
            );
        }
        drop(held);
        // An older lock file (the pid alone) names no kind.
        std::fs::write(dir.path().join(super::LOCK_FILE), "12345\n").unwrap();
        let file = std::fs::File::open(dir.path().join(super::LOCK_FILE)).unwrap();
        file.lock().unwrap();
        let err = super::lock_folder(dir.path()).unwrap_err().to_string();
        assert!(
            err.contains("another coder-eval process holds this folder (pid 12345)"),
            "{err}"
        );
    }
}
