//! The Claude Code stream reducer (stream-json, Claude Code 2.1.x).
//!
//! - Assistant lines are grouped by `message.id`: each line adds content blocks to its
//!   message; the message is re-emitted with all its text so far and the latest usage (the
//!   collector counts usage once per id, and the later copy wins for output tokens).
//! - `tool_use` blocks start tool calls (once per id); `tool_result` blocks in `user` lines
//!   finish them, `is_error: true` = error.
//! - Sub-agent lines are attributed by `parent_tool_use_id`, never by order.
//! - `stream_event` partial messages: `message_start` starts a model call, and a
//!   `message_delta`'s usage updates the message's output tokens.
//! - `rate_limit_event`, `system/compact_boundary`, unknown types and broken lines become
//!   diagnostics.

use harness_kit::{
    Event, ParsedLine, Reducer, ReducerConfig, ToolStatus, Usage, excerpt, parse_json_line,
    str_field, truncated_line, u64_field,
};
use serde_json::{Map, Value};
use std::collections::{HashMap, HashSet};

/// The Claude Code reducer's state for one stream.
pub struct ClaudeReducer {
    config: ReducerConfig,
    /// Messages seen so far, by message id.
    messages: HashMap<String, Message>,
    /// The message a partial-message stream is on, by thread (`None` = main thread).
    streaming: HashMap<Option<String>, String>,
    /// Tool calls started (ids), so a repeated block does not start one twice.
    tools_started: HashSet<String>,
    /// Tool calls finished (ids), so a repeated result does not finish one twice.
    tools_finished: HashSet<String>,
    /// Text of the last main-thread message, to rebuild an empty `result` (B01).
    last_main_text: String,
    /// Count of messages without an id, for made-up ids.
    anonymous: u32,
}

struct Message {
    parent: Option<String>,
    text: String,
    usage: Option<Usage>,
}

impl Reducer for ClaudeReducer {
    fn new(config: ReducerConfig) -> Self {
        ClaudeReducer {
            config,
            messages: HashMap::new(),
            streaming: HashMap::new(),
            tools_started: HashSet::new(),
            tools_finished: HashSet::new(),
            last_main_text: String::new(),
            anonymous: 0,
        }
    }

    fn feed(&mut self, line: &[u8], _stamp_us: u64) -> Vec<Event> {
        let obj = match parse_json_line(line) {
            ParsedLine::Object(obj) => obj,
            ParsedLine::Blank => return Vec::new(),
            ParsedLine::Bad(diagnostic) => return vec![diagnostic],
        };
        let mut out = Vec::new();
        let kind = obj.get("type").and_then(Value::as_str).unwrap_or("");
        let parent = obj
            .get("parent_tool_use_id")
            .and_then(Value::as_str)
            .map(String::from);
        match kind {
            "system" => self.system(&obj, line, &mut out),
            "assistant" => self.assistant(&obj, parent, line, &mut out),
            "user" => self.user(&obj, &mut out),
            "stream_event" => self.stream_event(&obj, parent, &mut out),
            "result" => self.result(&obj, &mut out),
            "rate_limit_event" => {
                let status = obj
                    .get("rate_limit_info")
                    .and_then(|i| str_field(i, "status"))
                    .unwrap_or("unknown");
                let message = if status == "rejected" {
                    "warning: the CLI reports its rate limit was hit (status rejected)".to_string()
                } else {
                    format!("rate limit status: {status}")
                };
                out.push(Event::diagnostic("rate_limit", message, line));
            }
            "" => out.push(Event::diagnostic(
                "missing_field",
                "line has no `type` field",
                line,
            )),
            other => out.push(Event::diagnostic(
                "unknown_type",
                format!("unknown line type `{other}`"),
                line,
            )),
        }
        out
    }

    fn finish(&mut self, truncated: Option<&[u8]>) -> Vec<Event> {
        truncated_line(truncated).into_iter().collect()
    }
}

impl ClaudeReducer {
    fn system(&mut self, obj: &Map<String, Value>, line: &[u8], out: &mut Vec<Event>) {
        match obj.get("subtype").and_then(Value::as_str).unwrap_or("") {
            "init" => out.push(Event::SessionStarted {
                session_id: obj
                    .get("session_id")
                    .and_then(Value::as_str)
                    .map(String::from),
                cli_version: obj
                    .get("claude_code_version")
                    .and_then(Value::as_str)
                    .map(String::from),
                model: obj.get("model").and_then(Value::as_str).map(String::from),
                tools: obj
                    .get("tools")
                    .and_then(Value::as_array)
                    .map(|tools| {
                        tools
                            .iter()
                            .filter_map(Value::as_str)
                            .map(String::from)
                            .collect()
                    })
                    .unwrap_or_default(),
            }),
            // "requesting" before each model request: no fact beyond what follows.
            "status" => {}
            "compact_boundary" => {
                let meta = obj.get("compact_metadata");
                let trigger = meta.and_then(|m| str_field(m, "trigger")).unwrap_or("?");
                let pre = meta.and_then(|m| u64_field(m, "pre_tokens"));
                out.push(Event::diagnostic(
                    "compact_boundary",
                    format!(
                        "context compacted (trigger {trigger}, {} tokens before)",
                        pre.map_or("?".into(), |p| p.to_string())
                    ),
                    line,
                ));
            }
            other => out.push(Event::diagnostic(
                "unknown_subtype",
                format!("unknown system subtype `{other}`"),
                line,
            )),
        }
    }

    fn assistant(
        &mut self,
        obj: &Map<String, Value>,
        parent: Option<String>,
        line: &[u8],
        out: &mut Vec<Event>,
    ) {
        let Some(message) = obj.get("message") else {
            out.push(Event::diagnostic(
                "missing_field",
                "assistant line has no `message`",
                line,
            ));
            return;
        };
        let id = match str_field(message, "id") {
            Some(id) => id.to_string(),
            None => {
                self.anonymous += 1;
                format!("claude-code-msg-{}", self.anonymous)
            }
        };
        self.open_message(&id, &parent, out);
        let usage = message.get("usage").map(usage_of);
        let blocks = message
            .get("content")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        let msg = self.messages.get_mut(&id).expect("opened above");
        for block in blocks {
            match str_field(block, "type") {
                Some("text") => msg.text.push_str(str_field(block, "text").unwrap_or("")),
                Some("tool_use") => {
                    let Some(call_id) = str_field(block, "id") else {
                        continue;
                    };
                    if self.tools_started.insert(call_id.to_string()) {
                        out.push(Event::ToolCallStarted {
                            call_id: call_id.to_string(),
                            name: str_field(block, "name").unwrap_or("").to_string(),
                            input_json: block.get("input").unwrap_or(&Value::Null).to_string(),
                            parent_call_id: parent.clone(),
                        });
                    }
                }
                _ => {}
            }
        }
        if let Some(usage) = usage {
            // The later copy wins for output tokens (a streamed message's final count).
            msg.usage = Some(match msg.usage {
                Some(old) => Usage {
                    output_tokens: usage.output_tokens.max(old.output_tokens),
                    ..usage
                },
                None => usage,
            });
        }
        if parent.is_none() {
            self.last_main_text = msg.text.clone();
        }
        out.push(message_event(&id, msg));
    }

    /// Starts a model call the first time a message id is seen.
    fn open_message(&mut self, id: &str, parent: &Option<String>, out: &mut Vec<Event>) {
        if self.messages.contains_key(id) {
            return;
        }
        self.messages.insert(
            id.to_string(),
            Message {
                parent: parent.clone(),
                text: String::new(),
                usage: None,
            },
        );
        out.push(Event::ModelCallStarted {
            message_id: Some(id.to_string()),
            parent_call_id: parent.clone(),
        });
    }

    fn user(&mut self, obj: &Map<String, Value>, out: &mut Vec<Event>) {
        let blocks = obj
            .get("message")
            .and_then(|m| m.get("content"))
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        for block in blocks {
            if str_field(block, "type") != Some("tool_result") {
                continue;
            }
            let Some(call_id) = str_field(block, "tool_use_id") else {
                continue;
            };
            if !self.tools_finished.insert(call_id.to_string()) {
                continue;
            }
            let is_error = block.get("is_error").and_then(Value::as_bool) == Some(true);
            let output = result_text(block.get("content"));
            let exit_code = if is_error {
                exit_code_of(&output)
            } else {
                None
            };
            out.push(Event::ToolCallFinished {
                call_id: call_id.to_string(),
                status: if is_error {
                    ToolStatus::Error
                } else {
                    ToolStatus::Ok
                },
                output_excerpt: excerpt(&output, self.config.excerpt_bytes as usize),
                exit_code,
                cli_duration_ms: None,
            });
        }
    }

    fn stream_event(
        &mut self,
        obj: &Map<String, Value>,
        parent: Option<String>,
        out: &mut Vec<Event>,
    ) {
        let Some(event) = obj.get("event") else {
            return;
        };
        match str_field(event, "type") {
            Some("message_start") => {
                let Some(message) = event.get("message") else {
                    return;
                };
                let Some(id) = str_field(message, "id") else {
                    return;
                };
                self.open_message(id, &parent, out);
                self.streaming.insert(parent, id.to_string());
            }
            Some("message_delta") => {
                let Some(id) = self.streaming.get(&parent) else {
                    return;
                };
                let (Some(msg), Some(delta_usage)) =
                    (self.messages.get_mut(id), event.get("usage"))
                else {
                    return;
                };
                let delta_usage = usage_of(delta_usage);
                let usage = msg.usage.get_or_insert(delta_usage);
                usage.output_tokens = usage.output_tokens.max(delta_usage.output_tokens);
                out.push(message_event(id, msg));
            }
            _ => {}
        }
    }

    fn result(&mut self, obj: &Map<String, Value>, out: &mut Vec<Event>) {
        let subtype = obj.get("subtype").and_then(Value::as_str).unwrap_or("");
        let is_error = obj
            .get("is_error")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let success = subtype == "success" && !is_error;
        let mut text = obj.get("result").and_then(Value::as_str).map(String::from);
        if text.as_deref().is_none_or(str::is_empty) && !self.last_main_text.is_empty() {
            out.push(Event::diagnostic(
                "result_text_reconstructed",
                "`result` text was empty or missing; rebuilt from the last assistant message",
                b"",
            ));
            text = Some(self.last_main_text.clone());
        }
        let error_message = obj
            .get("error")
            .and_then(Value::as_str)
            .map(String::from)
            .or_else(|| {
                let errors: Vec<&str> = obj
                    .get("errors")?
                    .as_array()?
                    .iter()
                    .filter_map(Value::as_str)
                    .collect();
                (!errors.is_empty()).then(|| errors.join("; "))
            })
            .or_else(|| (!success).then(|| format!("the CLI ended with `{subtype}`")));
        out.push(Event::FinalResult {
            success,
            error_kind: (!success).then(|| subtype.to_string()),
            error_message: if success { None } else { error_message },
            max_turns_reached: subtype == "error_max_turns",
            num_turns: obj
                .get("num_turns")
                .and_then(Value::as_u64)
                .map(|n| n as u32),
            cost_usd: obj.get("total_cost_usd").and_then(Value::as_f64),
            duration_ms: obj.get("duration_ms").and_then(Value::as_u64),
            text,
            usage: obj.get("usage").map(usage_of),
        });
    }
}

fn message_event(id: &str, msg: &Message) -> Event {
    Event::AssistantMessage {
        message_id: id.to_string(),
        parent_call_id: msg.parent.clone(),
        text: msg.text.clone(),
        usage: msg.usage,
        cost_usd: None,
    }
}

/// Anthropic usage: `input_tokens` excludes cache reads and writes already.
fn usage_of(v: &Value) -> Usage {
    Usage {
        input_tokens: u64_field(v, "input_tokens").unwrap_or(0),
        output_tokens: u64_field(v, "output_tokens").unwrap_or(0),
        cache_read_tokens: u64_field(v, "cache_read_input_tokens").unwrap_or(0),
        cache_write_tokens: u64_field(v, "cache_creation_input_tokens").unwrap_or(0),
    }
}

/// A tool_result's content: a string, or text blocks.
fn result_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter_map(|b| str_field(b, "text"))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// Claude Code's Bash tool reports a failed command as "Exit code N\n<output>".
fn exit_code_of(output: &str) -> Option<i32> {
    output
        .strip_prefix("Exit code ")?
        .split(|c: char| !c.is_ascii_digit() && c != '-')
        .next()?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reduce(text: &str) -> Vec<Event> {
        harness_kit::testing::reduce_text::<ClaudeReducer>(text, None)
    }

    #[test]
    fn groups_by_message_id_and_pairs_tools() {
        let events = reduce(concat!(
            r#"{"type":"assistant","message":{"id":"m1","content":[{"type":"text","text":"a"}],"usage":{"input_tokens":5,"output_tokens":1}},"parent_tool_use_id":null}"#,
            "\n",
            r#"{"type":"assistant","message":{"id":"m1","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"ls x"}}],"usage":{"input_tokens":5,"output_tokens":7}},"parent_tool_use_id":null}"#,
            "\n",
            r#"{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","content":"Exit code 2\nls: x","is_error":true}]}}"#,
        ));
        let starts = events
            .iter()
            .filter(|e| matches!(e, Event::ModelCallStarted { .. }))
            .count();
        assert_eq!(starts, 1);
        assert!(events.contains(&Event::ToolCallFinished {
            call_id: "t1".into(),
            status: ToolStatus::Error,
            output_excerpt: "Exit code 2\nls: x".into(),
            exit_code: Some(2),
            cli_duration_ms: None,
        }));
        let Some(Event::AssistantMessage { usage, text, .. }) = events
            .iter()
            .rfind(|e| matches!(e, Event::AssistantMessage { .. }))
        else {
            panic!("no message")
        };
        assert_eq!(text, "a");
        assert_eq!(usage.unwrap().output_tokens, 7);
    }

    #[test]
    fn sub_agent_attributed_by_parent_id() {
        let events = reduce(
            r#"{"type":"assistant","parent_tool_use_id":"task1","message":{"id":"m9","content":[{"type":"tool_use","id":"t9","name":"Bash","input":{}}]}}"#,
        );
        assert!(events.contains(&Event::ModelCallStarted {
            message_id: Some("m9".into()),
            parent_call_id: Some("task1".into())
        }));
        assert!(events.iter().any(|e| matches!(e,
            Event::ToolCallStarted { parent_call_id: Some(p), .. } if p == "task1")));
    }

    #[test]
    fn empty_result_text_is_rebuilt() {
        let events = reduce(concat!(
            r#"{"type":"assistant","message":{"id":"m1","content":[{"type":"text","text":"the answer"}]},"parent_tool_use_id":null}"#,
            "\n",
            r#"{"type":"result","subtype":"success","is_error":false,"result":"","num_turns":1}"#,
        ));
        assert!(events.iter().any(|e| matches!(e,
            Event::FinalResult { text: Some(t), success: true, .. } if t == "the answer")));
        assert!(events.iter().any(|e| matches!(e,
            Event::Diagnostic { kind, .. } if kind == "result_text_reconstructed")));
    }

    #[test]
    fn unknown_and_broken_lines_are_diagnostics() {
        let events = reduce(
            "{\"type\":\"tool_progress\"}\nnot json\n{\"type\":\"system\",\"subtype\":\"state\"}",
        );
        let kinds: Vec<&str> = events
            .iter()
            .map(|e| match e {
                Event::Diagnostic { kind, .. } => kind.as_str(),
                _ => "",
            })
            .collect();
        assert_eq!(kinds, ["unknown_type", "not_json", "unknown_subtype"]);
    }
}
