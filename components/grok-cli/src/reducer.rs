//! The grok-cli transcript reducer (`grok -p …`, 0.0.34).
//!
//! - **Model calls**: each `assistant` line a model wrote is one call (ids `grok-<n>`,
//!   from 1), with one `AssistantMessage` (no usage: the output has none). grok's
//!   stand-ins for an empty reply (`Using tools to help you...` beside tool calls, `I
//!   understand, but I don't have a specific response.` alone) are read as the empty text
//!   the model sent. The lines grok writes itself are no model call: `Maximum tool
//!   execution rounds reached. …` (the run hit `--max-tool-rounds`), `Sorry, I encountered
//!   an error: …` and a lone `Error: …` (the run failed).
//! - **Tools**: each of a reply's `tool_calls` starts a call (`id`, `function.name`,
//!   `function.arguments` as the input); a `tool` line (`tool_call_id`, `content`) ends it.
//!   There is no success flag or exit code: a result is an error when its text is one of
//!   the error texts grok's tools return (`bash`: `Command failed: …`, `Cannot change
//!   directory: …`; every tool: `Tool execution error: …`; the file tools' `File not
//!   found: …`, `Error …`, …), denied for `Unknown tool: <its name>`, else ok. (A command whose own output begins with
//!   one of `bash`'s error texts would be read as failed: grok gives no way to tell.)
//! - **End**: there is no result line. At the end of the stream the reducer makes the
//!   `FinalResult`: the last reply's text, the model calls counted, no usage (an
//!   `Unreported` usage event says why), no duration; a failure line above makes it a
//!   failure (`cli_error`), a transcript that stops before a final reply an
//!   `incomplete_run`.

use harness_kit::reduce::{IdMaker, ResultWords, ToolIds, decode_object, no_output};
use harness_kit::{
    Event, Reducer, ReducerConfig, ToolStatus, UnreportedKind, excerpt, str_field, truncated_line,
};
use serde_json::{Map, Value};
use std::collections::HashMap;

/// grok's text for a tool-call reply whose content was empty.
const TOOLS_PLACEHOLDER: &str = "Using tools to help you...";
/// grok's text for a final reply whose content was empty.
const EMPTY_PLACEHOLDER: &str = "I understand, but I don't have a specific response.";
/// The line grok adds after `--max-tool-rounds` replies with tools.
const MAX_ROUNDS: &str = "Maximum tool execution rounds reached.";
/// The line grok adds when the agent loop failed (exit 0).
const LOOP_ERROR: &str = "Sorry, I encountered an error: ";
/// The one line grok prints when the run failed outside the loop (exit 1).
const RUN_ERROR: &str = "Error: ";

/// Error texts every tool can return (`GrokAgent.executeTool`).
const ANY_TOOL_ERRORS: [&str; 1] = ["Tool execution error: "];
/// Error texts of `bash` (`BashTool.execute`); a command's own output is never one of
/// them, since it is returned as is only on exit 0.
const BASH_ERRORS: [&str; 3] = [
    "Command failed: ",
    "Cannot change directory: ",
    "Command execution cancelled",
];
/// Error texts of the file tools (`TextEditorTool`).
const FILE_ERRORS: [&str; 8] = [
    "File or directory not found: ",
    "File not found: ",
    "Error viewing ",
    "Error replacing text in ",
    "Error creating ",
    "String not found in file",
    "Invalid start line: ",
    "Invalid end line: ",
];

/// The grok-cli reducer's state for one transcript.
pub struct GrokReducer {
    config: ReducerConfig,
    saw_line: bool,
    /// Model calls seen, which number their ids (`grok-<n>`).
    calls: IdMaker,
    tools: ToolIds,
    /// Tool names by call id (the result line has only the id).
    names: HashMap<String, String>,
    /// The last reply's text, and whether it was a final reply (no tool calls).
    last_text: Option<String>,
    answered: bool,
    /// The failure line's text, when grok wrote one.
    failure: Option<String>,
    max_rounds: bool,
}

impl Reducer for GrokReducer {
    fn new(config: ReducerConfig) -> Self {
        GrokReducer {
            config,
            saw_line: false,
            calls: IdMaker::new("grok"),
            tools: ToolIds::default(),
            names: HashMap::new(),
            last_text: None,
            answered: false,
            failure: None,
            max_rounds: false,
        }
    }

    fn feed(&mut self, line: &[u8], _stamp_us: u64) -> Vec<Event> {
        self.saw_line = true;
        let (obj, mut out) = match decode_object(line) {
            Ok(read) => read,
            Err(events) => return events,
        };
        match obj.get("role").and_then(Value::as_str) {
            Some("user") => {}
            Some("assistant") => self.assistant(&obj, line, &mut out),
            Some("tool") => self.tool(&obj, line, &mut out),
            Some(other) => out.push(Event::diagnostic(
                "unknown_type",
                format!("unknown role `{other}`"),
                line,
            )),
            None => out.push(Event::diagnostic(
                "missing_field",
                "line has no string `role`",
                line,
            )),
        }
        out
    }

    fn finish(&mut self, truncated: Option<&[u8]>) -> Vec<Event> {
        let mut out: Vec<Event> = truncated_line(truncated).into_iter().collect();
        if truncated.is_some() {
            self.saw_line = true;
        }
        if !self.saw_line {
            out.push(no_output("grok-cli", Some("see its exit code and stderr")));
            return out;
        }
        if self.calls.count() > 0 {
            out.push(Event::Unreported {
                kind: UnreportedKind::Usage,
                call_id: None,
                reason: "grok-cli reports no token usage".into(),
            });
        }
        let (error_kind, error_message) = if let Some(text) = &self.failure {
            (Some("cli_error".to_string()), Some(text.clone()))
        } else if self.max_rounds {
            (None, None)
        } else if !self.answered {
            out.push(Event::diagnostic(
                "incomplete_run",
                "the transcript ended without a final reply",
                b"",
            ));
            (
                Some("incomplete_run".to_string()),
                Some("the transcript ended without a final reply".to_string()),
            )
        } else {
            (None, None)
        };
        out.push(Event::FinalResult {
            success: error_kind.is_none(),
            error_kind,
            error_message,
            max_turns_reached: self.max_rounds,
            // Counted from the transcript: grok reports no turn count.
            num_turns: Some(self.calls.count()),
            cost_usd: None,
            duration_ms: None,
            text: self.last_text.clone(),
            usage: None,
        });
        out
    }
}

impl GrokReducer {
    fn assistant(&mut self, obj: &Map<String, Value>, line: &[u8], out: &mut Vec<Event>) {
        let content = obj.get("content").and_then(Value::as_str).unwrap_or("");
        let calls: &[Value] = obj
            .get("tool_calls")
            .and_then(Value::as_array)
            .map_or(&[], Vec::as_slice);
        if calls.is_empty() {
            // grok's own lines, not a model's reply.
            if content.starts_with(MAX_ROUNDS) {
                self.max_rounds = true;
                return;
            }
            if content.starts_with(LOOP_ERROR)
                || (self.calls.count() == 0 && content.starts_with(RUN_ERROR))
            {
                self.failure = Some(content.to_string());
                return;
            }
        }
        let message_id = self.calls.next_id();
        out.push(Event::ModelCallStarted {
            message_id: Some(message_id.clone()),
            parent_call_id: None,
        });
        let text = match content {
            TOOLS_PLACEHOLDER if !calls.is_empty() => "",
            EMPTY_PLACEHOLDER if calls.is_empty() => "",
            text => text,
        };
        self.last_text = Some(text.to_string());
        self.answered = calls.is_empty();
        out.push(Event::AssistantMessage {
            message_id,
            parent_call_id: None,
            text: text.to_string(),
            usage: None,
            cost_usd: None,
        });
        for call in calls {
            let id = str_field(call, "id");
            let Some(id) = self.tools.begin(id, "a tool call has no `id`", line, out) else {
                continue;
            };
            let function = call.get("function");
            let name = function
                .and_then(|f| str_field(f, "name"))
                .unwrap_or("")
                .to_string();
            let input = match function.and_then(|f| f.get("arguments")) {
                // The arguments are a JSON text; kept as is when they do not parse.
                Some(Value::String(s)) => serde_json::from_str::<Value>(s)
                    .map(|v| v.to_string())
                    .unwrap_or_else(|_| Value::String(s.clone()).to_string()),
                Some(other) => other.to_string(),
                None => "null".to_string(),
            };
            self.names.insert(id.to_string(), name.clone());
            out.push(Event::ToolCallStarted {
                call_id: id.to_string(),
                name,
                input_json: input,
                parent_call_id: None,
            });
        }
    }

    fn tool(&mut self, obj: &Map<String, Value>, line: &[u8], out: &mut Vec<Event>) {
        const WORDS: ResultWords = ResultWords {
            missing_id: "a `tool` line has no `tool_call_id`",
            orphan: |id| format!("result of tool call `{id}`, which never started"),
            repeated: Some(|id| format!("a second result of tool call `{id}`")),
        };
        let id = obj.get("tool_call_id").and_then(Value::as_str);
        let Some(id) = self.tools.finish(id, &WORDS, line, out) else {
            return;
        };
        let text = obj.get("content").and_then(Value::as_str).unwrap_or("");
        let name = self.names.get(id).map_or("", String::as_str);
        out.push(Event::ToolCallFinished {
            call_id: id.to_string(),
            status: status_of(name, text),
            output_excerpt: excerpt(text, self.config.excerpt_bytes as usize),
            exit_code: None,
            cli_duration_ms: None,
        });
    }
}

/// A tool result's status from its text (grok reports no flag): see the module doc.
fn status_of(tool: &str, text: &str) -> ToolStatus {
    let is = |prefixes: &[&str]| prefixes.iter().any(|p| text.starts_with(p));
    // What grok says for a tool it does not have: it never ran.
    if text.strip_prefix("Unknown tool: ") == Some(tool) {
        return ToolStatus::Denied;
    }
    let failed = is(&ANY_TOOL_ERRORS)
        || match tool {
            "bash" => is(&BASH_ERRORS),
            "view_file" | "create_file" | "str_replace_editor" => is(&FILE_ERRORS),
            _ => false,
        };
    if failed {
        ToolStatus::Error
    } else {
        ToolStatus::Ok
    }
}

#[cfg(test)]
mod tests;
