//! Re-grading a finished run from its kept workspace and recording, without running the
//! agent: users iterate on criteria this way.

use super::grade;
use super::output::{TaskResult, write_json_atomically};
use crate::components::ComponentSource;
use crate::replay::{ReplayOptions, replay_with_trajectory};
use crate::task::Task;
use std::path::{Path, PathBuf};

/// Why a run could not be re-graded.
#[derive(Debug, thiserror::Error)]
pub enum RegradeError {
    #[error("{path}: could not read the run's task.json")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: not a task.json this host understands")]
    Parse {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    #[error(transparent)]
    Task(#[from] crate::task::TaskError),
    #[error(transparent)]
    Replay(#[from] crate::replay::ReplayError),
    #[error("{path}: could not write")]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// Re-grades the run in `result_dir` (`<out>/<task_id>/<harness>`) with the task file
/// `task` (default: the one the run used). Returns the result as it was and as it is now;
/// with `write`, the new one replaces `task.json`.
pub async fn regrade(
    result_dir: &Path,
    task: Option<&Path>,
    components: &ComponentSource,
    write: bool,
) -> Result<(TaskResult, TaskResult), RegradeError> {
    let path = result_dir.join("task.json");
    let text = std::fs::read_to_string(&path).map_err(|source| RegradeError::Read {
        path: path.clone(),
        source,
    })?;
    let before: TaskResult = serde_json::from_str(&text).map_err(|source| RegradeError::Parse {
        path: path.clone(),
        source,
    })?;
    let task = Task::load(task.unwrap_or(Path::new(&before.task_file)))?;
    let mut options = ReplayOptions::new(&before.harness);
    options.components = components.clone();
    let (record, trajectory) =
        replay_with_trajectory(&result_dir.join(&before.paths.recording), &options)?;
    let workspace = result_dir.join(&before.paths.workspace);
    let verdict = grade::grade(&task, &workspace, &record, &trajectory).await;
    let mut after = before.clone();
    after.status = verdict.status;
    after.criteria = verdict.criteria;
    after.weighted_score = verdict.weighted_score;
    after.post_failure_criteria_results = verdict.post_failure;
    if write {
        write_json_atomically(&path, &after).map_err(|source| RegradeError::Write {
            path: path.clone(),
            source,
        })?;
    }
    Ok((before, after))
}
