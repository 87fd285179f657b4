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
        source: crate::turn::replay::ReplayError,
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
    Ok(summary
        .rows
        .iter()
        .map(|row| run_dir.join(&row.result))
        .collect())
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
        started_unix_ms = crate::turn::recording::Reader::open(&dir.join(first))
            .ok()
            .and_then(|r| r.header().and_then(|h| h.started_unix_ms));
        let mut options = ReplayOptions::new(&result.harness);
        options.components = components.clone();
        let mut files = vec![dir.join(first)];
        files.extend(
            (2..)
                .map(|n| dir.join(format!("recording.session-{n}.jsonl")))
                .take_while(|p| p.is_file()),
        );
        let mut offset_us = 0;
        for file in files.into_iter().filter(|f| f.is_file()) {
            let (_, mut session) =
                replay_with_trajectory(&file, &options).map_err(|source| ExportError::Replay {
                    path: file.clone(),
                    source,
                })?;
            for e in &mut session {
                e.stamp_us += offset_us;
            }
            offset_us = session.last().map_or(offset_us, |e| e.stamp_us);
            events.append(&mut session);
        }
    }
    Ok(Unit {
        dir,
        result,
        events,
        started_unix_ms,
    })
}
