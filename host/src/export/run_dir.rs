//! The runs of a run folder, each with its turn's events: what an export reads. Each
//! row of `run.json` names its `task.json`; its recording (and, in time-budget mode, each
//! later session's `recording.session-N.jsonl`) is replayed through the harness's reducer
//! to the same normalized events the live run saw.

use crate::components::ComponentSource;
use crate::results::{RunSummary, StampedEvent, TaskResult};
use crate::turn::replay::{ReplayOptions, replay_with_trajectory};
use std::path::{Path, PathBuf};

/// One run of a run folder.
#[derive(Debug)]
pub struct Unit {
    /// The folder holding its `task.json`.
    pub dir: PathBuf,
    pub result: TaskResult,
    /// Its turn's events in stream order; a later session's stamps continue after the
    /// earlier one's last (µs from the first session's start). Empty when no CLI ran.
    pub events: Vec<StampedEvent>,
    /// Wall-clock start of its (first) turn, ms since the Unix epoch, from the recording's
    /// header; absent for a recording that does not say, or no turn.
    pub started_unix_ms: Option<u64>,
}

/// Why a run folder, or one of its runs, cannot be exported.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// `run.json` or a `task.json` could not be read or parsed.
    #[error("{path}: {message}")]
    Read { path: PathBuf, message: String },
    /// A recording could not be replayed.
    #[error("{path}: cannot replay: {source}")]
    Replay {
        path: PathBuf,
        #[source]
        source: Box<crate::turn::replay::ReplayError>,
    },
}

/// The `task.json` paths `run.json` in `run_dir` lists, in its order.
pub fn units(run_dir: &Path) -> Result<Vec<PathBuf>, ExportError> {
    let path = run_dir.join("run.json");
    let text = std::fs::read_to_string(&path).map_err(|e| ExportError::Read {
        path: path.clone(),
        message: e.to_string(),
    })?;
    let summary: RunSummary = serde_json::from_str(&text).map_err(|e| ExportError::Read {
        path: path.clone(),
        message: format!("not a run.json coder-eval reads: {e}"),
    })?;
    summary
        .rows
        .iter()
        .map(|row| {
            inside(&row.result)
                .then(|| run_dir.join(&row.result))
                .ok_or_else(|| ExportError::Read {
                    path: path.clone(),
                    message: format!(
                        "row `{}/{}` names `{}`, which is not a path inside the run folder",
                        row.task_id, row.harness, row.result
                    ),
                })
        })
        .collect()
}

/// Whether `path` is relative and stays inside the folder it is joined to (no `..`).
fn inside(path: &str) -> bool {
    Path::new(path).components().all(|c| {
        matches!(
            c,
            std::path::Component::Normal(_) | std::path::Component::CurDir
        )
    })
}

/// Loads the run whose result is `task_json`, replaying its recordings with
/// `components` (the built-in reducers by default).
pub fn load(task_json: &Path, components: &ComponentSource) -> Result<Unit, ExportError> {
    let text = std::fs::read_to_string(task_json).map_err(|e| ExportError::Read {
        path: task_json.to_path_buf(),
        message: e.to_string(),
    })?;
    let result: TaskResult = serde_json::from_str(&text).map_err(|e| ExportError::Read {
        path: task_json.to_path_buf(),
        message: format!("not a task.json coder-eval reads: {e}"),
    })?;
    let dir = task_json
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let mut events = Vec::new();
    let mut started_unix_ms = None;
    if let Some(first) = &result.paths.recording {
        if !inside(first) {
            return Err(ExportError::Read {
                path: task_json.to_path_buf(),
                message: format!("paths.recording `{first}` is not a path inside the run's folder"),
            });
        }
        // A run that had a turn and lost its recording cannot be rebuilt: an error, not a
        // trajectory with only the prompt.
        if result.turn.is_some() && !dir.join(first).is_file() {
            return Err(ExportError::Read {
                path: dir.join(first),
                message: "missing: the run's recording is needed to export it".into(),
            });
        }
        let mut options = ReplayOptions::new(&result.harness);
        options.components = components.clone();
        let mut files = vec![dir.join(first)];
        files.extend(
            (2..)
                .map(|n| dir.join(format!("recording.session-{n}.jsonl")))
                .take_while(|p| p.is_file()),
        );
        // A later session's stamps move by its start's distance from the first session's
        // (the recordings' headers); without both starts, to just after the last event.
        let mut after_last_us = 0;
        for (index, file) in files.into_iter().filter(|f| f.is_file()).enumerate() {
            let session_start = crate::turn::recording::Reader::open(&file)
                .ok()
                .and_then(|r| r.header().and_then(|h| h.started_unix_ms));
            if index == 0 {
                started_unix_ms = session_start;
            }
            let (_, mut session) =
                replay_with_trajectory(&file, &options).map_err(|source| ExportError::Replay {
                    path: file.clone(),
                    source: Box::new(source),
                })?;
            let offset_us = match (started_unix_ms, session_start) {
                (Some(first), Some(this)) if events.is_empty() || this >= first => {
                    (this - first).saturating_mul(1000)
                }
                _ => after_last_us,
            };
            for e in &mut session {
                e.stamp_us = e.stamp_us.saturating_add(offset_us);
            }
            after_last_us = session.last().map_or(after_last_us, |e| e.stamp_us);
            events.append(&mut session);
        }
        // A recording that replays to none of the run's tool calls is not this run's.
        let started = events
            .iter()
            .filter(|e| matches!(e.event, harness_kit::Event::ToolCallStarted { .. }))
            .count();
        let recorded = result.turn.as_ref().map_or(0, |t| t.tool_calls.len());
        if recorded > 0 && started == 0 {
            return Err(ExportError::Read {
                path: dir.join(first),
                message: format!(
                    "replays to no tool call where the run recorded {recorded}: not this \
                     run's recording, or unreadable"
                ),
            });
        }
    }
    Ok(Unit {
        dir,
        result,
        events,
        started_unix_ms,
    })
}
