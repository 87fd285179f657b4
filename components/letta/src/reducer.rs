//! The Letta Code stream reducer (`letta --backend local -p … --output-format stream-json`,
//! 0.25.x).
//!
//! - **Model calls**: one per run (`run_id`, one model request each), started at its first
//!   output (an `assistant_message`, or an `auto_approval` of a tool-only reply) and ended
//!   by its `usage_statistics` (ids `letta-call-<n>`: the stream gives tool-only replies no
//!   message id). The `assistant_message` deltas of a call add up to its one
//!   `AssistantMessage`, re-emitted as it grows and with the call's usage at the end.
//!   Usage: `prompt_tokens` is the uncached input (Letta Code's `usage.input` of its
//!   provider layer, which counts cache reads apart), `cached_input_tokens` the cache reads,
//!   `cache_write_tokens` the cache writes.
//! - **Tools**: `auto_approval.tool_call` starts a call (`tool_call_id`, `name`,
//!   `arguments`). The stream has **no tool results**: a call ends with status `unknown`
//!   (never `ok`: a failed command looks the same), no output and no exit code, when the
//!   next model call's first output shows (Letta Code runs a reply's tools before it sends
//!   the next request) or at the `result` line.
//! - **End**: `result` becomes the `FinalResult`: `subtype: success` is success; its
//!   `usage` holds the process's totals and `duration_ms` its time. Its `num_turns` is
//!   always 0, so the model calls counted from the stream are reported instead.
//!   Top-level `error` lines and a `stop_reason` other than `requires_approval` /
//!   `end_turn` are kept for a failed result's message.
//!
//! - **Retries**: a `retry` line (`reason`, `attempt`, `delay_ms`; Letta Code writes one
//!   before it sends a failed request again, in `letta.js` of 0.25.9, not seen against the
//!   scripted model) is a `ModelCallRetried`: the call it abandons is the open one, when a
//!   call had shown output without its `usage_statistics`, else none.
//!
//! `system`/`init` starts the session (its tools and model; the stream names no version).

use harness_kit::reduce::{IdMaker, decode_object, no_output, type_diagnostic};
use harness_kit::{
    Event, Reducer, ReducerConfig, ToolStatus, Usage, str_field, truncated_line, u64_field,
};
use serde_json::{Map, Value};

/// The `stop_reason`s of a run that went as planned.
const NORMAL_STOPS: [&str; 2] = ["requires_approval", "end_turn"];

/// The Letta Code reducer's state for one stream.
pub struct LettaReducer {
    saw_line: bool,
    result_seen: bool,
    /// Model calls started (each id once), which number their ids (`letta-call-<n>`), and
    /// those a retry abandoned.
    calls: IdMaker,
    abandoned: u32,
    /// Whether the current call is open (started, its `usage_statistics` not seen).
    open: bool,
    /// The current call's text and usage.
    text: String,
    usage: Option<Usage>,
    /// Tool calls started whose outcome the stream never tells, in start order.
    running: Vec<String>,
    /// Every tool call id seen, so a repeated approval starts nothing.
    seen_tools: Vec<String>,
    /// The last call's non-empty text (the answer when `result` has none).
    last_text: Option<String>,
    /// Unusual stop reasons and error lines, for a failed result's message.
    errors: Vec<String>,
}

impl Reducer for LettaReducer {
    fn new(_config: ReducerConfig) -> Self {
        LettaReducer {
            saw_line: false,
            result_seen: false,
            calls: IdMaker::new("letta-call"),
            abandoned: 0,
            open: false,
            text: String::new(),
            usage: None,
            running: Vec::new(),
            seen_tools: Vec::new(),
            last_text: None,
            errors: Vec::new(),
        }
    }

    fn feed(&mut self, line: &[u8], _stamp_us: u64) -> Vec<Event> {
        self.saw_line = true;
        let (obj, mut out) = match decode_object(line) {
            Ok(read) => read,
            Err(events) => return events,
        };
        match field(&obj, "type").unwrap_or("") {
            "system" if field(&obj, "subtype") == Some("init") => {
                out.push(Event::SessionStarted {
                    session_id: field(&obj, "session_id").map(String::from),
                    cli_version: None,
                    model: field(&obj, "model").map(String::from),
                    tools: obj
                        .get("tools")
                        .and_then(Value::as_array)
                        .map(|t| {
                            t.iter()
                                .filter_map(|n| n.as_str().map(String::from))
                                .collect()
                        })
                        .unwrap_or_default(),
                });
            }
            "message" => self.message(&obj, line, &mut out),
            "auto_approval" => self.tool_start(&obj, line, &mut out),
            "error" => self.errors.push(
                field(&obj, "message")
                    .or_else(|| field(&obj, "error"))
                    .unwrap_or("error line without a message")
                    .to_string(),
            ),
            "result" => self.result(&obj, &mut out),
            "retry" => self.retry(&obj, &mut out),
            other => out.push(type_diagnostic(other, line)),
        }
        out
    }

    fn finish(&mut self, truncated: Option<&[u8]>) -> Vec<Event> {
        let mut out: Vec<Event> = truncated_line(truncated).into_iter().collect();
        if truncated.is_some() {
            self.saw_line = true;
        }
        if !self.saw_line {
            out.push(no_output(
                "Letta Code",
                Some("see its exit code and stderr"),
            ));
        } else if !self.result_seen {
            // Tools still open may have been running when the stream stopped: the host
            // ends them as interrupted.
            out.push(Event::diagnostic(
                "incomplete_run",
                "the stream ended without a `result` line",
                b"",
            ));
        }
        out
    }
}

impl LettaReducer {
    fn message_id(&self) -> String {
        self.calls.last_id()
    }

    fn assistant_message(&self) -> Event {
        Event::AssistantMessage {
            message_id: self.message_id(),
            parent_call_id: None,
            text: self.text.clone(),
            usage: self.usage,
            cost_usd: None,
        }
    }

    /// Starts a model call at its first output, unless one is open. The tools of the call
    /// before have run by then: they end, outcome unknown.
    fn open_call(&mut self, out: &mut Vec<Event>) {
        if self.open {
            return;
        }
        self.end_tools(out);
        self.open = true;
        let message_id = self.calls.next_id();
        self.text.clear();
        self.usage = None;
        out.push(Event::ModelCallStarted {
            message_id: Some(message_id),
            parent_call_id: None,
        });
    }

    /// Ends every running tool call with an unknown outcome (the stream has no results).
    fn end_tools(&mut self, out: &mut Vec<Event>) {
        for call_id in self.running.drain(..) {
            out.push(Event::ToolCallFinished {
                call_id,
                status: ToolStatus::Unknown,
                output_excerpt: String::new(),
                exit_code: None,
                cli_duration_ms: None,
            });
        }
    }

    fn message(&mut self, obj: &Map<String, Value>, line: &[u8], out: &mut Vec<Event>) {
        match field(obj, "message_type").unwrap_or("") {
            "assistant_message" => {
                self.open_call(out);
                self.text.push_str(&content_text(obj.get("content")));
                if !self.text.is_empty() {
                    self.last_text = Some(self.text.clone());
                }
                out.push(self.assistant_message());
            }
            // Output of the call that carries nothing the events need.
            "reasoning_message" => self.open_call(out),
            "usage_statistics" => {
                // A request answered with nothing but its usage is still a model call.
                self.open_call(out);
                self.usage = Some(Usage {
                    input_tokens: obj_u64(obj, "prompt_tokens").unwrap_or(0),
                    output_tokens: obj_u64(obj, "completion_tokens").unwrap_or(0),
                    cache_read_tokens: obj_u64(obj, "cached_input_tokens").unwrap_or(0),
                    cache_write_tokens: obj_u64(obj, "cache_write_tokens"),
                });
                out.push(self.assistant_message());
                self.open = false;
            }
            "stop_reason" => {
                let reason = field(obj, "stop_reason").unwrap_or("");
                if !NORMAL_STOPS.contains(&reason) {
                    self.errors.push(format!("stop reason `{reason}`"));
                }
            }
            "" => out.push(Event::diagnostic(
                "missing_field",
                "message line has no `message_type`",
                line,
            )),
            other => out.push(Event::diagnostic(
                "unknown_message_type",
                format!("unknown message_type `{other}`"),
                line,
            )),
        }
    }

    fn tool_start(&mut self, obj: &Map<String, Value>, line: &[u8], out: &mut Vec<Event>) {
        let call = obj.get("tool_call").filter(|c| c.is_object());
        let Some(id) = call.and_then(|c| str_field(c, "tool_call_id")) else {
            out.push(Event::diagnostic(
                "missing_field",
                "auto_approval has no `tool_call.tool_call_id`",
                line,
            ));
            return;
        };
        if self.seen_tools.iter().any(|s| s == id) {
            return;
        }
        self.open_call(out);
        self.seen_tools.push(id.to_string());
        self.running.push(id.to_string());
        // `arguments` is a JSON string; kept as the input when it parses, else as a string.
        let input_json = match call.and_then(|c| c.get("arguments")) {
            Some(Value::String(s)) if serde_json::from_str::<Value>(s).is_ok() => s.clone(),
            Some(other) => other.to_string(),
            None => Value::Null.to_string(),
        };
        out.push(Event::ToolCallStarted {
            call_id: id.to_string(),
            name: call
                .and_then(|c| str_field(c, "name"))
                .unwrap_or("")
                .to_string(),
            input_json,
            parent_call_id: None,
        });
    }

    /// A request Letta Code sends again: the open call, if any, is abandoned.
    fn retry(&mut self, obj: &Map<String, Value>, out: &mut Vec<Event>) {
        let call_started = std::mem::replace(&mut self.open, false);
        if call_started {
            self.abandoned += 1;
        }
        out.push(Event::ModelCallRetried {
            call_started,
            abandoned_message_id: call_started.then(|| self.message_id()),
            parent_call_id: None,
            attempt: obj_u64(obj, "attempt").and_then(|n| u32::try_from(n).ok()),
            delay_ms: obj_u64(obj, "delay_ms"),
            status: None,
            error: field(obj, "reason").map(String::from),
            announced: true,
        });
    }

    fn result(&mut self, obj: &Map<String, Value>, out: &mut Vec<Event>) {
        self.result_seen = true;
        self.end_tools(out);
        let subtype = field(obj, "subtype").unwrap_or("");
        let success = subtype == "success" && obj.get("is_error") != Some(&Value::Bool(true));
        let usage = obj.get("usage").filter(|u| u.is_object()).map(|u| Usage {
            input_tokens: u64_field(u, "prompt_tokens").unwrap_or(0),
            output_tokens: u64_field(u, "completion_tokens").unwrap_or(0),
            cache_read_tokens: u64_field(u, "cached_input_tokens").unwrap_or(0),
            cache_write_tokens: u64_field(u, "cache_write_tokens"),
        });
        let text = field(obj, "result")
            .map(String::from)
            .or_else(|| self.last_text.clone());
        let message = || {
            let mut parts = self.errors.clone();
            if let Some(e) = field(obj, "error") {
                parts.push(e.to_string());
            }
            if parts.is_empty() {
                format!("the run ended with result subtype {subtype:?}")
            } else {
                parts.join("\n")
            }
        };
        out.push(Event::FinalResult {
            success,
            error_kind: (!success).then(|| {
                if subtype.is_empty() {
                    "no_subtype".to_string()
                } else {
                    subtype.to_string()
                }
            }),
            error_message: (!success).then(message),
            max_turns_reached: false,
            // Counted from the stream: the line's `num_turns` is always 0.
            num_turns: Some(self.calls.count() - self.abandoned),
            cost_usd: None,
            duration_ms: obj.get("duration_ms").and_then(Value::as_u64),
            text,
            usage,
        });
    }
}

fn field<'a>(obj: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    obj.get(key).and_then(Value::as_str)
}

fn obj_u64(obj: &Map<String, Value>, key: &str) -> Option<u64> {
    obj.get(key).and_then(Value::as_u64)
}

/// The text of a message's `content`: a string, or the `text` of its parts.
fn content_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts.iter().filter_map(|p| str_field(p, "text")).collect(),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests;
