//! The Codex harness: `codex exec --json --skip-git-repo-check
//! --dangerously-bypass-approvals-and-sandbox <prompt>`, stdin closed.
//!
//! Stream format as of Codex 0.171.0 (see `shared/corpus/live/codex/`): one JSON object a
//! line with `type` `thread.started` (`thread_id`), `turn.started`, `item.started` /
//! `item.updated` / `item.completed` (an `item` with `id` and `type`: `agent_message`,
//! `reasoning`, `command_execution`, `file_change`, `mcp_tool_call`, `web_search`,
//! `todo_list`, `collab_tool_call`, `error`), `turn.completed` (`usage`, cumulative for the
//! thread), `turn.failed` (`error.message`) and a top-level `error` (`message`).
//!
//! The stream has no per-request event: [`CodexReducer`] derives the main-thread model-call
//! boundaries (see there). Codex reports no cost.
//!
//! # Free-form tool calls in `translate-action`
//!
//! Codex's `apply_patch` is a free-form ("custom") tool: its input is raw patch text, not a
//! JSON object. The WIT `tool-call` record only has `name` + `arguments-json`, so this
//! harness encodes a free-form call as `arguments-json` = a JSON **string** holding the raw
//! text (e.g. `"*** Begin Patch\n*** Add File: a.txt\n+x\n*** End Patch\n"`). The host's
//! scripted model maps a JSON-string `arguments-json` to a Responses `custom_tool_call`
//! item with that text as its `input`, and a JSON object to a `function_call`.

mod launch;
mod reducer;

pub use launch::{Codex, DEFAULT_MODEL, SANDBOX_MODES};
pub use reducer::CodexReducer;

#[cfg(all(feature = "export", not(feature = "harness-v0-1")))]
harness_kit::export_harness!(Codex);
#[cfg(all(feature = "export", feature = "harness-v0-1"))]
harness_kit::export_harness_v0_1!(Codex);
