//! Codex's items read as tool calls (the name and input of each kind, the output of a
//! finished one) and its JSON-in-text error messages.

use harness_kit::shell::unwrap_shell;
use harness_kit::str_field;
use serde_json::{Value, json};

/// The tool name and input of a tool item.
pub(super) fn tool_call_of(kind: &str, item: &Value) -> (String, Value) {
    match kind {
        "command_execution" => {
            let line = str_field(item, "command").unwrap_or("");
            (
                "exec_command".into(),
                json!({"command": unwrap_shell(line), "command_line": line}),
            )
        }
        "file_change" => (
            "apply_patch".into(),
            json!({"changes": item.get("changes").cloned().unwrap_or(Value::Null)}),
        ),
        "mcp_tool_call" => (
            format!(
                "mcp__{}__{}",
                str_field(item, "server").unwrap_or(""),
                str_field(item, "tool").unwrap_or("")
            ),
            json!({
                "server": item.get("server").cloned().unwrap_or(Value::Null),
                "tool": item.get("tool").cloned().unwrap_or(Value::Null),
                "arguments": item.get("arguments").cloned().unwrap_or(Value::Null),
            }),
        ),
        "web_search" => (
            "web_search".into(),
            json!({
                "query": item.get("query").cloned().unwrap_or(Value::Null),
                "action": item.get("action").cloned().unwrap_or(Value::Null),
            }),
        ),
        _ => {
            // collab_tool_call: a sub-agent operation (spawn_agent, send_input, wait, ...).
            let mut input = item.as_object().cloned().unwrap_or_default();
            for key in ["id", "type", "status", "agents_states"] {
                input.remove(key);
            }
            (
                str_field(item, "tool").unwrap_or(kind).to_string(),
                Value::Object(input),
            )
        }
    }
}

/// The output of a finished tool item, as text.
pub(super) fn tool_output(kind: &str, item: &Value) -> String {
    match kind {
        "command_execution" => str_field(item, "aggregated_output").unwrap_or("").into(),
        "file_change" => item
            .get("changes")
            .and_then(Value::as_array)
            .map(|changes| {
                changes
                    .iter()
                    .map(|c| {
                        format!(
                            "{} {}",
                            str_field(c, "kind").unwrap_or("?"),
                            str_field(c, "path").unwrap_or("?")
                        )
                    })
                    .collect::<Vec<_>>()
                    .join("\n")
            })
            .unwrap_or_default(),
        "mcp_tool_call" => {
            if let Some(message) = item.get("error").and_then(|e| str_field(e, "message")) {
                return message.to_string();
            }
            let result = item.get("result");
            let texts: Vec<&str> = result
                .and_then(|r| r.get("content"))
                .and_then(Value::as_array)
                .map(|blocks| blocks.iter().filter_map(|b| str_field(b, "text")).collect())
                .unwrap_or_default();
            if texts.is_empty() {
                result
                    .filter(|r| !r.is_null())
                    .map(Value::to_string)
                    .unwrap_or_default()
            } else {
                texts.join("\n")
            }
        }
        "web_search" => String::new(),
        _ => item
            .get("agents_states")
            .filter(|s| s.as_object().is_some_and(|m| !m.is_empty()))
            .map(Value::to_string)
            .unwrap_or_default(),
    }
}

/// A failure message that is itself a JSON-encoded API error (B24): its inner message
/// (with the HTTP status when given) and error type.
pub(super) fn inner_error(message: &str) -> (String, Option<String>) {
    let Ok(Value::Object(v)) = serde_json::from_str::<Value>(message.trim()) else {
        return (message.to_string(), None);
    };
    let error = v.get("error");
    let inner = error
        .and_then(|e| str_field(e, "message"))
        .or_else(|| v.get("message").and_then(Value::as_str))
        .or_else(|| error.and_then(Value::as_str));
    let kind = error
        .and_then(|e| str_field(e, "type").or_else(|| str_field(e, "code")))
        .or_else(|| v.get("code").and_then(Value::as_str))
        .map(String::from);
    let status = v.get("status").and_then(Value::as_u64);
    match (inner, status) {
        (Some(inner), Some(status)) => (format!("{inner} (HTTP {status})"), kind),
        (Some(inner), None) => (inner.to_string(), kind),
        (None, _) => (message.to_string(), kind),
    }
}
