//! The Cline stream reducer (`cline --json`, Cline 3.0.x).
//!
//! - **Model calls**: each `iteration_start` is one main-thread model call (ids
//!   `cline-iteration-<n>`, the stream has no message ids), started at the iteration's
//!   first output: Cline prints `iteration_start` before it sends the request, and a call
//!   counts once its response shows (as on the other harnesses; an iteration whose
//!   request failed before any output is no call). Its text (`content_start` /
//!   `content_end` of `contentType: text`, `accumulated` holding the text so far) is one
//!   `AssistantMessage`, re-emitted as it grows and when the request's `usage` arrives
//!   (its `inputTokens` / `outputTokens` are that request's).
//! - **Tools**: `content_start` of `contentType: tool` starts a call (`toolCallId`),
//!   `content_end` ends it; `output` is one `{result, success, error}` or, for
//!   `run_commands`, a list of them: any `success: false` is an error, and the exit code is
//!   read from "Command exited with code N"; one whose `error` says it "was rejected before
//!   execution" (a tool Cline does not have, an input its schema refuses) never ran: denied. `durationMs` is the CLI's duration.
//! - **End**: `run_result` becomes the `FinalResult` (`finishReason: completed` =
//!   success, else its error events' messages; `aggregateUsage` the run's totals; `totalCost` in USD). `hook_event` lines
//!   repeat what `agent_event`s say and are skipped; `content_update` (streamed output)
//!   adds nothing. Lines of spawned sub-agents are not told apart (the events carry no
//!   agent id): they would count as main-thread calls.

use harness_kit::reduce::{
    IdMaker, ResultWords, ToolIds, decode_object, no_output, type_diagnostic,
};
use harness_kit::{
    Event, Reducer, ReducerConfig, ToolStatus, Usage, excerpt, str_field, truncated_line, u64_field,
};
use serde_json::{Map, Value};

/// The text of a failed command's result.
const EXIT_MARKER: &str = "Command exited with code ";

/// What Cline (3.0.65; `@cline/llms`, 0.0.86) writes as the `error` of a call it refused
/// before running it: "Tool call <name> was rejected before execution: <why>" (why: the AI
/// SDK's "AI_NoSuchToolError: Model tried to call unavailable tool 'x'. …", or an input
/// that does not fit the tool's schema).
const REJECTED_MARKER: &str = " was rejected before execution: ";

/// The Cline reducer's state for one stream.
pub struct ClineReducer {
    config: ReducerConfig,
    saw_line: bool,
    /// Iterations (model calls) started, which number their ids (`cline-iteration-<n>`).
    calls: IdMaker,
    /// An `iteration_start` whose response has not shown yet: the call starts at its
    /// first output (Cline prints `iteration_start` before it sends the request).
    pending: bool,
    /// The current call's text and usage.
    text: String,
    usage: Option<Usage>,
    tools: ToolIds,
    result_seen: bool,
    /// Messages of `error` agent events (a failed request, an auth error).
    errors: Vec<String>,
}

impl Reducer for ClineReducer {
    fn new(config: ReducerConfig) -> Self {
        ClineReducer {
            config,
            saw_line: false,
            calls: IdMaker::new("cline-iteration"),
            pending: false,
            text: String::new(),
            usage: None,
            tools: ToolIds::default(),
            result_seen: false,
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
            // The same facts as the agent events.
            "hook_event" => {}
            "agent_event" => match obj.get("event").filter(|e| e.is_object()) {
                Some(event) => self.agent_event(event, line, &mut out),
                None => out.push(Event::diagnostic(
                    "missing_field",
                    "agent_event line has no `event` object",
                    line,
                )),
            },
            "run_result" => self.run_result(&obj, &mut out),
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
            out.push(no_output("Cline", Some("see its exit code and stderr")));
        } else if !self.result_seen {
            out.push(Event::diagnostic(
                "incomplete_run",
                "the stream ended without a `run_result` line",
                b"",
            ));
        }
        out
    }
}

impl ClineReducer {
    fn message_id(&self) -> String {
        self.calls.last_id()
    }

    fn message(&self) -> Event {
        Event::AssistantMessage {
            message_id: self.message_id(),
            parent_call_id: None,
            text: self.text.clone(),
            usage: self.usage,
            cost_usd: None,
        }
    }

    /// Starts the pending iteration's model call, at its first output.
    fn open_call(&mut self, out: &mut Vec<Event>) {
        if !self.pending {
            return;
        }
        self.pending = false;
        let message_id = self.calls.next_id();
        self.text.clear();
        self.usage = None;
        out.push(Event::ModelCallStarted {
            message_id: Some(message_id),
            parent_call_id: None,
        });
    }

    fn agent_event(&mut self, event: &Value, line: &[u8], out: &mut Vec<Event>) {
        let kind = str_field(event, "type").unwrap_or("");
        if matches!(kind, "usage" | "content_start" | "content_end") {
            self.open_call(out);
        }
        match kind {
            "iteration_start" => self.pending = true,
            "usage" => {
                if self.calls.count() == 0 {
                    return;
                }
                self.usage = Some(Usage {
                    input_tokens: u64_field(event, "inputTokens").unwrap_or(0),
                    output_tokens: u64_field(event, "outputTokens").unwrap_or(0),
                    cache_read_tokens: u64_field(event, "cacheReadTokens").unwrap_or(0),
                    cache_write_tokens: u64_field(event, "cacheWriteTokens"),
                });
                out.push(self.message());
            }
            "content_start" | "content_end" => match str_field(event, "contentType") {
                Some("text") if self.calls.count() > 0 => {
                    let text = str_field(event, "accumulated")
                        .or_else(|| {
                            (str_field(event, "type") == Some("content_end"))
                                .then(|| str_field(event, "text"))
                                .flatten()
                        })
                        .map(String::from);
                    match text {
                        Some(text) => self.text = text,
                        None => self.text.push_str(str_field(event, "text").unwrap_or("")),
                    }
                    out.push(self.message());
                }
                Some("text") => {}
                Some("tool") if str_field(event, "type") == Some("content_start") => {
                    self.tool_start(event, line, out)
                }
                Some("tool") => self.tool_end(event, line, out),
                other => out.push(Event::diagnostic(
                    "unknown_content",
                    format!("content of type {other:?}"),
                    line,
                )),
            },
            "error" => {
                let error = event.get("error");
                self.errors.push(
                    error
                        .and_then(|e| str_field(e, "message"))
                        .or_else(|| error.and_then(Value::as_str))
                        .unwrap_or("error event without a message")
                        .to_string(),
                );
            }
            "iteration_end" | "content_update" | "done" => {}
            other => out.push(Event::diagnostic(
                "unknown_event",
                format!("unknown agent event `{other}`"),
                line,
            )),
        }
    }

    fn tool_start(&mut self, event: &Value, line: &[u8], out: &mut Vec<Event>) {
        let id = str_field(event, "toolCallId");
        let Some(call_id) = self
            .tools
            .begin(id, "tool content has no `toolCallId`", line, out)
        else {
            return;
        };
        out.push(Event::ToolCallStarted {
            call_id: call_id.to_string(),
            name: str_field(event, "toolName").unwrap_or("").to_string(),
            input_json: event.get("input").unwrap_or(&Value::Null).to_string(),
            parent_call_id: None,
        });
    }

    fn tool_end(&mut self, event: &Value, line: &[u8], out: &mut Vec<Event>) {
        const WORDS: ResultWords = ResultWords {
            missing_id: "tool content has no `toolCallId`",
            orphan: |id| format!("end of tool call `{id}`, which never started"),
            repeated: None,
        };
        let id = str_field(event, "toolCallId");
        let Some(call_id) = self.tools.finish(id, &WORDS, line, out) else {
            return;
        };
        let parts: Vec<&Value> = match event.get("output") {
            Some(Value::Array(list)) => list.iter().collect(),
            Some(one @ Value::Object(_)) => vec![one],
            _ => Vec::new(),
        };
        let failed = parts
            .iter()
            .any(|p| p.get("success").and_then(Value::as_bool) == Some(false));
        // A call Cline refused before running it (a tool it does not have, an input its
        // schema rejects): "Tool call x was rejected before execution: …".
        let not_run = parts
            .iter()
            .filter_map(|p| str_field(p, "error"))
            .any(|e| e.trim_start().starts_with("Tool call ") && e.contains(REJECTED_MARKER));
        let status = if parts.is_empty() {
            ToolStatus::Unknown
        } else if not_run {
            ToolStatus::Denied
        } else if failed {
            ToolStatus::Error
        } else {
            ToolStatus::Ok
        };
        let text: Vec<&str> = parts
            .iter()
            .filter_map(|p| str_field(p, "result").or_else(|| str_field(p, "error")))
            .collect();
        let exit_code = parts
            .iter()
            .filter_map(|p| str_field(p, "error"))
            .find_map(exit_code_of);
        out.push(Event::ToolCallFinished {
            call_id: call_id.to_string(),
            status,
            output_excerpt: excerpt(&text.join("\n"), self.config.excerpt_bytes as usize),
            exit_code,
            cli_duration_ms: u64_field(event, "durationMs"),
        });
    }

    fn run_result(&mut self, obj: &Map<String, Value>, out: &mut Vec<Event>) {
        self.result_seen = true;
        let reason = field(obj, "finishReason").unwrap_or("");
        let success = reason == "completed";
        let usage = obj
            .get("aggregateUsage")
            .or_else(|| obj.get("usage"))
            .filter(|u| u.is_object());
        out.push(Event::FinalResult {
            success,
            error_kind: (!success).then(|| {
                if reason.is_empty() {
                    "no_finish_reason".to_string()
                } else {
                    reason.to_string()
                }
            }),
            error_message: (!success).then(|| {
                if self.errors.is_empty() {
                    format!("the run ended with finishReason {reason:?}")
                } else {
                    self.errors.join("\n")
                }
            }),
            max_turns_reached: false,
            num_turns: obj
                .get("iterations")
                .and_then(Value::as_u64)
                .map(|n| n as u32),
            cost_usd: usage
                .and_then(|u| u.get("totalCost"))
                .and_then(Value::as_f64),
            duration_ms: obj.get("durationMs").and_then(Value::as_u64),
            text: field(obj, "text").map(String::from),
            usage: usage.map(|u| Usage {
                input_tokens: u64_field(u, "inputTokens").unwrap_or(0),
                output_tokens: u64_field(u, "outputTokens").unwrap_or(0),
                cache_read_tokens: u64_field(u, "cacheReadTokens").unwrap_or(0),
                cache_write_tokens: u64_field(u, "cacheWriteTokens"),
            }),
        });
    }
}

fn field<'a>(obj: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    obj.get(key).and_then(Value::as_str)
}

/// N of "Command exited with code N".
fn exit_code_of(text: &str) -> Option<i32> {
    let at = text.find(EXIT_MARKER)? + EXIT_MARKER.len();
    let digits: String = text[at..]
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '-')
        .collect();
    digits.parse().ok()
}

#[cfg(test)]
mod tests;
