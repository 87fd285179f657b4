//! The Pi stream reducer (`pi -p --mode json`, Pi 0.73.x).
//!
//! - `turn_start` begins one main-thread model call (a Pi turn is one model response and
//!   the tool runs it asks for): it is the [`ModelCallStarted`](Event::ModelCallStarted)
//!   boundary. A stream without `turn_start` lines (older or hand-written) gets one at the
//!   first sign of each assistant message instead.
//! - Assistant `message_end` → [`AssistantMessage`](Event::AssistantMessage) with the final
//!   content: message id = `responseId` (else `pi-msg-<n>`), text = its `text` blocks,
//!   `usage` from Pi's per-call `{input, output, cacheRead, cacheWrite}` (already disjoint)
//!   and `cost_usd` = `usage.cost.total`. Usage is per model call, so the collector sums the
//!   messages. `message_update` lines are never needed: some versions repeat the whole
//!   accumulated message in each (B21), later ones send deltas only; only `text_delta`
//!   deltas are kept, to report a message the stream cut before its `message_end`.
//! - `tool_execution_start` / `tool_execution_end` → tool start / end by `toolCallId`;
//!   `isError: true` = error, except Pi's `Tool <name> not found` (the model called a tool
//!   Pi does not have), which never ran: `denied`, not a command. The exit code comes from `result.details.exit_code` or the
//!   `Command exited with code N` line Pi's `bash` appends on failure.
//! - `agent_end` → [`FinalResult`](Event::FinalResult): success unless the last assistant
//!   message (of `agent_end.messages`, else of the stream) has `stopReason` `error` /
//!   `aborted` or an `errorMessage`; `num_turns` = the reducer's count of model calls (Pi
//!   reports none). The result is emitted at the end of the stream, because a later
//!   `agent_start` / `turn_start` (an automatic retry) reopens the run; `willRetry: true`
//!   is not an end at all (a `retry` diagnostic). Without `agent_end` (B22), a stream that
//!   ends after a `turn_end` whose message did not ask for tools still gets its result,
//!   derived the same way; a stream cut inside a run gets none (the host reports
//!   `incomplete`).
//! - `auto_retry_start` (Pi's automatic retry after a failed call, B47) →
//!   [`ModelCallRetried`](Event::ModelCallRetried) with the attempt, delay, error and HTTP
//!   status; when the last call's message failed, that attempt is abandoned (`call_started`,
//!   its message id) and no longer counted in `num_turns`. `auto_retry_end {success:
//!   false}` (retries exhausted, B47b) abandons the last attempt too and fails the run with
//!   `finalError`, whatever the exit code (json mode exits 0); `{success: true}` is a
//!   `retry` diagnostic.
//! - Compactions, unknown types and broken lines become diagnostics.

use harness_kit::reduce::HashSet;
use harness_kit::reduce::{IdMaker, decode_object, type_diagnostic};
use harness_kit::{Event, Reducer, ReducerConfig, Usage, str_field, truncated_line, u64_field};
use serde_json::Value;

/// The Pi reducer's state for one `pi -p --mode json` stream (Pi 0.73.1; see the module docs
/// for the rules).
pub struct PiReducer {
    config: ReducerConfig,
    /// A `turn_start` opened a model call whose assistant message has not begun yet.
    call_awaiting_message: bool,
    /// The assistant message being streamed: the text of its `text_delta`s so far.
    streaming: Option<String>,
    /// A `turn_start` has not been answered by `turn_end` yet.
    turn_open: bool,
    /// The open turn's assistant message has ended.
    turn_had_message: bool,
    /// A `turn_end` was seen.
    seen_turn_end: bool,
    /// Tool calls started / finished (ids).
    tools_started: HashSet<String>,
    tools_finished: HashSet<String>,
    /// The last assistant message that ended.
    last_assistant: Option<Outcome>,
    /// Main-thread model calls so far (less the failed attempts the CLI retried).
    main_calls: u32,
    /// The last call's assistant message failed (its id): the attempt a following
    /// `auto_retry_start` abandons.
    failed_call: Option<String>,
    /// The result of the last finished agent run, emitted at the end of the stream.
    pending_final: Option<Event>,
    /// Ids for messages without a `responseId`.
    made_up_ids: IdMaker,
}

/// What an assistant message says about how the run went.
#[derive(Debug, Clone, PartialEq)]
struct Outcome {
    text: String,
    stop_reason: Option<String>,
    error_message: Option<String>,
}

impl Outcome {
    fn of(message: &Value) -> Outcome {
        Outcome {
            text: text_of(message),
            stop_reason: str_field(message, "stopReason").map(String::from),
            error_message: str_field(message, "errorMessage").map(String::from),
        }
    }

    fn failed(&self) -> bool {
        matches!(self.stop_reason.as_deref(), Some("error" | "aborted"))
            || self.error_message.is_some()
    }
}

impl Reducer for PiReducer {
    fn new(config: ReducerConfig) -> Self {
        PiReducer {
            config,
            call_awaiting_message: false,
            streaming: None,
            turn_open: false,
            turn_had_message: false,
            seen_turn_end: false,
            tools_started: HashSet::default(),
            tools_finished: HashSet::default(),
            last_assistant: None,
            main_calls: 0,
            failed_call: None,
            pending_final: None,
            made_up_ids: IdMaker::new("pi-msg"),
        }
    }

    fn feed(&mut self, line: &[u8], _stamp_us: u64) -> Vec<Event> {
        let (obj, mut out) = match decode_object(line) {
            Ok(read) => read,
            Err(events) => return events,
        };
        let role = obj
            .get("message")
            .and_then(|m| str_field(m, "role"))
            .unwrap_or("");
        match obj.get("type").and_then(Value::as_str).unwrap_or("") {
            "session" => out.push(Event::SessionStarted {
                session_id: obj.get("id").and_then(Value::as_str).map(String::from),
                cli_version: None,
                model: None,
                tools: Vec::new(),
            }),
            // A new agent run (Pi's automatic retry): the earlier run's end is not the end.
            "agent_start" => self.pending_final = None,
            "turn_start" => {
                self.flush_partial(&mut out);
                self.pending_final = None;
                self.main_calls += 1;
                self.turn_open = true;
                self.turn_had_message = false;
                self.call_awaiting_message = true;
                out.push(Event::ModelCallStarted {
                    message_id: None,
                    parent_call_id: None,
                });
            }
            "message_start" if role == "assistant" => self.begin_message(&mut out),
            "message_update" => {
                self.begin_message(&mut out);
                let update = obj.get("assistantMessageEvent");
                if update.and_then(|u| str_field(u, "type")) == Some("text_delta")
                    && let Some(delta) = update.and_then(|u| str_field(u, "delta"))
                    && let Some(text) = self.streaming.as_mut()
                {
                    text.push_str(delta);
                }
            }
            "message_end" if role == "assistant" => {
                self.end_message(&obj["message"], &mut out);
            }
            // User and tool-result messages: the tool ends carry the same facts.
            "message_start" | "message_end" => {}
            "tool_execution_start" => self.tool_start(&obj, &mut out),
            "tool_execution_update" => {}
            "tool_execution_end" => self.tool_end(&obj, &mut out),
            "turn_end" => {
                if !self.turn_had_message
                    && let Some(message) = obj.get("message").filter(|_| role == "assistant")
                {
                    self.end_message(message, &mut out);
                }
                self.turn_open = false;
                self.seen_turn_end = true;
                self.call_awaiting_message = false;
            }
            "agent_end" => {
                if obj.get("willRetry").and_then(Value::as_bool) == Some(true) {
                    out.push(Event::diagnostic(
                        "retry",
                        "agent_end with willRetry: the CLI retries the failed call",
                        line,
                    ));
                } else {
                    let messages = obj.get("messages").and_then(Value::as_array);
                    self.pending_final = Some(self.final_result(messages));
                }
            }
            // The newer terminal event after agent_end: the end when agent_end was missed.
            "agent_settled" => {
                if self.pending_final.is_none() {
                    self.pending_final = Some(self.final_result(None));
                }
            }
            // The failed attempt is not a model call: the CLI waits `delayMs`, then starts
            // a new agent run (B47).
            "auto_retry_start" => {
                let field = |key: &str| obj.get(key).and_then(Value::as_u64);
                let error = obj
                    .get("errorMessage")
                    .and_then(Value::as_str)
                    .map(String::from);
                out.push(self.abandon_failed_call(
                    field("attempt").map(|a| a as u32),
                    field("delayMs"),
                    error,
                ));
            }
            "auto_retry_end" => {
                if obj.get("success").and_then(Value::as_bool) == Some(false) {
                    // Retries exhausted (B47b): the last attempt failed too, and is no
                    // call either; the run failed, whatever the exit code says.
                    let error = obj
                        .get("finalError")
                        .and_then(Value::as_str)
                        .map(String::from);
                    out.push(self.abandon_failed_call(None, None, error.clone()));
                    self.pending_final = Some(Event::FinalResult {
                        success: false,
                        error_kind: Some("retries_exhausted".into()),
                        error_message: Some(error.unwrap_or_else(|| {
                            "the CLI's automatic retries were exhausted".into()
                        })),
                        max_turns_reached: false,
                        num_turns: Some(self.main_calls),
                        cost_usd: None,
                        duration_ms: None,
                        text: None,
                        usage: None,
                    });
                } else {
                    out.push(Event::diagnostic(
                        "retry",
                        "auto_retry_end: the CLI's automatic retry recovered",
                        line,
                    ));
                }
            }
            "compaction_start" | "auto_compaction_start" => out.push(Event::diagnostic(
                "compact_boundary",
                "the CLI starts compacting the context",
                line,
            )),
            "compaction_end" | "auto_compaction_end" => out.push(Event::diagnostic(
                "compact_boundary",
                "the CLI compacted the context",
                line,
            )),
            other => out.push(type_diagnostic(other, line)),
        }
        out
    }

    fn finish(&mut self, truncated: Option<&[u8]>) -> Vec<Event> {
        let mut out = Vec::new();
        out.extend(truncated_line(truncated));
        if let Some(result) = self.pending_final.take() {
            out.push(result);
            return out;
        }
        let finished_turn = self.seen_turn_end
            && !self.turn_open
            && self.streaming.is_none()
            && self
                .last_assistant
                .as_ref()
                .is_some_and(|a| a.stop_reason.as_deref() != Some("toolUse"));
        if finished_turn {
            out.push(Event::diagnostic(
                "missing_terminal_event",
                "the stream ended after a finished turn without agent_end; the result is \
                 derived from the last assistant message",
                b"",
            ));
            out.push(self.final_result(None));
        } else {
            self.flush_partial(&mut out);
            out.push(Event::diagnostic(
                "missing_terminal_event",
                if self.turn_open {
                    "the stream ended inside a turn (no turn_end or agent_end)"
                } else {
                    "the stream ended without agent_end"
                },
                b"",
            ));
        }
        out
    }
}

impl PiReducer {
    /// The first sign of an assistant message: opens a model call when no `turn_start`
    /// opened one for it.
    fn begin_message(&mut self, out: &mut Vec<Event>) {
        if self.streaming.is_some() {
            return;
        }
        if !self.call_awaiting_message {
            self.main_calls += 1;
            out.push(Event::ModelCallStarted {
                message_id: None,
                parent_call_id: None,
            });
        }
        self.call_awaiting_message = false;
        self.streaming = Some(String::new());
    }

    fn end_message(&mut self, message: &Value, out: &mut Vec<Event>) {
        self.begin_message(out);
        self.streaming = None;
        self.turn_had_message = true;
        let id = match str_field(message, "responseId") {
            Some(id) => id.to_string(),
            None => self.made_up_ids.next_id(),
        };
        let usage = message.get("usage").filter(|u| u.is_object());
        let outcome = Outcome::of(message);
        self.failed_call = outcome.failed().then(|| id.clone());
        out.push(Event::AssistantMessage {
            message_id: id,
            parent_call_id: None,
            text: outcome.text.clone(),
            usage: usage.map(|u| Usage {
                input_tokens: u64_field(u, "input").unwrap_or(0),
                output_tokens: u64_field(u, "output").unwrap_or(0),
                cache_read_tokens: u64_field(u, "cacheRead").unwrap_or(0),
                cache_write_tokens: Some(u64_field(u, "cacheWrite").unwrap_or(0)),
            }),
            cost_usd: usage
                .and_then(|u| u.get("cost"))
                .and_then(|c| c.get("total"))
                .and_then(Value::as_f64),
        });
        self.last_assistant = Some(outcome);
    }

    /// A retry (or the end of retrying) of the last call, when its message failed: that
    /// attempt is un-counted. Without a failed message the retry abandons no call.
    fn abandon_failed_call(
        &mut self,
        attempt: Option<u32>,
        delay_ms: Option<u64>,
        error: Option<String>,
    ) -> Event {
        let abandoned = self.failed_call.take();
        if abandoned.is_some() {
            self.main_calls = self.main_calls.saturating_sub(1);
        }
        Event::ModelCallRetried {
            call_started: abandoned.is_some(),
            abandoned_message_id: abandoned,
            parent_call_id: None,
            attempt,
            delay_ms,
            // Pi's provider errors start with the HTTP status ("429 Rate limit ...").
            status: error
                .as_deref()
                .and_then(|e| e.split_whitespace().next())
                .filter(|w| w.len() == 3)
                .and_then(|w| w.parse().ok()),
            error,
            announced: true,
        }
    }

    /// Reports a message the stream cut before its `message_end`, with its streamed text.
    fn flush_partial(&mut self, out: &mut Vec<Event>) {
        if let Some(text) = self.streaming.take() {
            let id = self.made_up_ids.next_id();
            out.push(Event::AssistantMessage {
                message_id: id,
                parent_call_id: None,
                text,
                usage: None,
                cost_usd: None,
            });
        }
    }

    fn final_result(&self, messages: Option<&Vec<Value>>) -> Event {
        let last = messages
            .and_then(|m| {
                m.iter()
                    .rfind(|m| str_field(m, "role") == Some("assistant"))
            })
            .map(Outcome::of)
            .or_else(|| self.last_assistant.clone());
        let (success, error_kind, error_message) = match &last {
            Some(a) if a.failed() => (
                false,
                Some(a.stop_reason.clone().unwrap_or_else(|| "error".into())),
                Some(
                    a.error_message
                        .clone()
                        .unwrap_or_else(|| "the last assistant message ended in an error".into()),
                ),
            ),
            Some(_) => (true, None, None),
            None => (
                false,
                Some("no_assistant_message".into()),
                Some("the run ended without an assistant message".into()),
            ),
        };
        Event::FinalResult {
            success,
            error_kind,
            error_message,
            max_turns_reached: false,
            num_turns: Some(self.main_calls),
            // Pi reports cost and usage per message only: the collector sums the messages.
            cost_usd: None,
            duration_ms: None,
            text: last.map(|a| a.text),
            usage: None,
        }
    }
}

/// The concatenated `text` blocks of a message's (or a tool result's) `content`.
fn text_of(message: &Value) -> String {
    match message.get("content") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter(|b| str_field(b, "type").is_none_or(|t| t == "text"))
            .filter_map(|b| str_field(b, "text"))
            .collect(),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests;
mod tools;
