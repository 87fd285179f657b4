//! The GitHub Copilot CLI harness: `copilot -p <prompt> --output-format json --allow-all`
//! against a BYOK provider (`COPILOT_PROVIDER_*`), offline (`COPILOT_OFFLINE=true`).
//!
//! Stream format as of Copilot CLI 1.0.102 (`shared/corpus/live/copilot/`, the recordings
//! are `tests/corpus/live/copilot/`): one JSON object a line, each with a dotted `type`,
//! and `data`, `id`, `timestamp`, `parentId` (the final `result` line has no `data`):
//!
//! - `session.skills_loaded`, `session.mcp_servers_loaded`, `session.tools_updated`
//!   (`data.model`), `session.info`, `session.background_tasks_changed`, `user.message`:
//!   set-up and bookkeeping;
//! - `assistant.turn_start` / `assistant.turn_end` (`data.turnId`): one model request and
//!   the tools it asked for; `model.call_start`, `model.call_finished` (`outcome`),
//!   `model.call_final_result`;
//! - `assistant.message_start`, `assistant.message_delta` (`deltaContent`),
//!   `assistant.tool_call_delta` (`toolCallId`, `toolName`, `inputDelta`): the reply as it
//!   streams; `assistant.message` (`messageId`, `content`, `toolRequests[]`): the whole reply;
//! - `tool.execution_start` (`toolCallId`, `toolName`, `arguments`),
//!   `tool.shell_output`, `tool.execution_partial_result`, and `tool.execution_complete`
//!   (`success`, `shellExecution.exitCode`, `result.content`, `error`);
//! - `assistant.idle`; `result` (`sessionId`, `exitCode`, `usage{premiumRequests,
//!   totalApiDurationMs, sessionDurationMs, codeChanges}`).
//!
//! Tokens are **not** in the stream: `--usage-output-file F` writes them after the run
//! (`modelMetrics[model].usage{inputTokens, outputTokens, cacheReadTokens,
//! cacheWriteTokens}`), which the plan names as a side file.

mod launch;
mod reducer;

pub use launch::{Copilot, USAGE_FILE};
pub use reducer::CopilotReducer;

#[cfg(feature = "export")]
harness_kit::export_harness!(Copilot);
