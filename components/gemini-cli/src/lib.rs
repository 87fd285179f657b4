//! The Gemini CLI harness: `gemini -p <prompt> --output-format stream-json --yolo -m <model>`.
//!
//! Stream format as of Gemini CLI 0.61.0 (see `shared/corpus/live/gemini/`): one JSON
//! object a line, each with `type` and `timestamp` (ISO 8601, the CLI's clock):
//!
//! - `init`: `session_id`, `model`;
//! - `message`: `role` (`user` = the prompt, `assistant` = model text), `content`, and
//!   `delta: true` on assistant chunks of one streamed response;
//! - `tool_use`: `tool_name`, `tool_id`, `parameters`;
//! - `tool_result`: `tool_id`, `status` (`success` | `error`), `output` (the tool's display
//!   text), `error` `{type, message}`;
//! - `error`: `severity` (`warning` | `error`), `message`;
//! - `result`: `status` (`success` | `error`), `error` `{type, message}`, `stats`
//!   `{total_tokens, input_tokens, output_tokens, cached, input, duration_ms, tool_calls}`.
//!
//! On some failures (authentication, B33) the CLI prints nothing on stdout at all.

mod launch;
mod reducer;

pub use launch::GeminiCli;
pub use reducer::GeminiReducer;

#[cfg(all(feature = "export", not(feature = "harness-v0-1")))]
harness_kit::export_harness!(GeminiCli);
#[cfg(all(feature = "export", feature = "harness-v0-1"))]
harness_kit::export_harness_v0_1!(GeminiCli);
