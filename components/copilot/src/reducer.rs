//! The Copilot CLI stream reducer (`copilot -p … --output-format json`, 1.0.x).
//!
//! - **Model calls**: each `assistant.turn_start` is one model request (ids
//!   `copilot-turn-<turnId>`: a tool-only reply has no `messageId` before its
//!   `assistant.message`), started at its first output (`assistant.message_start`,
//!   `assistant.message_delta`, `assistant.tool_call_delta` or `assistant.message`): a
//!   request that failed before any output is no call. `assistant.message`'s `content` is
//!   the call's one `AssistantMessage`, without usage (the stream has none).
//! - **Tools**: `tool.execution_start` starts a call (`toolCallId`, `toolName`,
//!   `arguments`), `tool.execution_complete` ends it: `success: false` is an error, and so
//!   is `success: true` with a non-zero `shellExecution.exitCode` (Copilot reports a
//!   failed command as a successful tool call); the exit code is that field. The output is
//!   `result.content`, else `error.message`. A call to a tool Copilot does not have ends
//!   `success: false` with `Tool '<its name>' does not exist.`: it never ran, so it is
//!   denied.
//! - **End**: `result` (`exitCode`, `usage.sessionDurationMs`) becomes the `FinalResult`,
//!   held back until the usage side file is read ([`Reducer::side_file`]): its
//!   `modelMetrics[*].usage` summed over models is the run's usage. Without that file the
//!   result has no usage and an `Unreported` usage event says why.
//!
//! Everything else (`session.*`, `user.message`, `model.call_*`, `tool.shell_output`,
//! `tool.execution_partial_result`, `assistant.turn_end`, `assistant.idle`) adds nothing.

use harness_kit::reduce::{
    HashMap, IdMaker, ResultWords, ToolIds, decode_object, no_output, type_diagnostic,
};
use harness_kit::{
    Event, Reducer, ReducerConfig, ToolStatus, UnreportedKind, Usage, excerpt, str_field,
    truncated_line, u64_field,
};
use serde_json::{Map, Value};

/// The types that carry nothing the events need.
const SKIPPED: [&str; 14] = [
    "session.skills_loaded",
    "session.mcp_servers_loaded",
    "session.tools_updated",
    "session.info",
    "session.background_tasks_changed",
    "user.message",
    "model.call_start",
    "model.call_finished",
    "model.call_final_result",
    "tool.shell_output",
    "tool.execution_partial_result",
    "assistant.turn_end",
    "assistant.idle",
    "assistant.reasoning_delta",
];

/// The Copilot reducer's state for one stream.
pub struct CopilotReducer {
    config: ReducerConfig,
    saw_line: bool,
    /// Model calls started; a call's id is `copilot-turn-<turnId>`, else made up
    /// (`copilot-turn-<n>` for the n-th call).
    calls: IdMaker,
    /// The current turn's `turnId` (`None`: it has none); `pending` until its first output
    /// starts the call.
    turn: Option<String>,
    pending: bool,
    tools: ToolIds,
    /// The tool name each started call gave (`tool.execution_start`), by call id.
    names: HashMap<String, String>,
    /// The `result` line's final result, held until the usage side file is read.
    result: Option<Event>,
    result_seen: bool,
    /// The last reply's text (the run's answer).
    last_text: Option<String>,
}

impl Reducer for CopilotReducer {
    fn new(config: ReducerConfig) -> Self {
        CopilotReducer {
            config,
            saw_line: false,
            calls: IdMaker::new("copilot-turn"),
            turn: None,
            pending: false,
            tools: ToolIds::default(),
            names: HashMap::default(),
            result: None,
            result_seen: false,
            last_text: None,
        }
    }

    fn feed(&mut self, line: &[u8], _stamp_us: u64) -> Vec<Event> {
        self.saw_line = true;
        let (obj, mut out) = match decode_object(line) {
            Ok(read) => read,
            Err(events) => return events,
        };
        let kind = field(&obj, "type").unwrap_or("");
        if kind == "result" {
            self.result(&obj);
            return out;
        }
        let data = obj.get("data").filter(|d| d.is_object());
        let Some(data) = data else {
            if SKIPPED.contains(&kind) {
                return out;
            }
            out.push(Event::diagnostic(
                "missing_field",
                format!("`{kind}` line has no `data` object"),
                line,
            ));
            return out;
        };
        match kind {
            "assistant.turn_start" => {
                self.turn = turn_id(data);
                self.pending = true;
            }
            "assistant.message_start" | "assistant.message_delta" | "assistant.tool_call_delta" => {
                self.open_call(&mut out)
            }
            "assistant.message" => {
                self.open_call(&mut out);
                let text = str_field(data, "content").unwrap_or("").to_string();
                if !text.is_empty() {
                    self.last_text = Some(text.clone());
                }
                if self.calls.count() > 0 {
                    out.push(Event::AssistantMessage {
                        message_id: self.message_id(),
                        parent_call_id: None,
                        text,
                        usage: None,
                        cost_usd: None,
                    });
                }
            }
            "tool.execution_start" => self.tool_start(data, line, &mut out),
            "tool.execution_complete" => self.tool_end(data, line, &mut out),
            other if SKIPPED.contains(&other) => {}
            other => out.push(type_diagnostic(other, line)),
        }
        out
    }

    fn side_file(&mut self, path: &str, content: Option<&[u8]>) -> Vec<Event> {
        if path != crate::USAGE_FILE {
            return vec![Event::diagnostic(
                "unknown_side_file",
                format!("side file `{path}` is not the usage file"),
                b"",
            )];
        }
        let Some(content) = content else {
            return vec![Event::diagnostic(
                "missing_side_file",
                "Copilot wrote no --usage-output-file: the run's usage is unknown",
                b"",
            )];
        };
        let mut out = Vec::new();
        match usage_of(content) {
            Ok(usage) => {
                if let Some(Event::FinalResult { usage: u, .. }) = &mut self.result {
                    *u = Some(usage);
                }
            }
            Err(why) => out.push(Event::diagnostic("bad_side_file", why, content)),
        }
        out.extend(self.result.take());
        out
    }

    fn finish(&mut self, truncated: Option<&[u8]>) -> Vec<Event> {
        let mut out: Vec<Event> = truncated_line(truncated).into_iter().collect();
        if truncated.is_some() {
            self.saw_line = true;
        }
        if let Some(result) = self.result.take() {
            out.push(Event::Unreported {
                kind: UnreportedKind::Usage,
                call_id: None,
                reason: "Copilot reports tokens only in its --usage-output-file, which was \
                         not read"
                    .into(),
            });
            out.push(result);
        }
        if !self.saw_line {
            out.push(no_output("Copilot", Some("see its exit code and stderr")));
        } else if !self.result_seen {
            out.push(Event::diagnostic(
                "incomplete_run",
                "the stream ended without a `result` line",
                b"",
            ));
        }
        out
    }
}

impl CopilotReducer {
    /// The open call's id: its turn's `turnId`, else the number the call was given when it
    /// started (the id is only asked for once the turn's call has started).
    fn message_id(&self) -> String {
        match &self.turn {
            Some(turn) => self.calls.keyed(turn),
            None => self.calls.last_id(),
        }
    }

    /// Starts the pending turn's model call, at its first output.
    fn open_call(&mut self, out: &mut Vec<Event>) {
        if !self.pending {
            return;
        }
        self.pending = false;
        self.calls.next_id();
        out.push(Event::ModelCallStarted {
            message_id: Some(self.message_id()),
            parent_call_id: None,
        });
    }

    fn tool_start(&mut self, data: &Value, line: &[u8], out: &mut Vec<Event>) {
        let id = str_field(data, "toolCallId");
        let Some(call_id) =
            self.tools
                .begin(id, "tool.execution_start has no `toolCallId`", line, out)
        else {
            return;
        };
        let name = str_field(data, "toolName").unwrap_or("").to_string();
        self.names.insert(call_id.to_string(), name.clone());
        out.push(Event::ToolCallStarted {
            call_id: call_id.to_string(),
            name,
            input_json: data.get("arguments").unwrap_or(&Value::Null).to_string(),
            parent_call_id: None,
        });
    }

    fn tool_end(&mut self, data: &Value, line: &[u8], out: &mut Vec<Event>) {
        const WORDS: ResultWords = ResultWords {
            missing_id: "tool.execution_complete has no `toolCallId`",
            orphan: |id| format!("end of tool call `{id}`, which never started"),
            repeated: None,
        };
        let Some(call_id) = self
            .tools
            .finish(str_field(data, "toolCallId"), &WORDS, line, out)
        else {
            return;
        };
        let exit_code = data
            .get("shellExecution")
            .and_then(|s| s.get("exitCode"))
            .and_then(Value::as_i64)
            .and_then(|c| i32::try_from(c).ok());
        let error = data.get("error").and_then(|e| str_field(e, "message"));
        let name = self.names.get(call_id).map(String::as_str).unwrap_or("");
        let no_such_tool = error == Some(format!("Tool '{name}' does not exist.").as_str());
        let status = match data.get("success").and_then(Value::as_bool) {
            None => ToolStatus::Unknown,
            // It never ran: Copilot has no tool of that name.
            Some(false) if no_such_tool => ToolStatus::Denied,
            Some(false) => ToolStatus::Error,
            // A command that failed is a successful tool call to Copilot.
            Some(true) if exit_code.is_some_and(|c| c != 0) => ToolStatus::Error,
            Some(true) => ToolStatus::Ok,
        };
        let text = data
            .get("result")
            .and_then(|r| str_field(r, "content"))
            .or(error)
            .or_else(|| str_field(data, "error"))
            .unwrap_or("");
        out.push(Event::ToolCallFinished {
            call_id: call_id.to_string(),
            status,
            output_excerpt: excerpt(text, self.config.excerpt_bytes as usize),
            exit_code,
            cli_duration_ms: None,
        });
    }

    fn result(&mut self, obj: &Map<String, Value>) {
        self.result_seen = true;
        let code = obj.get("exitCode").and_then(Value::as_i64);
        let success = code == Some(0);
        self.result = Some(Event::FinalResult {
            success,
            error_kind: (!success).then(|| match code {
                Some(_) => "nonzero_exit_code".to_string(),
                None => "no_exit_code".to_string(),
            }),
            error_message: (!success).then(|| match code {
                Some(c) => format!("the run ended with exitCode {c}"),
                None => "the `result` line has no exitCode".to_string(),
            }),
            max_turns_reached: false,
            // Counted from the stream: Copilot reports no turn count.
            num_turns: Some(self.calls.count()),
            cost_usd: None,
            duration_ms: obj
                .get("usage")
                .and_then(|u| u64_field(u, "sessionDurationMs")),
            text: self.last_text.clone(),
            usage: None,
        });
    }
}

fn field<'a>(obj: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    obj.get(key).and_then(Value::as_str)
}

/// `data.turnId`, a string in 1.0.102 (a number is taken too).
fn turn_id(data: &Value) -> Option<String> {
    match data.get("turnId")? {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// The run's usage from the `--usage-output-file` JSON: `modelMetrics[model].usage`
/// (`inputTokens`, `outputTokens`, `cacheReadTokens`, `cacheWriteTokens`) summed over
/// models. An error names the field that is missing or not a count.
pub(crate) fn usage_of(content: &[u8]) -> Result<Usage, String> {
    let value: Value =
        serde_json::from_slice(content).map_err(|e| format!("usage file: not JSON ({e})"))?;
    let metrics = value
        .get("modelMetrics")
        .and_then(Value::as_object)
        .ok_or("usage file: no `modelMetrics` object")?;
    let mut total = Usage {
        input_tokens: 0,
        output_tokens: 0,
        cache_read_tokens: 0,
        cache_write_tokens: None,
    };
    for (model, m) in metrics {
        let usage = m
            .get("usage")
            .ok_or_else(|| format!("usage file: modelMetrics.{model} has no `usage`"))?;
        let count = |key: &str| {
            u64_field(usage, key).ok_or_else(|| {
                format!("usage file: modelMetrics.{model}.usage.{key} is not a count")
            })
        };
        total.input_tokens += count("inputTokens")?;
        total.output_tokens += count("outputTokens")?;
        total.cache_read_tokens += count("cacheReadTokens")?;
        // Absent is not zero: `None` unless some model reports it.
        if let Some(n) = u64_field(usage, "cacheWriteTokens") {
            total.cache_write_tokens = Some(total.cache_write_tokens.unwrap_or(0) + n);
        }
    }
    Ok(total)
}

#[cfg(test)]
mod tests;
