//! The Gemini CLI stream reducer (`--output-format stream-json`, Gemini CLI 0.61.x).
//!
//! - **Model calls**: Gemini CLI streams one model response (assistant `message` chunks and
//!   `tool_use` lines), then runs all its tool calls and prints their `tool_result`s, then
//!   sends the next request. So a call is open from the first assistant `message` or
//!   `tool_use` after the start, a `tool_result` or a user `message`, and the first
//!   `tool_result` closes it: the next response's first line starts call N+1
//!   (`ModelCallStarted`), never before call N's tools ended. Calls get reducer-made ids
//!   `gemini-cli-msg-<n>` (the stream has no message ids). Everything is main-thread: the
//!   stream shows no sub-agent internals.
//! - **Messages**: the chunks of one response are concatenated into one `AssistantMessage`,
//!   re-emitted as chunks arrive. The stream gives no per-call usage.
//! - **Tools**: `tool_use` starts a call, the first `tool_result` with its `tool_id` ends it;
//!   a repeated result changes nothing (a `duplicate_tool_result` diagnostic) and a result
//!   for an unknown id is an `orphan_tool_result` diagnostic. `status: error` is an error,
//!   except a call to a tool the CLI does not have (`error.type: tool_not_registered`),
//!   which never ran: `denied`, so it is not a command.
//!   A shell command's exit code reaches the stream only when the command printed nothing
//!   (`output` = "Command exited with code: N"); a failing command that printed something
//!   is reported as `success` by the CLI and stays `ok` here.
//! - **End**: `result` becomes the `FinalResult`, with `stats` as its usage and no cost.
//!   An `error` line with `severity: error` makes it a failure even when `result.status` is
//!   `success`; the turn cap (`FatalTurnLimitedError`, exit 53, or the "Maximum session
//!   turns exceeded" error line) sets `max_turns_reached`. `severity: warning` lines become
//!   `cli_warning` diagnostics. An error line with no `result` after it still ends in a
//!   failed `FinalResult`; a stream with no line at all ends in a `no_output` failure (B33:
//!   the exit code and stderr, which the reducer cannot see, tell the rest).

use harness_kit::reduce::{
    IdMaker, ResultWords, ToolIds, decode_object, no_output, type_diagnostic,
};
use harness_kit::{
    Event, Reducer, ReducerConfig, ToolStatus, Usage, excerpt, str_field, truncated_line, u64_field,
};
use serde_json::{Map, Value};

/// The error type Gemini CLI's `result` names when `model.maxSessionTurns` stopped it.
const TURN_LIMIT_ERROR: &str = "FatalTurnLimitedError";

/// The prefix of a shell tool's display text when the command printed nothing and failed.
const EXIT_CODE_PREFIX: &str = "Command exited with code: ";

/// The Gemini CLI reducer's state for one stream.
pub struct GeminiReducer {
    config: ReducerConfig,
    /// Whether `feed` or `finish` saw any bytes at all.
    saw_line: bool,
    /// Main-thread model calls started, which number their ids (`gemini-cli-msg-<n>`).
    calls: IdMaker,
    /// Whether call `calls` is still producing output (no `tool_result` since it began).
    call_open: bool,
    /// Text of call `calls` so far.
    text: String,
    tools: ToolIds,
    /// Messages of `error` lines with `severity: error`.
    errors: Vec<String>,
    /// An `error` line said the session's turn cap was reached.
    turn_limit: bool,
    result_seen: bool,
}

impl Reducer for GeminiReducer {
    fn new(config: ReducerConfig) -> Self {
        GeminiReducer {
            config,
            saw_line: false,
            calls: IdMaker::new("gemini-cli-msg"),
            call_open: false,
            text: String::new(),
            tools: ToolIds::default(),
            errors: Vec::new(),
            turn_limit: false,
            result_seen: false,
        }
    }

    fn feed(&mut self, line: &[u8], _stamp_us: u64) -> Vec<Event> {
        self.saw_line = true;
        let (obj, mut out) = match decode_object(line) {
            Ok(read) => read,
            Err(events) => return events,
        };
        match obj.get("type").and_then(Value::as_str).unwrap_or("") {
            "init" => out.push(Event::SessionStarted {
                session_id: string(&obj, "session_id"),
                cli_version: None,
                model: string(&obj, "model"),
                tools: Vec::new(),
            }),
            "message" => self.message(&obj, line, &mut out),
            "tool_use" => self.tool_use(&obj, line, &mut out),
            "tool_result" => self.tool_result(&obj, line, &mut out),
            "error" => {
                let message = str_field_of(&obj, "message").unwrap_or("").to_string();
                match str_field_of(&obj, "severity") {
                    Some("error") => {
                        if is_turn_limit(&message) {
                            self.turn_limit = true;
                        }
                        self.errors.push(message);
                    }
                    Some("warning") => out.push(Event::diagnostic(
                        "cli_warning",
                        format!("Gemini CLI warning: {message}"),
                        line,
                    )),
                    other => out.push(Event::diagnostic(
                        "unknown_severity",
                        format!("error line with severity {other:?}"),
                        line,
                    )),
                }
            }
            "result" => self.result(&obj, &mut out),
            other => out.push(type_diagnostic(other, line)),
        }
        out
    }

    fn finish(&mut self, truncated: Option<&[u8]>) -> Vec<Event> {
        let mut out = Vec::new();
        if truncated.is_some() {
            self.saw_line = true;
        }
        out.extend(truncated_line(truncated));
        if !self.saw_line {
            out.push(no_output(
                "Gemini CLI",
                Some(
                    "with stream-json this is how an authentication or configuration failure \
                     shows; see its exit code and stderr",
                ),
            ));
        } else if !self.result_seen {
            if self.errors.is_empty() {
                out.push(Event::diagnostic(
                    "incomplete_run",
                    "the stream ended without a `result` line",
                    b"",
                ));
            } else {
                out.push(Event::FinalResult {
                    success: false,
                    error_kind: Some(self.error_kind(None)),
                    error_message: Some(self.errors.join("\n")),
                    max_turns_reached: self.turn_limit,
                    num_turns: None,
                    cost_usd: None,
                    duration_ms: None,
                    text: None,
                    usage: None,
                });
            }
        }
        out
    }
}

impl GeminiReducer {
    fn message_id(&self) -> String {
        self.calls.last_id()
    }

    /// Starts main-thread call N+1 unless call N is still producing output.
    fn ensure_call(&mut self, out: &mut Vec<Event>) {
        if self.call_open {
            return;
        }
        let message_id = self.calls.next_id();
        self.call_open = true;
        self.text.clear();
        out.push(Event::ModelCallStarted {
            message_id: Some(message_id),
            parent_call_id: None,
        });
    }

    fn message(&mut self, obj: &Map<String, Value>, line: &[u8], out: &mut Vec<Event>) {
        match str_field_of(obj, "role") {
            // The prompt (the host records it): the model's next output is a new call.
            Some("user") => self.call_open = false,
            Some("assistant") => {
                self.ensure_call(out);
                // `delta: true` chunks and whole messages alike add to the call's text.
                self.text
                    .push_str(str_field_of(obj, "content").unwrap_or(""));
                out.push(Event::AssistantMessage {
                    message_id: self.message_id(),
                    parent_call_id: None,
                    text: self.text.clone(),
                    usage: None,
                    cost_usd: None,
                });
            }
            other => out.push(Event::diagnostic(
                "unknown_role",
                format!("message with role {other:?}"),
                line,
            )),
        }
    }

    fn tool_use(&mut self, obj: &Map<String, Value>, line: &[u8], out: &mut Vec<Event>) {
        let Some(call_id) = str_field_of(obj, "tool_id") else {
            out.push(Event::diagnostic(
                "missing_field",
                "tool_use line has no `tool_id`",
                line,
            ));
            return;
        };
        if !self.tools.start(call_id) {
            out.push(Event::diagnostic(
                "duplicate_tool_use",
                format!("tool call `{call_id}` was announced again"),
                line,
            ));
            return;
        }
        self.ensure_call(out);
        out.push(Event::ToolCallStarted {
            call_id: call_id.to_string(),
            name: str_field_of(obj, "tool_name").unwrap_or("").to_string(),
            input_json: obj.get("parameters").unwrap_or(&Value::Null).to_string(),
            parent_call_id: None,
        });
    }

    fn tool_result(&mut self, obj: &Map<String, Value>, line: &[u8], out: &mut Vec<Event>) {
        // Tools run after the response ended: the model's next output is a new call.
        self.call_open = false;
        const WORDS: ResultWords = ResultWords {
            missing_id: "tool_result line has no `tool_id`",
            orphan: |id| format!("result for tool call `{id}`, which was never announced"),
            repeated: Some(|id| {
                format!("a second result for tool call `{id}` (the first one counts)")
            }),
        };
        let id = str_field_of(obj, "tool_id");
        let Some(call_id) = self.tools.finish(id, &WORDS, line, out) else {
            return;
        };
        let output = str_field_of(obj, "output").unwrap_or("");
        let error = obj.get("error").and_then(|e| str_field(e, "message"));
        let exit_code = output
            .strip_prefix(EXIT_CODE_PREFIX)
            .and_then(|code| code.trim().parse::<i32>().ok());
        let error_type = obj.get("error").and_then(|e| str_field(e, "type"));
        let status = match str_field_of(obj, "status") {
            // A call to a tool the CLI does not have (`error.type: tool_not_registered`:
            // "Tool \"x\" not found") never ran: not a command.
            Some("error") if error_type == Some("tool_not_registered") => ToolStatus::Denied,
            Some("success") if exit_code.is_some_and(|c| c != 0) => ToolStatus::Error,
            Some("success") => ToolStatus::Ok,
            Some("error") => ToolStatus::Error,
            _ => ToolStatus::Unknown,
        };
        let text = match (status, error) {
            (ToolStatus::Error | ToolStatus::Denied, Some(message)) => message,
            _ => output,
        };
        out.push(Event::ToolCallFinished {
            call_id: call_id.to_string(),
            status,
            output_excerpt: excerpt(text, self.config.excerpt_bytes as usize),
            exit_code,
            cli_duration_ms: None,
        });
    }

    fn result(&mut self, obj: &Map<String, Value>, out: &mut Vec<Event>) {
        self.result_seen = true;
        self.call_open = false;
        let error = obj.get("error");
        let error_type = error.and_then(|e| str_field(e, "type"));
        let status_ok = str_field_of(obj, "status") == Some("success");
        let success = status_ok && error.is_none() && self.errors.is_empty();
        let max_turns_reached = self.turn_limit || error_type == Some(TURN_LIMIT_ERROR);
        let mut messages: Vec<String> = error
            .and_then(|e| str_field(e, "message"))
            .map(String::from)
            .into_iter()
            .collect();
        messages.extend(self.errors.iter().cloned());
        if !success && messages.is_empty() {
            messages.push(format!(
                "the CLI ended with status {:?}",
                str_field_of(obj, "status").unwrap_or("")
            ));
        }
        let stats = obj.get("stats");
        out.push(Event::FinalResult {
            success,
            error_kind: (!success).then(|| self.error_kind(error_type)),
            error_message: (!success).then(|| messages.join("\n")),
            max_turns_reached,
            // Gemini CLI reports no count of model calls.
            num_turns: None,
            cost_usd: None,
            duration_ms: stats.and_then(|s| u64_field(s, "duration_ms")),
            text: (!self.text.is_empty()).then(|| self.text.clone()),
            usage: stats.map(usage_of),
        });
    }

    fn error_kind(&self, error_type: Option<&str>) -> String {
        match error_type {
            Some(kind) => kind.to_string(),
            None if self.turn_limit => "max_session_turns".into(),
            None if !self.errors.is_empty() => "error_event".into(),
            None => "error".into(),
        }
    }
}

fn str_field_of<'a>(obj: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    obj.get(key).and_then(Value::as_str)
}

fn string(obj: &Map<String, Value>, key: &str) -> Option<String> {
    str_field_of(obj, key).map(String::from)
}

/// Gemini CLI's turn-cap messages: "Maximum session turns exceeded" (error line) and
/// "Reached max session turns for this session." (`FatalTurnLimitedError`).
fn is_turn_limit(message: &str) -> bool {
    let lower = message.to_ascii_lowercase();
    lower.contains("maximum session turns") || lower.contains("max session turns")
}

/// `result.stats`: `input_tokens` is the whole prompt, split into `cached` (cache reads)
/// and `input` (the rest). `total_tokens` also counts thinking tokens, which
/// `output_tokens` leaves out: the difference is added to the output (reasoning included).
fn usage_of(stats: &Value) -> Usage {
    let prompt = u64_field(stats, "input_tokens").unwrap_or(0);
    let cached = u64_field(stats, "cached").unwrap_or(0);
    let input = u64_field(stats, "input").unwrap_or(prompt.saturating_sub(cached));
    let output = u64_field(stats, "output_tokens").unwrap_or(0);
    let total = u64_field(stats, "total_tokens").unwrap_or(0);
    Usage {
        input_tokens: input,
        output_tokens: output.max(total.saturating_sub(prompt)),
        cache_read_tokens: cached,
        // Gemini CLI's `result.stats` carries cache reads (`cached`) but no cache writes:
        // unknown, not zero.
        cache_write_tokens: None,
    }
}

#[cfg(test)]
mod tests;
