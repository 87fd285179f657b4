//! The OpenCode harness: `opencode run --format json -m <provider>/<model> <prompt>`.
//!
//! Stream format as of OpenCode 1.18.33 (see `shared/corpus/live/opencode/`): one JSON
//! object a line, `{"type", "timestamp" (ms since the epoch, the CLI's clock), "sessionID"
//! (the run's session), "part" | "error"}`, with `type`
//!
//! - `step_start`: one model call begins (`part.messageID` = the assistant message of the
//!   step, `part.sessionID` = the session the step belongs to);
//! - `text` / `reasoning`: a finished text or reasoning part of the step's message;
//! - `tool_use`: a tool part, emitted once it is `completed` or `error` (`part.callID`,
//!   `part.tool`, `part.state.{status, input, output, error, metadata}`);
//! - `step_finish`: the model call ended (`part.reason`, `part.tokens`, `part.cost` in USD);
//! - `error`: a session error (`error.name`, `error.data.message`);
//! - `done` (newer versions only): the session went idle.
//!
//! There is no final result line, no model id and no user prompt in the stream (B31).

mod launch;

pub use harness_kit::streams::opencode::OpenCodeReducer;
pub use launch::OpenCode;

#[cfg(all(feature = "export", not(feature = "harness-v0-1")))]
harness_kit::export_harness!(OpenCode);
#[cfg(all(feature = "export", feature = "harness-v0-1"))]
harness_kit::export_harness_v0_1!(OpenCode);
