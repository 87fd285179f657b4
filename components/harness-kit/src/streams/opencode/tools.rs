//! OpenCode `tool_use` parts: a part that is already `completed` or `error` both starts
//! and ends its call; a `task` call whose sub-agent printed nothing is unreported work; the
//! `invalid` tool standing in for a tool the model named and OpenCode does not have is
//! `denied` (that call never ran), as is the errored call itself where Kilo reports it so.

use super::OpenCodeReducer;
use crate::{Event, ToolStatus, UnreportedKind, excerpt, str_field};
use serde_json::{Map, Value};

impl OpenCodeReducer {
    pub(super) fn tool_use(
        &mut self,
        obj: &Map<String, Value>,
        part: &Value,
        line: &[u8],
        out: &mut Vec<Event>,
    ) {
        let Some(call_id) = str_field(part, "callID").or_else(|| str_field(part, "id")) else {
            out.push(Event::diagnostic(
                "missing_field",
                "tool part has no `callID`",
                line,
            ));
            return;
        };
        let call_id = call_id.to_string();
        let key = self.step_for(obj, part, out);
        let parent = self.steps[&key].parent.clone();
        let state = part.get("state").unwrap_or(&Value::Null);
        let metadata = state.get("metadata").unwrap_or(&Value::Null);
        let name = str_field(part, "tool").unwrap_or("");
        if name == "task"
            && let Some(child) = str_field(metadata, "sessionId")
        {
            self.sub_sessions.insert(child.to_string(), call_id.clone());
        }
        if self.tools_started.insert(call_id.clone()) {
            out.push(Event::ToolCallStarted {
                call_id: call_id.clone(),
                name: name.to_string(),
                input_json: state.get("input").unwrap_or(&Value::Null).to_string(),
                parent_call_id: parent,
            });
        }
        let status = str_field(state, "status").unwrap_or("");
        let (status, output, exit_code) = match status {
            "pending" | "running" => return,
            "completed" => {
                let exit_code = metadata
                    .get("exit")
                    .or_else(|| metadata.get("exitCode"))
                    .and_then(Value::as_i64)
                    .map(|c| c as i32);
                let status = if is_unavailable_tool(name, state) {
                    // The model called a tool OpenCode does not have: OpenCode answers it
                    // with its `invalid` tool ("Model tried to call unavailable tool
                    // 'x'"). The call the model made never ran.
                    ToolStatus::Denied
                } else if exit_code.is_some_and(|c| c != 0) {
                    ToolStatus::Error
                } else {
                    ToolStatus::Ok
                };
                (status, output_of(state.get("output")), exit_code)
            }
            "error" => {
                if metadata.get("interrupted").and_then(Value::as_bool) == Some(true) {
                    self.steps
                        .get_mut(&key)
                        .expect("step_for opens it")
                        .interrupted_tool = true;
                    out.push(Event::diagnostic(
                        "tool_interrupted",
                        format!("tool call `{call_id}` was cut off before it finished (B32)"),
                        line,
                    ));
                }
                let error = output_of(state.get("error"));
                // Kilo 7.7 (OpenCode's fork) reports a call to a tool it does not have as
                // that call, errored with the AI SDK's text: it never ran.
                let status = if is_unavailable_tool_error(&error) {
                    ToolStatus::Denied
                } else {
                    ToolStatus::Error
                };
                (status, error, None)
            }
            other => {
                out.push(Event::diagnostic(
                    "unknown_status",
                    format!("tool part with unknown status `{other}`"),
                    line,
                ));
                return;
            }
        };
        // OpenCode prints a tool only once it finished; its own start/end times (ms since
        // the epoch, its clock) give the duration the host uses to place the start.
        let cli_duration_ms = state.get("time").and_then(|t| {
            let start = t.get("start")?.as_u64()?;
            let end = t.get("end")?.as_u64()?;
            end.checked_sub(start)
        });
        if self.tools_finished.insert(call_id.clone()) {
            out.push(Event::ToolCallFinished {
                call_id: call_id.clone(),
                status,
                output_excerpt: excerpt(&output, self.config.excerpt_bytes as usize),
                exit_code,
                cli_duration_ms,
            });
            // A sub-agent that ran but printed nothing (1.18 prints only the root
            // session's parts, B45): its calls, tools and tokens are unknown, not zero.
            if name == "task"
                && let Some(child) = str_field(metadata, "sessionId")
                && !self.seen_sessions.contains(child)
            {
                let model = metadata.get("model").map(|m| {
                    format!(
                        " on {}/{}",
                        str_field(m, "providerID").unwrap_or("?"),
                        str_field(m, "modelID").unwrap_or("?")
                    )
                });
                out.push(Event::Unreported {
                    kind: UnreportedKind::SubagentWork,
                    call_id: Some(call_id),
                    reason: format!(
                        "sub-agent session `{child}`{} ran, but OpenCode printed none of its \
                         events: its model calls, tool calls, tokens and cost are not in the \
                         stream (`opencode export {child}` can recover them)",
                        model.unwrap_or_default()
                    ),
                });
            }
        }
    }
}

/// A tool's output or error: a string, or any other JSON as text.
fn output_of(value: Option<&Value>) -> String {
    match value {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    }
}

/// The AI SDK's error for a call to a tool the CLI does not have, as Kilo 7.7.7 reports it
/// in an `error` part's `state.error` (strings of its binary): "Model tried to call
/// unavailable tool 'x'. Available tools: …" (or "No tools are available.").
fn is_unavailable_tool_error(error: &str) -> bool {
    error
        .trim_start()
        .starts_with("Model tried to call unavailable tool '")
}

/// OpenCode (1.x) answers a call to a tool it does not have with its `invalid` tool, whose
/// input names the tool asked for (`{"tool": "x", "error": "Model tried to call
/// unavailable tool 'x'…"}`).
fn is_unavailable_tool(name: &str, state: &Value) -> bool {
    let input = state.get("input").unwrap_or(&Value::Null);
    name == "invalid" && str_field(input, "tool").is_some()
}
