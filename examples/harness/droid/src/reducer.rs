//! The Droid stream reducer (`droid exec -o stream-json`, Droid 0.225.x).
//!
//! - **Model calls**: a reply's text (`message`, role `assistant`, `id`) and its tool calls
//!   (`tool_call`, `messageId`) share one message id; a reply of tool calls only has a
//!   `messageId` no `message` line names. So each new message id is a new main-thread
//!   model call, its `ModelCallStarted` at its first line. The stream gives no per-call
//!   usage.
//! - **Tools**: `tool_call` starts a call, the first `tool_result` with its `id` ends it
//!   (`isError: true` = error); a repeated result is a `duplicate_tool_result` diagnostic,
//!   one for an unknown id an `orphan_tool_result`. The exit code comes from the last
//!   `[Process exited with code N]` of the result's text.
//! - **End**: `completion` becomes the `FinalResult` (its `usage` the run's totals, no
//!   cost). An `error` line marks the run failed; a stream that ends without a
//!   `completion` ends in a failed `FinalResult` when an error was seen, else an
//!   `incomplete_run` diagnostic; one with no line at all in a `no_output` failure.

use harness_kit::reduce::{HashSet, decode_object, no_output, type_diagnostic};
use harness_kit::{
    Event, Reducer, ReducerConfig, ToolStatus, Usage, excerpt, str_field, truncated_line, u64_field,
};
use serde_json::{Map, Value};

/// What Droid appends to a shell command's output.
const EXIT_MARKER: &str = "[Process exited with code ";

/// The Droid reducer's state for one stream.
pub struct DroidReducer {
    config: ReducerConfig,
    saw_line: bool,
    /// Message ids that started a model call.
    calls: HashSet<String>,
    /// The current call's id and text.
    current: Option<String>,
    text: String,
    tools_started: HashSet<String>,
    tools_finished: HashSet<String>,
    /// Messages of `error` lines.
    errors: Vec<String>,
    completed: bool,
}

impl Reducer for DroidReducer {
    fn new(config: ReducerConfig) -> Self {
        DroidReducer {
            config,
            saw_line: false,
            calls: HashSet::default(),
            current: None,
            text: String::new(),
            tools_started: HashSet::default(),
            tools_finished: HashSet::default(),
            errors: Vec::new(),
            completed: false,
        }
    }

    fn feed(&mut self, line: &[u8], _stamp_us: u64) -> Vec<Event> {
        self.saw_line = true;
        let (obj, mut out) = match decode_object(line) {
            Ok(read) => read,
            Err(events) => return events,
        };
        match field(&obj, "type").unwrap_or("") {
            "system" => match field(&obj, "subtype") {
                Some("init") => out.push(Event::SessionStarted {
                    session_id: field(&obj, "session_id").map(String::from),
                    cli_version: None,
                    model: field(&obj, "model").map(String::from),
                    tools: obj
                        .get("tools")
                        .and_then(Value::as_array)
                        .map(|t| {
                            t.iter()
                                .filter_map(Value::as_str)
                                .map(String::from)
                                .collect()
                        })
                        .unwrap_or_default(),
                }),
                other => out.push(Event::diagnostic(
                    "unknown_subtype",
                    format!("unknown system subtype {other:?}"),
                    line,
                )),
            },
            "message" => self.message(&obj, line, &mut out),
            "tool_call" => self.tool_call(&obj, line, &mut out),
            "tool_result" => self.tool_result(&obj, line, &mut out),
            "error" => {
                let message = field(&obj, "message")
                    .or_else(|| obj.get("error").and_then(|e| str_field(e, "message")))
                    .unwrap_or("")
                    .to_string();
                self.errors.push(message);
            }
            "completion" => self.completion(&obj, &mut out),
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
            out.push(no_output("Droid", Some("see its exit code and stderr")));
        } else if !self.completed {
            if self.errors.is_empty() {
                out.push(Event::diagnostic(
                    "incomplete_run",
                    "the stream ended without a `completion` line",
                    b"",
                ));
            } else {
                out.push(Event::FinalResult {
                    success: false,
                    error_kind: Some("error_event".into()),
                    error_message: Some(self.errors.join("\n")),
                    max_turns_reached: false,
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

impl DroidReducer {
    /// Makes `id` the current call, starting it the first time it is seen.
    fn enter_call(&mut self, id: &str, out: &mut Vec<Event>) {
        if self.current.as_deref() == Some(id) {
            return;
        }
        self.current = Some(id.to_string());
        self.text.clear();
        if self.calls.insert(id.to_string()) {
            out.push(Event::ModelCallStarted {
                message_id: Some(id.to_string()),
                parent_call_id: None,
            });
        }
    }

    fn message(&mut self, obj: &Map<String, Value>, line: &[u8], out: &mut Vec<Event>) {
        match field(obj, "role") {
            // The prompt (the host records it).
            Some("user") => {}
            Some("assistant") => {
                let Some(id) = field(obj, "id") else {
                    out.push(Event::diagnostic(
                        "missing_field",
                        "assistant message has no `id`",
                        line,
                    ));
                    return;
                };
                self.enter_call(id, out);
                self.text.push_str(field(obj, "text").unwrap_or(""));
                out.push(Event::AssistantMessage {
                    message_id: id.to_string(),
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

    fn tool_call(&mut self, obj: &Map<String, Value>, line: &[u8], out: &mut Vec<Event>) {
        let (Some(call_id), Some(message_id)) = (field(obj, "id"), field(obj, "messageId")) else {
            out.push(Event::diagnostic(
                "missing_field",
                "tool_call line lacks `id` or `messageId`",
                line,
            ));
            return;
        };
        if !self.tools_started.insert(call_id.to_string()) {
            out.push(Event::diagnostic(
                "duplicate_tool_call",
                format!("tool call `{call_id}` was announced again"),
                line,
            ));
            return;
        }
        self.enter_call(message_id, out);
        out.push(Event::ToolCallStarted {
            call_id: call_id.to_string(),
            name: field(obj, "toolName").unwrap_or("").to_string(),
            input_json: obj.get("parameters").unwrap_or(&Value::Null).to_string(),
            parent_call_id: None,
        });
    }

    fn tool_result(&mut self, obj: &Map<String, Value>, line: &[u8], out: &mut Vec<Event>) {
        let Some(call_id) = field(obj, "id") else {
            out.push(Event::diagnostic(
                "missing_field",
                "tool_result line has no `id`",
                line,
            ));
            return;
        };
        if !self.tools_started.contains(call_id) {
            out.push(Event::diagnostic(
                "orphan_tool_result",
                format!("result for tool call `{call_id}`, which was never announced"),
                line,
            ));
            return;
        }
        if !self.tools_finished.insert(call_id.to_string()) {
            out.push(Event::diagnostic(
                "duplicate_tool_result",
                format!("a second result for tool call `{call_id}` (the first one counts)"),
                line,
            ));
            return;
        }
        let text = field(obj, "value")
            .or_else(|| obj.get("error").and_then(|e| str_field(e, "message")))
            .unwrap_or("");
        let status = match obj.get("isError").and_then(Value::as_bool) {
            Some(true) => ToolStatus::Error,
            Some(false) => ToolStatus::Ok,
            None => ToolStatus::Unknown,
        };
        out.push(Event::ToolCallFinished {
            call_id: call_id.to_string(),
            status,
            output_excerpt: excerpt(text, self.config.excerpt_bytes as usize),
            exit_code: exit_code_of(text),
            cli_duration_ms: None,
        });
    }

    fn completion(&mut self, obj: &Map<String, Value>, out: &mut Vec<Event>) {
        self.completed = true;
        let success = self.errors.is_empty();
        out.push(Event::FinalResult {
            success,
            error_kind: (!success).then(|| "error_event".to_string()),
            error_message: (!success).then(|| self.errors.join("\n")),
            max_turns_reached: false,
            num_turns: obj
                .get("numTurns")
                .and_then(Value::as_u64)
                .map(|n| n as u32),
            cost_usd: None,
            duration_ms: obj.get("durationMs").and_then(Value::as_u64),
            text: field(obj, "finalText").map(String::from),
            usage: obj.get("usage").filter(|u| u.is_object()).map(|u| Usage {
                input_tokens: u64_field(u, "input_tokens").unwrap_or(0),
                output_tokens: u64_field(u, "output_tokens").unwrap_or(0),
                cache_read_tokens: u64_field(u, "cache_read_input_tokens").unwrap_or(0),
                cache_write_tokens: u64_field(u, "cache_creation_input_tokens"),
            }),
        });
    }
}

fn field<'a>(obj: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    obj.get(key).and_then(Value::as_str)
}

/// N of the last `[Process exited with code N]` in a shell result's text.
fn exit_code_of(text: &str) -> Option<i32> {
    let at = text.rfind(EXIT_MARKER)? + EXIT_MARKER.len();
    text[at..].split(']').next()?.trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    type Reduced = harness_kit::testing::Reduced<DroidReducer>;

    fn live(scenario: &str) -> Reduced {
        Reduced::new(
            &std::fs::read_to_string(format!(
                "{}/../../../tests/corpus/live/droid/{scenario}.jsonl",
                env!("CARGO_MANIFEST_DIR")
            ))
            .unwrap(),
        )
    }

    #[test]
    fn hello_three_calls_two_tools_and_totals() {
        let r = live("hello");
        assert_eq!(r.turns(), 3);
        assert_eq!(
            r.tools(),
            [
                ("call_mock_0_0", "Create", Some(ToolStatus::Ok)),
                ("call_mock_1_0", "Execute", Some(ToolStatus::Ok)),
            ]
        );
        assert!(r.iter().any(|e| matches!(e,
            Event::ToolCallFinished { call_id, exit_code: Some(0), .. } if call_id == "call_mock_1_0")));
        let Some(Event::FinalResult {
            success: true,
            num_turns: Some(3),
            text: Some(text),
            usage: Some(usage),
            cost_usd: None,
            ..
        }) = r.final_result()
        else {
            panic!("{:?}", r.final_result())
        };
        assert_eq!(text, "done");
        assert_eq!((usage.input_tokens, usage.output_tokens), (24187, 42));
        assert!(r.kinds().is_empty(), "{:?}", r.kinds());
    }

    #[test]
    fn parallel_calls_share_their_reply() {
        let r = live("parallel");
        assert_eq!(r.turns(), 2);
        assert_eq!(r.tools().len(), 2);
    }

    #[test]
    fn a_failed_command_is_an_error_with_exit_code_2() {
        let r = live("tool_error");
        assert_eq!(r.turns(), 2);
        assert!(r.iter().any(|e| matches!(
            e,
            Event::ToolCallFinished {
                status: ToolStatus::Error,
                exit_code: Some(2),
                ..
            }
        )));
    }

    #[test]
    fn cut_and_silent_streams() {
        let r = Reduced::new(concat!(
            r#"{"type":"tool_call","id":"t1","messageId":"m1","toolName":"Execute","parameters":{}}"#,
            "\n",
            r#"{"type":"error","message":"boom"}"#,
        ));
        assert!(matches!(r.final_result(),
            Some(Event::FinalResult { success: false, error_message: Some(m), .. }) if m == "boom"));
        let r = Reduced::new("");
        assert!(matches!(r.final_result(),
            Some(Event::FinalResult { success: false, error_kind: Some(k), .. }) if k == "no_output"));
        let r = Reduced::new(r#"{"type":"surprise"}"#);
        assert_eq!(r.kinds(), ["unknown_type", "incomplete_run"]);
    }
}
