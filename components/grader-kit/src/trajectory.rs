//! Reading the trajectory: tool calls paired with their ends, and the final answer.

use crate::{Event, StampedEvent, ToolStatus, shell_command};
use serde_json::Value;
use std::collections::HashMap;

/// One tool call of the trajectory, paired with its end when one was seen.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolUse {
    /// The call id that pairs the start with its end.
    pub call_id: String,
    /// Tool name exactly as the CLI names it (`Bash`, `exec_command`, ...).
    pub name: String,
    /// The tool input (a JSON string value when the CLI's input was not valid JSON).
    pub input: Value,
    /// For a sub-agent's call, the tool call that started the sub-agent.
    pub parent_call_id: Option<String>,
    /// How it ended; `None` when no end was seen (interrupted).
    pub status: Option<ToolStatus>,
    /// The command's exit code, when the CLI gives one.
    pub exit_code: Option<i32>,
    /// The first part of the tool's output.
    pub output_excerpt: String,
    /// µs from the turn's start to the call's start.
    pub stamp_us: u64,
}

impl ToolUse {
    /// The shell command of this call, wrappers kept (see [`crate::shell_command`]).
    pub fn shell_command(&self) -> Option<String> {
        shell_command(&self.input)
    }

    /// The call ended with status ok and, when an exit code is known, exit code 0.
    pub fn succeeded(&self) -> bool {
        self.status == Some(ToolStatus::Ok) && self.exit_code.is_none_or(|c| c == 0)
    }

    /// The text criteria match against: the shell command when there is one, else the
    /// input as compact JSON.
    pub fn match_text(&self) -> String {
        self.shell_command()
            .unwrap_or_else(|| serde_json::to_string(&self.input).unwrap_or_default())
    }
}

pub(crate) fn tool_uses(trajectory: &[StampedEvent]) -> Vec<ToolUse> {
    let mut uses: Vec<ToolUse> = Vec::new();
    let mut by_id: HashMap<String, usize> = HashMap::new();
    for stamped in trajectory {
        match &stamped.event {
            Event::ToolCallStarted {
                call_id,
                name,
                input_json,
                parent_call_id,
            } => {
                let input = serde_json::from_str(input_json)
                    .unwrap_or_else(|_| Value::String(input_json.clone()));
                by_id.insert(call_id.clone(), uses.len());
                uses.push(ToolUse {
                    call_id: call_id.clone(),
                    name: name.clone(),
                    input,
                    parent_call_id: parent_call_id.clone(),
                    status: None,
                    exit_code: None,
                    output_excerpt: String::new(),
                    stamp_us: stamped.stamp_us,
                });
            }
            Event::ToolCallFinished {
                call_id,
                status,
                output_excerpt,
                exit_code,
                cli_duration_ms: _,
            } => {
                if let Some(&i) = by_id.get(call_id) {
                    let tool = &mut uses[i];
                    tool.status = Some(*status);
                    tool.exit_code = *exit_code;
                    tool.output_excerpt = output_excerpt.clone();
                }
            }
            _ => {}
        }
    }
    uses
}

pub(crate) fn final_text(trajectory: &[StampedEvent]) -> Option<String> {
    let from_result = trajectory.iter().rev().find_map(|s| match &s.event {
        Event::FinalResult {
            text: Some(text), ..
        } if !text.trim().is_empty() => Some(text.clone()),
        _ => None,
    });
    from_result.or_else(|| {
        trajectory.iter().rev().find_map(|s| match &s.event {
            Event::AssistantMessage {
                parent_call_id: None,
                text,
                ..
            } if !text.trim().is_empty() => Some(text.clone()),
            _ => None,
        })
    })
}

/// Builders for trajectories in tests.
pub mod build {
    use crate::{Event, StampedEvent, ToolStatus};

    /// A tool call start at `stamp_us`.
    pub fn tool_start(
        stamp_us: u64,
        id: &str,
        name: &str,
        input: serde_json::Value,
    ) -> StampedEvent {
        StampedEvent {
            stamp_us,
            event: Event::ToolCallStarted {
                call_id: id.into(),
                name: name.into(),
                input_json: input.to_string(),
                parent_call_id: None,
            },
        }
    }

    /// A tool call end at `stamp_us`.
    pub fn tool_end(
        stamp_us: u64,
        id: &str,
        status: ToolStatus,
        exit_code: Option<i32>,
    ) -> StampedEvent {
        StampedEvent {
            stamp_us,
            event: Event::ToolCallFinished {
                call_id: id.into(),
                status,
                output_excerpt: String::new(),
                exit_code,
                cli_duration_ms: None,
            },
        }
    }

    /// A main-thread assistant message.
    pub fn message(stamp_us: u64, id: &str, text: &str) -> StampedEvent {
        StampedEvent {
            stamp_us,
            event: Event::AssistantMessage {
                message_id: id.into(),
                parent_call_id: None,
                text: text.into(),
                usage: None,
                cost_usd: None,
            },
        }
    }

    /// A successful final result with `text`.
    pub fn final_result(stamp_us: u64, text: Option<&str>) -> StampedEvent {
        StampedEvent {
            stamp_us,
            event: Event::FinalResult {
                success: true,
                error_kind: None,
                error_message: None,
                max_turns_reached: false,
                num_turns: None,
                cost_usd: None,
                duration_ms: None,
                text: text.map(str::to_string),
                usage: None,
            },
        }
    }

    /// A shell tool call (`name` with `{"command": command}`) that started and ended.
    pub fn shell(id: &str, name: &str, command: &str, ok: bool) -> Vec<StampedEvent> {
        let status = if ok {
            ToolStatus::Ok
        } else {
            ToolStatus::Error
        };
        vec![
            tool_start(0, id, name, serde_json::json!({ "command": command })),
            tool_end(1, id, status, Some(if ok { 0 } else { 1 })),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::build::*;
    use super::*;

    #[test]
    fn pairs_starts_with_ends() {
        let mut t = shell("a", "Bash", "ls", true);
        t.extend(shell("b", "Bash", "false", false));
        t.push(tool_start(
            5,
            "c",
            "Read",
            serde_json::json!({"file_path": "x"}),
        ));
        let uses = tool_uses(&t);
        assert_eq!(uses.len(), 3);
        assert!(uses[0].succeeded());
        assert!(!uses[1].succeeded());
        assert_eq!(uses[2].status, None);
        assert!(!uses[2].succeeded());
        assert_eq!(uses[2].match_text(), r#"{"file_path":"x"}"#);
    }

    #[test]
    fn final_text_prefers_the_result_then_the_last_message() {
        let t = vec![message(1, "m1", "first"), message(2, "m2", "second")];
        assert_eq!(final_text(&t).as_deref(), Some("second"));
        let mut t2 = t.clone();
        t2.push(final_result(3, Some("")));
        assert_eq!(final_text(&t2).as_deref(), Some("second"));
        t2.push(final_result(4, Some("answer")));
        assert_eq!(final_text(&t2).as_deref(), Some("answer"));
        assert_eq!(final_text(&[]), None);
    }
}
