//! The run folder: made, locked for this process, and a note when it already holds a run.

use super::{Flow, refused, usage};
use std::fs::File;
use std::path::Path;

/// Makes `out_dir` and locks it for this run (`lock`: a shard's folder, already locked);
/// returns the lock, held until the run ends. Notes an earlier run in the folder unless
/// this run keeps its units (`resumed`). Refuses (exit 2) a folder that cannot be made
/// or is busy.
pub(super) fn claim(out_dir: &Path, lock: Option<File>, resumed: bool) -> Flow<File> {
    if let Err(err) = std::fs::create_dir_all(out_dir) {
        return usage(format!("{}: {err}", out_dir.display()));
    }
    // One process at a time per run folder, as per shard folder (a second `run --out` or
    // `--resume` into it would interleave).
    let lock = match lock {
        Some(lock) => lock,
        None => match coder_eval::suite::lock::lock_run_folder(out_dir) {
            Ok(lock) => lock,
            Err(err) => return refused(&err),
        },
    };
    // Only once the folder is this run's (locked), and not when the run keeps the earlier
    // units (`--resume`, a shard run again into its folder).
    if !resumed && out_dir.join("run.json").exists() {
        eprintln!(
            "note: {} already holds a run; run.json, junit.xml and report.html will list this \
             run's tasks only (the folders of earlier tasks stay, a task run again is replaced)",
            out_dir.display()
        );
    }
    Ok(lock)
}
