//! The grok-cli harness (`@vibe-kit/grok-cli` 0.0.34, whose `--version` says 1.0.1):
//! `grok -p <prompt>` against an OpenAI-compatible base URL (`GROK_BASE_URL`).
//!
//! Output format as of 0.0.34 (`shared/corpus/live/grok/`, the recordings are
//! `tests/corpus/live/grok/`): once the run is over, the whole transcript is printed at
//! once, one OpenAI chat message a line:
//!
//! - `{"role":"user","content"}`: the prompt;
//! - `{"role":"assistant","content","tool_calls"?:[{id,type,function{name,arguments}}]}`:
//!   one model reply (requests are not streamed); grok puts `Using tools to help you...` for
//!   the empty text of a tool-call reply and `I understand, but I don't have a specific
//!   response.` for an empty final reply;
//! - `{"role":"tool","tool_call_id","content"}`: a tool's output, or its error text (no
//!   success flag, no exit code);
//! - after a failure inside the agent loop, an assistant line `Sorry, I encountered an
//!   error: …` (exit 0); after a failure outside it, a single assistant line
//!   `Error: …` (exit 1); after `--max-tool-rounds` replies with tools, an assistant line
//!   `Maximum tool execution rounds reached. …` that no model wrote.
//!
//! What the output does not carry, and how the harness says so:
//!
//! - **no token usage** at all: the final result has none and an `Unreported` usage event
//!   says so (usage unknown, never 0);
//! - **no timing**: every line arrives when the process ends, so each model call and tool
//!   call starts and ends at the run's end (caveat `tool_start_reported_late`);
//! - **no session id, model or version** in the output.
//!
//! grok also writes `.grok/settings.json` (`{"model": "grok-code-fast-1"}`) into the
//! working directory when it is absent: a grader that lists the workspace sees it.

mod launch;
mod reducer;

pub use launch::GrokCli;
pub use reducer::GrokReducer;

#[cfg(feature = "export")]
harness_kit::export_harness!(GrokCli);
