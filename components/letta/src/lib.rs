//! The Letta Code harness: `letta --backend local -p <prompt> --output-format stream-json
//! -m llama.cpp/<model> --new-agent --yolo`, the agent run in-process (the experimental
//! local backend, `LETTA_LOCAL_BACKEND_EXPERIMENTAL=1`) against an OpenAI-compatible
//! server (`LLAMA_CPP_BASE_URL`), with no Letta server and no login.
//!
//! Stream format as of Letta Code 0.25.9 (`shared/corpus/live/letta/`, the recordings are
//! `tests/corpus/live/letta/`): one JSON object a line, each with a `type`:
//!
//! - `system` / `init`: `session_id`, `agent_id`, `model`, `tools`, `cwd`;
//! - `message` with a `message_type` and a `run_id` (one run per model request):
//!   `assistant_message` (`content[].text`, one line per text delta),
//!   `usage_statistics` (`prompt_tokens`, `completion_tokens`, `cached_input_tokens`,
//!   `cache_write_tokens`: that request's), `stop_reason` (`requires_approval` when the
//!   reply asked for tools, `end_turn` at the end);
//! - `auto_approval`: `tool_call {name, tool_call_id, arguments}` (`arguments` a JSON
//!   string), one per tool call `--yolo` approved, just before it runs;
//! - `result` / `success`: `result` (the answer), `duration_ms`, `usage` (the process's
//!   totals). Its `num_turns` is always 0.
//!
//! What the stream does **not** carry: tool results (a call's outcome, its output and a
//! failed command's exit code never appear), and the CLI's version. Letta Code also writes
//! `.letta/settings.local.json` and `.letta/.lettaignore` into the working directory.
//!
//! Checked against Letta Code 0.25.9 (the pin in `harnesses/package.json`; 0.32.x needs
//! Node 22 and does not install from this registry).

mod launch;
mod reducer;

pub use launch::{DEFAULT_MODEL, Letta};
pub use reducer::LettaReducer;

#[cfg(feature = "export")]
harness_kit::export_harness!(Letta);
