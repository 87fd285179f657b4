//! The Continue CLI reducer: stdout (`cn -p … --format json`) holds only the final reply,
//! so the events come from the session file ([`crate::SESSION_FILE`]), handed over after
//! the CLI exited ([`Reducer::side_file`]).
//!
//! - **Stdout**: each line is noted (a run that printed nothing is a failure); its text is
//!   not read (a reply that is JSON is printed as is, so no field can be trusted).
//! - **Model calls**: each `history[]` item whose `message.role` is `assistant` is one call
//!   (ids `continue-<n>`, from 1) with one `AssistantMessage`: its `content` and its
//!   `usage` (`prompt_tokens` in, `completion_tokens` out; absent = none).
//! - **Tools**: each of the message's `toolCalls[]` starts a call (`id`, `function.name`,
//!   `function.arguments` as the input); the item's `toolCallStates[]` end them by
//!   `toolCallId`: `done` is ok, `errored` an error (exit code from `(exit code N)` in the
//!   output), `canceled`/`cancelled` denied; a state still `calling`, `generating` or
//!   `generated` leaves the call unfinished. The output is `output[].content` joined.
//! - **End**: the `FinalResult` (made when the file is read): the last reply's text, the
//!   model calls counted, the session `usage` (`promptTokens`, `completionTokens`,
//!   `promptTokensDetails.cachedTokens`/`cacheWriteTokens`) as the run's usage, no cost,
//!   no duration. A session whose last item is not a final reply is an `incomplete_run`.
//!   Without the file (not written, or not read) the run's work is unknown: the result is
//!   a failure (`no_session_file`) and the usage unreported.

use harness_kit::reduce::{IdMaker, no_output};
use harness_kit::{
    Event, Reducer, ReducerConfig, ToolStatus, UnreportedKind, Usage, excerpt, str_field,
    truncated_line, u64_field,
};
use serde_json::Value;

/// The Continue reducer's state for one run.
pub struct ContinueReducer {
    config: ReducerConfig,
    saw_line: bool,
    /// The session file was handed over (with or without content).
    read: bool,
    /// The session file gave the final result.
    final_given: bool,
}

impl Reducer for ContinueReducer {
    fn new(config: ReducerConfig) -> Self {
        ContinueReducer {
            config,
            saw_line: false,
            read: false,
            final_given: false,
        }
    }

    fn feed(&mut self, line: &[u8], _stamp_us: u64) -> Vec<Event> {
        if !line.iter().all(u8::is_ascii_whitespace) {
            self.saw_line = true;
        }
        Vec::new()
    }

    fn side_file(&mut self, path: &str, content: Option<&[u8]>) -> Vec<Event> {
        if path != crate::SESSION_FILE {
            return vec![Event::diagnostic(
                "unknown_side_file",
                format!("side file `{path}` is not the session file"),
                b"",
            )];
        }
        if self.read {
            return vec![Event::diagnostic(
                "duplicate_side_file",
                "the session file was handed over twice: the second is ignored",
                b"",
            )];
        }
        self.read = true;
        let Some(content) = content else {
            return vec![Event::diagnostic(
                "missing_side_file",
                format!("Continue wrote no session file ({})", crate::SESSION_FILE),
                b"",
            )];
        };
        match serde_json::from_slice::<Value>(content) {
            Ok(session) if session.is_object() => self.session(&session),
            Ok(_) => vec![Event::diagnostic(
                "bad_side_file",
                "session file: not a JSON object",
                content,
            )],
            Err(e) => vec![Event::diagnostic(
                "bad_side_file",
                format!("session file: not JSON ({e})"),
                content,
            )],
        }
    }

    fn finish(&mut self, truncated: Option<&[u8]>) -> Vec<Event> {
        let mut out: Vec<Event> = truncated_line(truncated).into_iter().collect();
        if truncated.is_some() {
            self.saw_line = true;
        }
        if self.done() {
            return out;
        }
        if !self.saw_line {
            out.push(no_output("Continue", Some("see its exit code and stderr")));
            return out;
        }
        out.push(Event::Unreported {
            kind: UnreportedKind::Usage,
            call_id: None,
            reason: "Continue reports tokens only in its session file, which was not read".into(),
        });
        out.push(Event::FinalResult {
            success: false,
            error_kind: Some("no_session_file".into()),
            error_message: Some(
                "Continue's model calls and tool calls are only in its session file, \
                 which was not read"
                    .into(),
            ),
            max_turns_reached: false,
            num_turns: None,
            cost_usd: None,
            duration_ms: None,
            text: None,
            usage: None,
        });
        out
    }
}

impl ContinueReducer {
    /// Whether the session file gave the final result already.
    fn done(&self) -> bool {
        self.final_given
    }

    /// The events of a session file (a JSON object).
    fn session(&mut self, session: &Value) -> Vec<Event> {
        let mut out = Vec::new();
        let Some(history) = session.get("history").and_then(Value::as_array) else {
            out.push(Event::diagnostic(
                "bad_side_file",
                "session file: no `history` array",
                b"",
            ));
            return out;
        };
        // Model calls, which number their ids (`continue-<n>`).
        let mut calls = IdMaker::new("continue");
        let mut last_text: Option<String> = None;
        let mut answered = false;
        let mut started: Vec<String> = Vec::new();
        for (i, item) in history.iter().enumerate() {
            let Some(message) = item.get("message") else {
                out.push(Event::diagnostic(
                    "missing_field",
                    format!("session file: history[{i}] has no `message`"),
                    b"",
                ));
                continue;
            };
            match message.get("role").and_then(Value::as_str) {
                Some("assistant") => {}
                Some("user" | "system" | "tool") => continue,
                other => {
                    out.push(Event::diagnostic(
                        "unknown_type",
                        format!("session file: history[{i}] has role {other:?}"),
                        b"",
                    ));
                    continue;
                }
            }
            let message_id = calls.next_id();
            out.push(Event::ModelCallStarted {
                message_id: Some(message_id.clone()),
                parent_call_id: None,
            });
            let text = text_of(message.get("content"));
            let tool_calls: &[Value] = message
                .get("toolCalls")
                .and_then(Value::as_array)
                .map_or(&[], Vec::as_slice);
            answered = tool_calls.is_empty();
            last_text = Some(text.clone());
            out.push(Event::AssistantMessage {
                message_id,
                parent_call_id: None,
                text,
                usage: message.get("usage").and_then(call_usage),
                cost_usd: None,
            });
            for (j, call) in tool_calls.iter().enumerate() {
                let Some(id) = str_field(call, "id") else {
                    out.push(Event::diagnostic(
                        "missing_field",
                        format!("session file: history[{i}].message.toolCalls[{j}] has no `id`"),
                        b"",
                    ));
                    continue;
                };
                if started.iter().any(|s| s == id) {
                    continue;
                }
                started.push(id.to_string());
                let function = call.get("function");
                out.push(Event::ToolCallStarted {
                    call_id: id.to_string(),
                    name: function
                        .and_then(|f| str_field(f, "name"))
                        .unwrap_or("")
                        .to_string(),
                    input_json: arguments(function.and_then(|f| f.get("arguments"))),
                    parent_call_id: None,
                });
            }
            let states: &[Value] = item
                .get("toolCallStates")
                .and_then(Value::as_array)
                .map_or(&[], Vec::as_slice);
            for state in states {
                self.tool_end(i, state, &started, &mut out);
            }
        }
        if calls.count() > 0 && !answered {
            out.push(Event::diagnostic(
                "incomplete_run",
                "the session ended without a final reply",
                b"",
            ));
        }
        let usage = session.get("usage").and_then(session_usage);
        if usage.is_none() {
            out.push(Event::Unreported {
                kind: UnreportedKind::Usage,
                call_id: None,
                reason: "the session file has no usage totals".into(),
            });
        }
        let success = calls.count() > 0 && answered;
        out.push(Event::FinalResult {
            success,
            error_kind: (!success).then(|| "incomplete_run".to_string()),
            error_message: (!success).then(|| {
                if calls.count() == 0 {
                    "the session file holds no model reply".to_string()
                } else {
                    "the session ended without a final reply".to_string()
                }
            }),
            max_turns_reached: false,
            // Counted from the session: Continue reports no turn count.
            num_turns: Some(calls.count()),
            cost_usd: None,
            duration_ms: None,
            text: last_text,
            usage,
        });
        self.final_given = true;
        out
    }

    /// A `toolCallStates[]` entry of history item `i`: the end of a call that started.
    fn tool_end(&self, i: usize, state: &Value, started: &[String], out: &mut Vec<Event>) {
        let Some(id) = str_field(state, "toolCallId") else {
            out.push(Event::diagnostic(
                "missing_field",
                format!("session file: a toolCallStates entry of history[{i}] has no `toolCallId`"),
                b"",
            ));
            return;
        };
        if !started.iter().any(|s| s == id) {
            out.push(Event::diagnostic(
                "orphan_tool_result",
                format!(
                    "session file: state of tool call `{id}`, which the message does not ask for"
                ),
                b"",
            ));
            return;
        }
        let status = match str_field(state, "status") {
            Some("done") => ToolStatus::Ok,
            Some("errored") => ToolStatus::Error,
            Some("canceled" | "cancelled") => ToolStatus::Denied,
            // Still running when the session was last saved: no end.
            Some("calling" | "generating" | "generated") => return,
            _ => ToolStatus::Unknown,
        };
        let text: String = state
            .get("output")
            .and_then(Value::as_array)
            .map(|parts| {
                parts
                    .iter()
                    .filter_map(|p| str_field(p, "content"))
                    .collect::<Vec<_>>()
                    .join("\n")
            })
            .unwrap_or_default();
        let exit_code = match status {
            ToolStatus::Error => exit_code_in(&text),
            _ => None,
        };
        out.push(Event::ToolCallFinished {
            call_id: id.to_string(),
            status,
            output_excerpt: excerpt(&text, self.config.excerpt_bytes as usize),
            exit_code,
            cli_duration_ms: None,
        });
    }
}

/// A message's `content`: a string, or parts whose `text` are joined.
fn text_of(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| str_field(p, "text"))
            .collect::<Vec<_>>()
            .join(""),
        _ => String::new(),
    }
}

/// A tool call's `function.arguments` (a JSON text) as the input JSON; kept as a string
/// when it does not parse.
fn arguments(value: Option<&Value>) -> String {
    match value {
        Some(Value::String(s)) => serde_json::from_str::<Value>(s)
            .map(|v| v.to_string())
            .unwrap_or_else(|_| Value::String(s.clone()).to_string()),
        Some(other) => other.to_string(),
        None => "null".to_string(),
    }
}

/// One call's `usage{prompt_tokens, completion_tokens}`; `None` unless both are counts.
fn call_usage(usage: &Value) -> Option<Usage> {
    Some(Usage {
        input_tokens: u64_field(usage, "prompt_tokens")?,
        output_tokens: u64_field(usage, "completion_tokens")?,
        cache_read_tokens: 0,
        cache_write_tokens: None,
    })
}

/// The session's `usage{promptTokens, completionTokens, promptTokensDetails}`; `None`
/// unless the two token counts are there.
fn session_usage(usage: &Value) -> Option<Usage> {
    let details = usage.get("promptTokensDetails");
    Some(Usage {
        input_tokens: u64_field(usage, "promptTokens")?,
        output_tokens: u64_field(usage, "completionTokens")?,
        cache_read_tokens: details
            .and_then(|d| u64_field(d, "cachedTokens"))
            .unwrap_or(0),
        // Absent is not zero.
        cache_write_tokens: details.and_then(|d| u64_field(d, "cacheWriteTokens")),
    })
}

/// `N` of `(exit code N)` in a failed command's output (`Error executing tool Bash: Error
/// (exit code N): …`).
fn exit_code_in(text: &str) -> Option<i32> {
    let rest = &text[text.find("(exit code ")? + "(exit code ".len()..];
    rest[..rest.find(')')?].trim().parse().ok()
}

#[cfg(test)]
mod tests;
