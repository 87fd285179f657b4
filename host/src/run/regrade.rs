//! Re-grading a finished run from its kept workspace and recording, without running the
//! agent: users iterate on criteria this way.

use super::verdict;
use crate::components::ComponentSource;
use crate::results::{RunSummary, TaskResult, write_json_atomically};
use crate::task::Task;
use crate::turn::replay::{ReplayError, ReplayOptions, replay_sessions};
use std::path::{Path, PathBuf};

/// Why a run could not be re-graded.
#[derive(Debug, thiserror::Error)]
pub enum RegradeError {
    /// A file of the run could not be read.
    #[error("{path}: could not read the run's task.json")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A file of the run is not what this host writes.
    #[error("{path}: not a task.json this host understands")]
    Parse {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    /// The task file was rejected.
    #[error(transparent)]
    Task(#[from] crate::task::TaskError),
    /// The recording could not be replayed.
    #[error(transparent)]
    Replay(Box<ReplayError>),
    /// The task file names another task than the run's.
    #[error(
        "{task_file}: this task file is for task `{file_task}`, but the run in {run_dir} is \
         task `{run_task}`; grade it with its own task file (or an edited copy that keeps \
         its task_id)"
    )]
    TaskMismatch {
        task_file: PathBuf,
        file_task: String,
        run_task: String,
        run_dir: PathBuf,
    },
    /// A result could not be written.
    #[error("{path}: could not write")]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// Re-grades the run in `result_dir` (`<out>/<task_id>/<harness>`) with the task file
/// `task` (default: the one the run used). Returns the result as it was and as it is now
/// (whose `task_file` names the task file that graded it); with `write`, the new one
/// replaces `task.json` and its row in the suite's `run.json`. Judges get the host
/// variables named in `judge_env`.
pub async fn regrade(
    result_dir: &Path,
    task: Option<&Path>,
    components: &ComponentSource,
    judge_env: &[String],
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
    let task_file = task.unwrap_or(Path::new(&before.task_file));
    // A dataset row is one task of its file: the one with the run's id.
    let task = match &before.row {
        Some(_) => Task::load_id(task_file, &before.task_id)?,
        None => Task::load(task_file)?,
    };
    if task.task_id != before.task_id {
        return Err(RegradeError::TaskMismatch {
            task_file: task.path.clone(),
            file_task: task.task_id.clone(),
            run_task: before.task_id.clone(),
            run_dir: result_dir.to_path_buf(),
        });
    }
    let mut options = ReplayOptions::new(&before.harness);
    options.components = components.clone();
    // A time-budget run's sessions, all of them (its criteria judged every session's
    // events, its `turn` is the last session's); any other run's one recording.
    let (sessions, trajectory) = replay_sessions(
        &result_dir.join(
            before
                .paths
                .recording
                .as_deref()
                .unwrap_or("recording.jsonl"),
        ),
        &options,
        true,
    )
    .map_err(|e| RegradeError::Replay(Box::new(e)))?;
    let record = sessions
        .into_iter()
        .last()
        .expect("one session at least")
        .turn;
    let workspace = result_dir.join(before.paths.workspace.as_deref().unwrap_or("workspace"));
    let mut run_options = super::RunOptions::new(result_dir.to_path_buf());
    run_options.components = components.clone();
    run_options.judge_env = judge_env.to_vec();
    let judges = verdict::Judges::new(&run_options, result_dir, &task);
    // The reference the run staged, else staged now from the task file (an older run).
    let reference = match &before.paths.reference {
        Some(rel) => Some(result_dir.join(rel)),
        None => crate::workspace::stage_reference(&task, result_dir)
            .ok()
            .flatten(),
    };
    let env = verdict::Env {
        reference_dir: reference.as_deref(),
        path: None,
        // The run's container is gone: a docker task's commands are graded on the host.
        container: None,
    };
    let verdict = verdict::grade(&task, &workspace, &record, &trajectory, &judges, env).await;
    let mut after = before.clone();
    after.task_file = task.path.display().to_string();
    after.status = verdict.status;
    after.criteria = verdict.criteria;
    after.weighted_score = verdict.weighted_score;
    after.post_failure_criteria_results = verdict.post_failure;
    after.armed_gate = verdict.armed_gate;
    if write {
        write_json_atomically(&path, &after).map_err(|source| RegradeError::Write {
            path: path.clone(),
            source,
        })?;
        update_run_summary(result_dir, &after, &task)?;
    }
    Ok((before, after))
}

/// Keeps the suite's `run.json` (in the run's folder: `[<variant>/]<task_id>/<harness>[/rNN]`
/// is the result folder, so as many folders up as that has parts; the row of the same
/// variant and replicate; its `statistics`, replicates asked for kept), its
/// `suite_thresholds` (judged again over every row's `task.json`, with the criteria of
/// each row's task file; `task` for the re-graded one), its `junit.xml` and its
/// `report.html` in step with a rewritten `task.json`.
fn update_run_summary(
    result_dir: &Path,
    after: &TaskResult,
    task: &Task,
) -> Result<(), RegradeError> {
    let unit = crate::suite::unit_of(after);
    let levels = unit.rel_dir().components().count();
    let Some(run_json) = result_dir
        .ancestors()
        .nth(levels)
        .map(|d| d.join("run.json"))
        .filter(|p| p.exists())
    else {
        return Ok(());
    };
    let text = std::fs::read_to_string(&run_json).map_err(|source| RegradeError::Read {
        path: run_json.clone(),
        source,
    })?;
    let mut summary: RunSummary =
        serde_json::from_str(&text).map_err(|source| RegradeError::Parse {
            path: run_json.clone(),
            source,
        })?;
    for row in &mut summary.rows {
        if row.task_id == after.task_id
            && row.harness == after.harness
            && row.variant == after.variant
            && row.replicate == after.replicate
        {
            row.status = after.status;
            row.weighted_score = after.weighted_score;
        }
    }
    let suite_dir = run_json.parent().unwrap_or(Path::new(".")).to_path_buf();
    let mut results = Vec::new();
    for row in &summary.rows {
        let path = suite_dir.join(&row.result);
        let text = std::fs::read_to_string(&path).map_err(|source| RegradeError::Read {
            path: path.clone(),
            source,
        })?;
        results.push(
            serde_json::from_str::<TaskResult>(&text)
                .map_err(|source| RegradeError::Parse { path, source })?,
        );
    }
    let thresholds_now = task
        .success_criteria
        .iter()
        .any(|c| c.suite_thresholds.is_some());
    if !summary.suite_thresholds.is_empty() || thresholds_now {
        // Kept as they were when a row's task file no longer loads.
        if let Some(criteria) = criteria_of(&results, task) {
            summary.suite_thresholds = super::thresholds::suite_verdicts(&results, &criteria);
        }
    }
    if !summary.statistics.is_empty() {
        // Asked for: what the rows hold, or more when the run left some missing.
        let mut expected = crate::suite::expected(
            results
                .iter()
                .map(crate::suite::unit_of)
                .collect::<Vec<_>>()
                .iter(),
        );
        for v in &summary.statistics {
            for t in &v.per_task {
                let n = expected
                    .entry((v.variant.clone(), t.task_id.clone()))
                    .or_default();
                *n = (*n).max(t.replicates);
            }
        }
        summary.statistics = crate::suite::statistics(&results, &expected);
    }
    write_json_atomically(&run_json, &summary).map_err(|source| RegradeError::Write {
        path: run_json.clone(),
        source,
    })?;
    // junit.xml and report.html are rebuilt from every task.json of the suite.
    crate::run::write_suite_reports(&suite_dir, &results, &summary.suite_thresholds).map_err(
        |source| RegradeError::Write {
            path: suite_dir.clone(),
            source,
        },
    )
}

/// Each result's criteria, from its task file (each file loaded once); `task` stands for
/// its own id. `None` when a task file no longer loads or lost the task.
fn criteria_of(results: &[TaskResult], task: &Task) -> Option<super::thresholds::CriteriaByTask> {
    let mut files: std::collections::BTreeMap<&str, Vec<Task>> = Default::default();
    let mut criteria = super::thresholds::CriteriaByTask::new();
    for r in results {
        if r.task_id == task.task_id {
            criteria.insert(r.task_id.clone(), task.success_criteria.clone());
            continue;
        }
        if !files.contains_key(r.task_file.as_str()) {
            let loaded = Task::load_file(Path::new(&r.task_file)).ok()?;
            files.insert(&r.task_file, loaded.tasks);
        }
        let found = files[r.task_file.as_str()]
            .iter()
            .find(|t| t.task_id == r.task_id)?;
        criteria.insert(r.task_id.clone(), found.success_criteria.clone());
    }
    Some(criteria)
}
