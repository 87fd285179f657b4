//! The Droid harness (Factory's `@factory/cli`): `droid exec -o stream-json -m
//! custom:<model> --skip-permissions-unsafe <prompt>`, shipped out of tree.
//!
//! Stream format as of Droid 0.225.2 (the recordings are `tests/corpus/live/droid/` of
//! the coder-eval repository): one JSON object a line, each with `type`, `session_id` and
//! (except `system`) `timestamp` in ms since the epoch:
//!
//! - `system/init`: `cwd`, `session_id`, `tools`, `model`;
//! - `message`: `role` (`user` = the prompt, `assistant` = the model's text), `id`, `text`;
//! - `tool_call`: `id` (the call), `messageId` (the assistant message the call belongs
//!   to), `toolName`, `parameters`;
//! - `tool_result`: `id` (the call), `isError`, `value` (text), or `error{type, message}`;
//!   a shell command's text ends in `[Process exited with code N]`;
//! - `completion`: `finalText`, `numTurns`, `durationMs`, `usage{input_tokens,
//!   output_tokens, cache_read_input_tokens, cache_creation_input_tokens, factory_credits,
//!   ttft_ms}` (the run's totals; `factory_credits` is Factory's unit, not USD).

mod launch;
mod reducer;

pub use launch::Droid;
pub use reducer::DroidReducer;

harness_kit::export_harness!(Droid);
