//! Pi's tool events: `tool_execution_start` starts a call, `tool_execution_end` ends it
//! (starting it first if its start was not seen).

use super::{PiReducer, text_of};
use harness_kit::{Event, ToolStatus, excerpt};
use serde_json::{Map, Value};

impl PiReducer {
    pub(super) fn tool_start(&mut self, obj: &Map<String, Value>, out: &mut Vec<Event>) {
        let Some(id) = obj.get("toolCallId").and_then(Value::as_str) else {
            out.push(Event::diagnostic(
                "missing_field",
                "tool event has no `toolCallId`",
                Value::Object(obj.clone()).to_string().as_bytes(),
            ));
            return;
        };
        if self.tools_started.insert(id.to_string()) {
            out.push(Event::ToolCallStarted {
                call_id: id.to_string(),
                name: obj
                    .get("toolName")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string(),
                input_json: obj.get("args").unwrap_or(&Value::Null).to_string(),
                parent_call_id: None,
            });
        }
    }

    pub(super) fn tool_end(&mut self, obj: &Map<String, Value>, out: &mut Vec<Event>) {
        self.tool_start(obj, out);
        let Some(id) = obj.get("toolCallId").and_then(Value::as_str) else {
            return;
        };
        if !self.tools_finished.insert(id.to_string()) {
            return;
        }
        let result = obj.get("result");
        let output = match result {
            Some(Value::String(s)) => s.clone(),
            Some(r) => text_of(r),
            None => String::new(),
        };
        let status = match obj.get("isError").and_then(Value::as_bool) {
            // A call to a tool Pi does not have never ran: not a command.
            Some(true) if is_unknown_tool(&output, obj) => ToolStatus::Denied,
            Some(true) => ToolStatus::Error,
            Some(false) => ToolStatus::Ok,
            None => ToolStatus::Unknown,
        };
        let details = result.and_then(|r| r.get("details"));
        let exit_code = details
            .and_then(|d| d.get("exit_code").or_else(|| d.get("exitCode")))
            .and_then(Value::as_i64)
            .and_then(|c| i32::try_from(c).ok())
            .or_else(|| {
                (status == ToolStatus::Error)
                    .then(|| exit_code_of(&output))
                    .flatten()
            });
        out.push(Event::ToolCallFinished {
            call_id: id.to_string(),
            status,
            output_excerpt: excerpt(&output, self.config.excerpt_bytes as usize),
            exit_code,
            cli_duration_ms: None,
        });
    }
}

/// Pi's error result for a call naming a tool it does not have (pi 0.x:
/// `Tool <name> not found`, the whole text): the tool never ran.
fn is_unknown_tool(output: &str, obj: &Map<String, Value>) -> bool {
    let name = obj.get("toolName").and_then(Value::as_str).unwrap_or("");
    output.trim() == format!("Tool {name} not found")
}

/// Pi's `bash` ends a failed command's output with "Command exited with code N".
fn exit_code_of(output: &str) -> Option<i32> {
    output
        .lines()
        .rev()
        .find_map(|l| l.trim().strip_prefix("Command exited with code "))?
        .trim()
        .parse()
        .ok()
}
