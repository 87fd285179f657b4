//! `replay`: a recording (or a plain stdout capture) through a harness's reducer to a turn
//! record. Deterministic: the reducer is a pure function of the lines and their stamps,
//! and the collector of the events, so the same input gives byte-identical output.

use crate::collect::{Caps, TurnEnd};
use crate::components::{ComponentSource, ResolveError};
use crate::pipeline::{DEFAULT_MAX_LINE_BYTES, Pipeline};
use crate::record::{StampedEvent, TurnRecord};
use crate::recording::{self, RecordingError};
use crate::runtime::ComponentError;
use std::path::Path;

/// What to replay with.
#[derive(Debug, Clone)]
pub struct ReplayOptions {
    /// The harness whose reducer reads the stream (e.g. `claude-code`).
    pub harness: String,
    /// Replacement components.
    pub components: ComponentSource,
    /// Caps to judge the run by; `None` = the recording header's (none for a capture).
    pub caps: Option<Caps>,
    /// Per-line cap in bytes.
    pub max_line_bytes: usize,
}

impl ReplayOptions {
    /// Replay with the built-in (or `--components`) reducer of `harness`.
    pub fn new(harness: &str) -> ReplayOptions {
        ReplayOptions {
            harness: harness.to_string(),
            components: ComponentSource::default(),
            caps: None,
            max_line_bytes: DEFAULT_MAX_LINE_BYTES,
        }
    }
}

/// Why a replay could not produce a record at all. (A reducer failing mid-stream is not
/// one of these: the record says so in `reducer_error`.)
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    #[error(transparent)]
    Recording(#[from] RecordingError),
    #[error(transparent)]
    Resolve(#[from] ResolveError),
    #[error(transparent)]
    Component(#[from] ComponentError),
}

/// Replays `path` (see [`recording`] for the formats).
pub fn replay(path: &Path, options: &ReplayOptions) -> Result<TurnRecord, ReplayError> {
    replay_with_trajectory(path, options).map(|(record, _)| record)
}

/// [`replay`], also returning the trajectory (for re-grading a kept run).
pub fn replay_with_trajectory(
    path: &Path,
    options: &ReplayOptions,
) -> Result<(TurnRecord, Vec<StampedEvent>), ReplayError> {
    let input = recording::read(path)?;
    let loaded = options.components.harness(&options.harness)?;
    let caps = options.caps.unwrap_or_else(|| {
        input.header.as_ref().map_or(Caps::default(), |h| Caps {
            max_turns: h.max_turns,
            max_tool_calls: h.max_tool_calls,
        })
    });
    let mut pipeline =
        Pipeline::new(&options.harness, &loaded, caps)?.with_max_line_bytes(options.max_line_bytes);
    for (line, problem) in &input.problems {
        pipeline.host_diagnostic(*line, 0, "recording_unreadable", problem.clone());
    }
    let stop_after = input.stop.as_ref().map(|s| s.after_lines);
    // Held calls and the stop, at the place among the lines where the live run met them.
    let at = |pipeline: &mut Pipeline, i: usize| {
        for held in input.held_calls.iter().filter(|h| h.after_lines == i) {
            pipeline.held_call(held.stamp_us);
        }
        if stop_after == Some(i) {
            pipeline.freeze();
        }
    };
    for (i, line) in input.lines.iter().enumerate() {
        at(&mut pipeline, i);
        pipeline.feed(line.source_line, line.stamp_us, &line.bytes);
    }
    at(&mut pipeline, input.lines.len());
    let truncated = input
        .truncated
        .as_ref()
        .map(|t| (t.source_line, t.stamp_us, t.bytes.as_slice()));
    let end = TurnEnd {
        end_us: input.end_us(),
        exit: input.exit,
        timed_out: input
            .stop
            .as_ref()
            .is_some_and(|s| s.reason.ends_with("_timeout")),
        ..Default::default()
    };
    Ok(pipeline.finish_with_trajectory(truncated, end))
}
