//! The Qwen Code harness: `qwen <prompt> -o stream-json --auth-type openai -m <model> --yolo`.
//!
//! Qwen Code is a fork of Gemini CLI whose `stream-json` output copies Claude Code's (see
//! `shared/corpus/live/qwen/`): `system/init` (tools, model, `qwen_code_version`),
//! `stream_event` (`goal_state`; partial messages with `--include-partial-messages`),
//! `assistant` (one content block a line), `user` (tool results, `is_error`) and a final
//! `result` (`num_turns`, `duration_ms`, `usage`; no cost). The reducer is Claude Code's
//! ([`harness_kit::streams::claude`]) in its [`Dialect::QwenCode`]: each assistant line has
//! an id of its own, the usage counts the whole prompt, and shell failures say
//! `Exit Code: N`.
//!
//! Checked against Qwen Code 0.24.4 (the pin in `harnesses/package.json`; it declares
//! `node >= 22` but ran every scenario on Node 20).

mod launch;

pub use launch::QwenCode;

use harness_kit::streams::claude::{ClaudeReducer, Dialect};
use harness_kit::{Event, Reducer, ReducerConfig};

/// The Qwen Code reducer: Claude Code's in [`Dialect::QwenCode`].
pub struct QwenReducer(ClaudeReducer);

impl Reducer for QwenReducer {
    fn new(config: ReducerConfig) -> Self {
        QwenReducer(ClaudeReducer::with_dialect(config, Dialect::QwenCode))
    }

    fn feed(&mut self, line: &[u8], stamp_us: u64) -> Vec<Event> {
        self.0.feed(line, stamp_us)
    }

    fn finish(&mut self, truncated: Option<&[u8]>) -> Vec<Event> {
        self.0.finish(truncated)
    }
}

#[cfg(feature = "export")]
harness_kit::export_harness!(QwenCode);

#[cfg(test)]
mod tests;
