//! The Pi harness: `pi -p --mode json --provider mock --model <model> --no-session <prompt>`.
//!
//! Stream format as of Pi (`@mariozechner/pi-coding-agent`) 0.73.1 (see
//! `shared/corpus/live/pi/`): one JSON object a line with `type` `session` (`id`),
//! `agent_start`, `turn_start` (one main-thread model call and its tool runs), `message_start`
//! / `message_update` / `message_end` (`message` with `role` `user`, `assistant` or
//! `toolResult`; assistant messages carry per-call `usage` `{input, output, cacheRead,
//! cacheWrite, cost: {total}}`, `stopReason`, `errorMessage`, `responseId`),
//! `tool_execution_start` / `tool_execution_update` / `tool_execution_end` (`toolCallId`,
//! `toolName`, `args`, `result`, `isError`), `turn_end` and `agent_end` (`messages`). Newer
//! versions add `agent_settled` after `agent_end`.
//!
//! `-p` is required: without it `--mode json` stays interactive after `agent_end` and never
//! exits (B22).

mod launch;
mod reducer;

pub use launch::{DEFAULT_MODEL, DEFAULT_TOOLS, Pi};
pub use reducer::PiReducer;

#[cfg(all(feature = "export", not(feature = "harness-v0-1")))]
harness_kit::export_harness!(Pi);
#[cfg(all(feature = "export", feature = "harness-v0-1"))]
harness_kit::export_harness_v0_1!(Pi);
