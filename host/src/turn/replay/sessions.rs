//! A time-budget run's sessions, replayed as one: the first session's recording
//! (`recording.jsonl`) and its continuations beside it (`recording.session-2.jsonl`, …,
//! `run::sessions` names them), each through its own reducer instance, as the live run
//! reduced them. The trajectories join as the live run joined them: each continuation's
//! stamps moved by its start's offset from the first session's (its header's
//! `session.offset_us`).

use super::{ReplayError, ReplayOptions, run};
use crate::results::{StampedEvent, TurnRecord};
use crate::turn::recording::read_header;
use std::path::{Path, PathBuf};

/// One session of a replayed run.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ReplayedSession {
    /// 1-based, as `time_budget.sessions[].index`.
    pub index: u32,
    /// Its recording.
    pub recording: PathBuf,
    /// Its turn record (the last session's is `task.json`'s `turn`).
    pub turn: TurnRecord,
}

/// The recordings of the run whose first recording is `path`: `path` itself, then each
/// `recording.session-N.jsonl` beside it (N = 2, 3, … while they exist) when `path` is
/// named `recording.jsonl`. A single recording (any other run) gives just `path`.
pub fn session_recordings(path: &Path) -> Vec<PathBuf> {
    let mut files = vec![path.to_path_buf()];
    if path.file_name().and_then(|n| n.to_str()) != Some("recording.jsonl") {
        return files;
    }
    let dir = path.parent().unwrap_or(Path::new("."));
    for n in 2.. {
        let next = dir.join(format!("recording.session-{n}.jsonl"));
        if !next.is_file() {
            break;
        }
        files.push(next);
    }
    files
}

/// Replays every session of the run whose first recording is `path` (see
/// [`session_recordings`]): each session's turn record, in order, and, when
/// `keep_trajectory`, the run's joined trajectory (the criteria's input, stamps from the
/// first session's start). Errors: as [`super::replay`], for the first recording that
/// fails.
pub fn replay_sessions(
    path: &Path,
    options: &ReplayOptions,
    keep_trajectory: bool,
) -> Result<(Vec<ReplayedSession>, Vec<StampedEvent>), ReplayError> {
    let files = session_recordings(path);
    let first_unix_ms = read_header(path)?.and_then(|h| h.started_unix_ms);
    let mut sessions = Vec::with_capacity(files.len());
    let mut trajectory = Vec::new();
    for (i, file) in files.into_iter().enumerate() {
        let (turn, events) = run(&file, options, keep_trajectory)?;
        let offset_us = if i == 0 {
            0
        } else {
            let header = read_header(&file)?;
            let recorded = header
                .as_ref()
                .and_then(|h| h.session.and_then(|s| s.offset_us));
            // A recording made before the offset was written: its wall-clock start less
            // the first one's (ms), else none.
            recorded.unwrap_or_else(|| {
                match (first_unix_ms, header.and_then(|h| h.started_unix_ms)) {
                    (Some(a), Some(b)) => b.saturating_sub(a) * 1000,
                    _ => 0,
                }
            })
        };
        trajectory.extend(events.into_iter().map(|mut e| {
            e.stamp_us += offset_us;
            e
        }));
        sessions.push(ReplayedSession {
            index: i as u32 + 1,
            recording: file,
            turn,
        });
    }
    Ok((sessions, trajectory))
}
