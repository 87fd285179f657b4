//! The Cline harness: `cline --json <prompt>` (act mode, auto-approve on by default).
//!
//! Stream format as of Cline 3.0.65 (`shared/corpus/live/cline/`, the recordings are
//! `tests/corpus/live/cline/`): one JSON object a line, each with `type` and `ts`:
//!
//! - `hook_event`: `hookEventName` (`agent_start`, `tool_call`, `tool_result`,
//!   `agent_end`), `agentId`, `taskId`, `parentAgentId`: the same facts as the
//!   `agent_event`s, which the reducer reads instead;
//! - `agent_event` with `event.type`:
//!   - `iteration_start` / `iteration_end` (`iteration`, `toolCallCount`): one model call
//!     and the tools it asked for;
//!   - `content_start` / `content_update` / `content_end` with `contentType`: `text`
//!     (`text`, `accumulated`) or `tool` (`toolName`, `toolCallId`, `input`; streamed
//!     output in `update`; `output` = `{result, success, error}` or a list of those for
//!     `run_commands`, and `durationMs`, at the end);
//!   - `usage`: the request's `inputTokens` / `outputTokens`, running `totalInputTokens`,
//!     `totalOutputTokens` and `totalCost`;
//!   - `done`: `reason`, `text`, `iterations`, `usage`;
//! - `run_result`: `finishReason`, `iterations`, `usage` / `aggregateUsage`
//!   `{inputTokens, outputTokens, cacheReadTokens, cacheWriteTokens, totalCost}`,
//!   `durationMs`, `text`, `model{id, provider}`.

mod launch;
mod reducer;

pub use launch::Cline;
pub use reducer::ClineReducer;

#[cfg(feature = "export")]
harness_kit::export_harness!(Cline);
