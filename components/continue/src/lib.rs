//! The Continue CLI harness (`@continuedev/cli` 1.5.47, bin `cn`):
//! `cn -p <prompt> --format json --config <config.yaml> --auto` against an
//! OpenAI-compatible model the config names.
//!
//! **Stdout is not the trajectory.** `--format json` prints only the final reply: the
//! reply itself when it is JSON, else one line `{"response", "status": "success", "note"}`.
//! The tool calls, their results and the token usage are in Continue's session file,
//! `$CONTINUE_GLOBAL_DIR/sessions/<session id>.json`, written as the run goes. Its name is
//! not known in advance (a fresh uuid), so the plan fixes it:
//! `CONTINUE_CLI_TEST_SESSION_ID` (read by `cn`'s session service in 1.5.47, meant for
//! its tests; no documented flag does this) sets the id, and `CONTINUE_GLOBAL_DIR` the
//! folder, so the file is [`SESSION_FILE`], the plan's one side file, read after exit.
//!
//! Session file as of 1.5.47 (`shared/corpus/live/continue/*.session.json`, copied to
//! `tests/corpus/live/continue/`): `{sessionId, title, workspaceDirectory, history[],
//! usage}`. Each `history[]` item is `{message, contextItems, toolCallStates?}`:
//!
//! - `message.role` `user` (the prompt) or `assistant`: `content` (a string, or parts
//!   with `text`), `toolCalls[]` (`id`, `function{name, arguments}`), and
//!   `usage{prompt_tokens, completion_tokens, total_tokens, model, cost_cents}`;
//! - `toolCallStates[]`: `toolCallId`, `toolCall`, `status` (`done`, `errored`,
//!   `canceled`, or `calling`/`generating`/`generated` while unfinished), `parsedArgs`,
//!   `output[]` (`content`): a failed command's output is `Error executing tool Bash:
//!   Error (exit code N): …`;
//! - the session `usage`: `promptTokens`, `completionTokens`,
//!   `promptTokensDetails{cachedTokens, cacheWriteTokens}`, and `totalCost`, Continue's
//!   own estimate from its price table (non-zero for the scripted model, whose calls all
//!   say `cost_cents: 0`): not reported as the run's cost.
//!
//! The file has **no timestamps**: every event comes when the run is over (caveat
//! `tool_start_reported_late`), and no duration.

mod launch;
mod reducer;

pub use launch::{Continue, SESSION_FILE, SESSION_ID};
pub use reducer::ContinueReducer;

#[cfg(feature = "export")]
harness_kit::export_harness!(Continue);
