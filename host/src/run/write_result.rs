//! Writing a task's `task.json`: [`write_task_json`].

use super::error::RunError;
use crate::results::{TaskResult, TaskStatus, write_json_atomically};
use std::path::Path;

/// Writes `result` to `<dir>/task.json` (atomically: a reader sees the old file or the
/// whole new one), making `dir` first when it is missing. When the write fails (a full
/// disk, a folder made read-only), an earlier `task.json` in `dir` (an earlier attempt's,
/// or a previous run's in a reused folder) is removed, so no stale result is left to be
/// read as this run's, and `result` becomes status ERROR with error kind `write_result`
/// and an error naming the cause (what the caller reports: `run.json`, the progress line).
/// Removal is best-effort: a folder where even that fails keeps the file.
pub(crate) fn write_task_json(dir: &Path, result: &mut TaskResult) {
    let written = std::fs::create_dir_all(dir)
        .and_then(|()| write_json_atomically(&dir.join("task.json"), result));
    settle(dir, result, written);
}

/// What a write of `<dir>/task.json` that ended as `written` leaves: on an error, no
/// `task.json` and `result` an ERROR of kind `write_result`.
fn settle(dir: &Path, result: &mut TaskResult, written: std::io::Result<()>) {
    if let Err(err) = written {
        let _ = std::fs::remove_file(dir.join("task.json"));
        let error = RunError::WriteResult(err);
        result.status = TaskStatus::Error;
        result.error = Some(error.message());
        result.error_kind = Some(error.kind().to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_write_leaves_no_earlier_task_json_and_is_a_write_result_error() {
        let dir = std::env::temp_dir().join(format!("ce-write-result-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let task =
            crate::task::Task::parse("task_id: t\ninitial_prompt: hi\n", &dir.join("t.yaml"))
                .unwrap();
        let mut result = super::super::assemble::skipped(&task, "claude-code");
        // A good write: the file is there, the result unchanged.
        write_task_json(&dir, &mut result);
        assert!(dir.join("task.json").exists());
        assert_eq!(result.status, TaskStatus::Skipped);
        // A failed one (a full disk): the earlier file is gone.
        let full = std::io::Error::from_raw_os_error(28);
        settle(&dir, &mut result, Err(full));
        assert!(!dir.join("task.json").exists());
        assert_eq!(result.status, TaskStatus::Error);
        assert_eq!(result.error_kind.as_deref(), Some("write_result"));
        let error = result.error.as_deref().unwrap();
        assert!(error.starts_with("could not write task.json: "), "{error}");
        assert!(error.contains("No space left on device"), "{error}");
        std::fs::remove_dir_all(&dir).ok();
    }
}
