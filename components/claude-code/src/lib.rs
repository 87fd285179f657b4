//! The Claude Code harness: `claude -p <prompt> --output-format stream-json --verbose`.
//!
//! Stream format as of Claude Code 2.1.197 and 2.1.332 (see `tests/corpus/live/claude/`;
//! 2.1.332 adds fields, no line type, and `system` `task_started` / `task_notification`
//! around a Bash command it runs): one JSON
//! object a line with `type` `system` (`init`, `status`, `compact_boundary`, ...),
//! `assistant` (one content block a line, grouped by `message.id`), `user` (tool results),
//! `stream_event` (partial messages, with `--include-partial-messages`),
//! `rate_limit_event` and a final `result`.

mod launch;

pub use harness_kit::streams::claude::ClaudeReducer;
pub use launch::ClaudeCode;

#[cfg(all(feature = "export", not(feature = "harness-v0-1")))]
harness_kit::export_harness!(ClaudeCode);
#[cfg(all(feature = "export", feature = "harness-v0-1"))]
harness_kit::export_harness_v0_1!(ClaudeCode);
