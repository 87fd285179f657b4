//! The Codex stream reducer (`codex exec --json`, Codex 0.171.x).
//!
//! # Model-call boundaries
//!
//! The stream has no per-request event, so the main-thread model calls are derived. Model
//! output is the first sight of an `agent_message` or `reasoning` item, a `todo_list`
//! start or update (the model called `update_plan`), or the start of a tool item. A
//! [`ModelCallStarted`](Event::ModelCallStarted) is emitted on model output when no call is
//! open, or when the open call has started tools and all of them have finished: call N+1
//! opens only when its first output arrives after call N's tools are done, so a `max_turns`
//! cap (which fires on call N+1) never cuts call N's own tools. A `turn.started` closes the
//! open call.
//!
//! Limit: tools of one reply that Codex runs one after the other (`parallel.jsonl`: a patch,
//! then a command) look exactly like tools of consecutive replies (`hello.jsonl`), so such a
//! reply counts as one call per sequential tool. Output while a tool runs never opens a
//! call, and a tool that never finishes keeps its call open (the count errs low).
//!
//! # Other rules
//!
//! - `agent_message` → [`AssistantMessage`](Event::AssistantMessage), message id = item id;
//!   no per-message usage (Codex reports only thread totals).
//! - Tool items → tool start/end, named after the model-facing tool: `command_execution` →
//!   `exec_command` (input `{"command", "command_line"}`, the shell wrappers removed in
//!   `command` by `harness_kit::shell::unwrap_shell`, as graders read them), `file_change`
//!   → `apply_patch` (input `{"changes"}`), `mcp_tool_call` → `mcp__<server>__<tool>`,
//!   `web_search`, `collab_tool_call` → its `tool`. Status `completed` is ok (error for a
//!   non-zero exit code), `failed` is an error, `declined` (the CLI refused to run it, e.g.
//!   `rm -rf /`) is denied, no status is unknown. An `item.completed` without
//!   `item.started` starts and ends the tool on the same line.
//! - `turn.completed.usage` is the thread's cumulative total with overlapping buckets
//!   (`input_tokens` includes `cached_input_tokens` and `cache_write_input_tokens`,
//!   `output_tokens` includes `reasoning_output_tokens`): the reducer keeps the high-water
//!   mark per field and reports disjoint buckets. No cost (`cost_usd: None`).
//! - The terminal result (`turn.completed` → success, `turn.failed` → failure with its
//!   message, the inner `message` when it is a JSON error) is emitted at the end of the
//!   stream, because a later `turn.started` reopens the run (then the run is incomplete). No
//!   terminal event → no [`FinalResult`](Event::FinalResult): the host reports `incomplete`.
//! - `error` items and top-level `error` events are diagnostics (`error_item`,
//!   `cli_error`), not failures; a top-level `Reconnecting... n/m (…)` is the CLI retrying
//!   its model request (B42): a [`ModelCallRetried`](Event::ModelCallRetried) with the
//!   attempt and HTTP status, before any output of that request (no call abandoned).
//! - A turn that fails (`turn.failed`) reports no usage: an
//!   [`Unreported`](Event::Unreported) `usage` says so, so the totals read as unknown, not
//!   zero (B42). Unknown event and item types, broken lines and the old
//!   `{"id","msg"}` / app-server schemas (`unsupported_stream_schema`) are diagnostics.

use harness_kit::reduce::HashSet;
use harness_kit::reduce::{IdMaker, decode_object, type_diagnostic};
use harness_kit::{
    Event, Reducer, ReducerConfig, ToolStatus, UnreportedKind, excerpt, str_field, truncated_line,
};
use items::{inner_error, tool_call_of, tool_output};
use serde_json::{Map, Value};

mod items;
mod usage;
use usage::RawUsage;

/// The Codex reducer's state for one `codex exec --json` stream (Codex 0.171.0; see the
/// module docs for the rules).
pub struct CodexReducer {
    config: ReducerConfig,
    /// A main-thread model call is open.
    call_open: bool,
    /// Tools started in the open call.
    call_tools: u32,
    /// Tools of the open call that have not finished (item ids).
    running: HashSet<String>,
    /// Main-thread model calls so far.
    main_calls: u32,
    /// `agent_message` / `reasoning` items already seen (ids).
    seen_output: HashSet<String>,
    /// Tool items started (ids).
    tools_started: HashSet<String>,
    /// Tool items finished (ids).
    tools_finished: HashSet<String>,
    /// A `turn.started` has not been answered by `turn.completed` / `turn.failed` yet.
    turn_open: bool,
    /// Turns started so far.
    turns: u32,
    /// High-water mark of `turn.completed.usage`, raw (overlapping) fields.
    usage: Option<RawUsage>,
    /// Text of the turn's last `agent_message`, and of its last `final_answer` one.
    last_text: Option<String>,
    final_answer: Option<String>,
    /// The message of the last top-level `error` or `error` item.
    last_error: Option<String>,
    /// The terminal result, emitted at the end of the stream.
    pending_final: Option<Event>,
    /// Ids for items without one.
    made_up_ids: IdMaker,
}

/// Which `item.*` event an item came in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Started,
    Updated,
    Completed,
}

impl Reducer for CodexReducer {
    fn new(config: ReducerConfig) -> Self {
        CodexReducer {
            config,
            call_open: false,
            call_tools: 0,
            running: HashSet::default(),
            main_calls: 0,
            seen_output: HashSet::default(),
            tools_started: HashSet::default(),
            tools_finished: HashSet::default(),
            turn_open: false,
            turns: 0,
            usage: None,
            last_text: None,
            final_answer: None,
            last_error: None,
            pending_final: None,
            made_up_ids: IdMaker::new("codex-item"),
        }
    }

    fn feed(&mut self, line: &[u8], _stamp_us: u64) -> Vec<Event> {
        let (obj, mut out) = match decode_object(line) {
            Ok(read) => read,
            Err(events) => return events,
        };
        match obj.get("type").and_then(Value::as_str) {
            Some("thread.started") => out.push(Event::SessionStarted {
                session_id: obj
                    .get("thread_id")
                    .and_then(Value::as_str)
                    .map(String::from),
                cli_version: None,
                model: None,
                tools: Vec::new(),
            }),
            Some("turn.started") => self.turn_started(),
            Some("item.started") => self.item(&obj, Phase::Started, line, &mut out),
            Some("item.updated") => self.item(&obj, Phase::Updated, line, &mut out),
            Some("item.completed") => self.item(&obj, Phase::Completed, line, &mut out),
            Some("turn.completed") => self.turn_completed(&obj),
            Some("turn.failed") => {
                self.turn_failed(&obj);
                out.push(Event::Unreported {
                    kind: UnreportedKind::Usage,
                    call_id: None,
                    reason: "the turn failed: codex reports usage only in turn.completed, so \
                             this turn's tokens are unknown (not zero)"
                        .into(),
                });
            }
            Some("error") => {
                let message = obj
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string();
                if let Some(retry) = reconnecting(&message) {
                    out.push(retry);
                    self.last_error = Some(message);
                    return out;
                }
                out.push(Event::diagnostic(
                    "cli_error",
                    format!("the CLI reported an error (not by itself a failed run): {message}"),
                    line,
                ));
                self.last_error = Some(message);
            }
            Some(other) => out.push(type_diagnostic(other, line)),
            None if obj.contains_key("msg") || obj.contains_key("method") => {
                out.push(Event::diagnostic(
                    "unsupported_stream_schema",
                    "line is in a Codex schema this reducer does not read (the old \
                     `{\"id\",\"msg\"}` exec schema of Codex 0.2x, or app-server \
                     notifications); expected `codex exec --json` events with a `type`",
                    line,
                ));
            }
            None => out.push(type_diagnostic("", line)),
        }
        out
    }

    fn finish(&mut self, truncated: Option<&[u8]>) -> Vec<Event> {
        let mut out = Vec::new();
        out.extend(truncated_line(truncated));
        if self.turn_open {
            out.push(Event::diagnostic(
                "missing_terminal_event",
                format!(
                    "the stream ended inside turn {} (no turn.completed or turn.failed)",
                    self.turns
                ),
                b"",
            ));
        }
        out.extend(self.pending_final.take());
        out
    }
}

impl CodexReducer {
    fn turn_started(&mut self) {
        self.turns += 1;
        self.turn_open = true;
        // A new user turn: the next model output is a new call, and an earlier turn's
        // result no longer ends the run.
        self.call_open = false;
        self.call_tools = 0;
        self.running.clear();
        self.pending_final = None;
        self.last_text = None;
        self.final_answer = None;
    }

    fn turn_completed(&mut self, obj: &Map<String, Value>) {
        self.turn_open = false;
        if let Some(usage) = obj.get("usage") {
            let usage = RawUsage::of(usage);
            self.usage = Some(self.usage.map_or(usage, |u| u.high_water(usage)));
        }
        self.pending_final = Some(self.final_result(true, None, None));
    }

    fn turn_failed(&mut self, obj: &Map<String, Value>) {
        self.turn_open = false;
        let raw = obj
            .get("error")
            .and_then(|e| str_field(e, "message"))
            .map(String::from)
            .or_else(|| self.last_error.clone())
            .unwrap_or_else(|| "the turn failed without a message".to_string());
        let (message, kind) = inner_error(&raw);
        self.pending_final = Some(self.final_result(
            false,
            Some(kind.unwrap_or_else(|| "turn_failed".to_string())),
            Some(message),
        ));
    }

    fn final_result(
        &self,
        success: bool,
        error_kind: Option<String>,
        error_message: Option<String>,
    ) -> Event {
        Event::FinalResult {
            success,
            error_kind,
            error_message,
            max_turns_reached: false,
            num_turns: Some(self.main_calls),
            cost_usd: None,
            duration_ms: None,
            text: self.final_answer.clone().or_else(|| self.last_text.clone()),
            usage: self.usage.map(RawUsage::disjoint),
        }
    }

    /// Model output arrived: opens a main-thread call when none is open or the open one's
    /// tools have all finished.
    fn model_output(&mut self, out: &mut Vec<Event>) {
        if !self.call_open || (self.call_tools > 0 && self.running.is_empty()) {
            self.call_open = true;
            self.call_tools = 0;
            self.main_calls += 1;
            out.push(Event::ModelCallStarted {
                message_id: None,
                parent_call_id: None,
            });
        }
    }

    fn item(&mut self, obj: &Map<String, Value>, phase: Phase, line: &[u8], out: &mut Vec<Event>) {
        let Some(item) = obj.get("item").filter(|i| i.is_object()) else {
            out.push(Event::diagnostic(
                "missing_field",
                "item event has no `item` object",
                line,
            ));
            return;
        };
        let id = match str_field(item, "id") {
            Some(id) => id.to_string(),
            None => self.made_up_ids.next_id(),
        };
        match str_field(item, "type").unwrap_or("") {
            "agent_message" => {
                if self.seen_output.insert(id.clone()) {
                    self.model_output(out);
                }
                let text = str_field(item, "text").unwrap_or("").to_string();
                if phase == Phase::Completed {
                    if str_field(item, "phase") == Some("final_answer") {
                        self.final_answer = Some(text.clone());
                    }
                    self.last_text = Some(text.clone());
                }
                out.push(Event::AssistantMessage {
                    message_id: id,
                    parent_call_id: None,
                    text,
                    usage: None,
                    cost_usd: None,
                });
            }
            "reasoning" => {
                if self.seen_output.insert(id) {
                    self.model_output(out);
                }
            }
            // The plan (`update_plan`): every start or update is the model's doing; the
            // completion comes with the end of the turn.
            "todo_list" => {
                if phase != Phase::Completed {
                    self.model_output(out);
                }
            }
            kind @ ("command_execution" | "file_change" | "mcp_tool_call" | "web_search"
            | "collab_tool_call") => self.tool_item(kind, &id, item, phase, out),
            "error" => {
                let message = str_field(item, "message").unwrap_or("").to_string();
                out.push(Event::diagnostic(
                    "error_item",
                    format!("the CLI added an error item (not by itself a failed run): {message}"),
                    line,
                ));
                self.last_error = Some(message);
            }
            "" => out.push(Event::diagnostic(
                "missing_field",
                "item has no `type` field",
                line,
            )),
            other => out.push(Event::diagnostic(
                "unknown_item_type",
                format!("unknown item type `{other}`"),
                line,
            )),
        }
    }

    fn tool_item(
        &mut self,
        kind: &str,
        id: &str,
        item: &Value,
        phase: Phase,
        out: &mut Vec<Event>,
    ) {
        if !self.tools_started.contains(id) {
            self.model_output(out);
            self.tools_started.insert(id.to_string());
            self.running.insert(id.to_string());
            self.call_tools += 1;
            let (name, input) = tool_call_of(kind, item);
            out.push(Event::ToolCallStarted {
                call_id: id.to_string(),
                name,
                input_json: input.to_string(),
                parent_call_id: None,
            });
        }
        if phase != Phase::Completed || !self.tools_finished.insert(id.to_string()) {
            return;
        }
        self.running.remove(id);
        let exit_code = item
            .get("exit_code")
            .and_then(Value::as_i64)
            .and_then(|c| i32::try_from(c).ok());
        let status = match str_field(item, "status") {
            Some("completed") => ToolStatus::Ok,
            Some("failed" | "error") => ToolStatus::Error,
            // Never executed: not a command the agent ran.
            Some("declined") => ToolStatus::Denied,
            _ => ToolStatus::Unknown,
        };
        // The exit code, when there is one, settles what the status leaves open.
        let mut status = match (exit_code, status) {
            (Some(code), _) if code != 0 => ToolStatus::Error,
            (Some(_), ToolStatus::Unknown) => ToolStatus::Ok,
            (_, status) => status,
        };
        if kind == "mcp_tool_call"
            && item
                .get("result")
                .and_then(|r| r.get("is_error"))
                .and_then(Value::as_bool)
                == Some(true)
        {
            status = ToolStatus::Error;
        }
        out.push(Event::ToolCallFinished {
            call_id: id.to_string(),
            status,
            output_excerpt: excerpt(&tool_output(kind, item), self.config.excerpt_bytes as usize),
            exit_code,
            cli_duration_ms: None,
        });
    }
}

/// Codex's notice that it retries its model request: "Reconnecting... 2/5 (unexpected
/// status 500 Internal Server Error: …)" (0.171).
fn reconnecting(message: &str) -> Option<Event> {
    let rest = message.strip_prefix("Reconnecting...")?.trim_start();
    let (count, detail) = rest.split_once(' ').unwrap_or((rest, ""));
    let attempt = count.split('/').next().and_then(|n| n.parse().ok());
    let detail = detail.trim().trim_start_matches('(').trim_end_matches(')');
    let status = detail
        .strip_prefix("unexpected status ")
        .and_then(|s| s.split_whitespace().next())
        .and_then(|s| s.parse().ok());
    Some(Event::ModelCallRetried {
        call_started: false,
        abandoned_message_id: None,
        parent_call_id: None,
        attempt,
        delay_ms: None,
        status,
        error: (!detail.is_empty()).then(|| detail.to_string()),
        announced: true,
    })
}

#[cfg(test)]
mod tests;
