//! The collector's handlers of tool-call events: a start opens a call (or fires
//! `max_tool_calls`), the first end closes it and adds it to the union of tool intervals.

use super::{Collector, ToolCall};
use crate::results::{DiagnosticRecord, StopReason, ToolCallRecord, ToolOutcome};
use crate::turn::timing::ms;
use harness_kit::{ToolStatus, excerpt, replace_lone_surrogates};

impl Collector {
    pub(super) fn on_tool_start(
        &mut self,
        line: u64,
        at: u64,
        call_id: String,
        name: String,
        input_json: &str,
        parent_call_id: Option<String>,
    ) -> Option<StopReason> {
        if self.tool_index.contains_key(&call_id) {
            // A repeated start does not open the call again.
            return None;
        }
        if self
            .caps
            .max_tool_calls
            .is_some_and(|n| self.tools_started >= n)
        {
            return Some(StopReason::MaxToolCalls);
        }
        self.tools_started += 1;
        let input = match tool_input(input_json) {
            Ok(input) => input,
            Err(err) => {
                // Kept as the string it came as, and said so.
                self.diagnostics.push(DiagnosticRecord {
                    line,
                    at_ms: ms(at),
                    kind: "tool_input_not_json".into(),
                    message: format!(
                        "the input of tool call `{call_id}` is not JSON the host can read \
                         ({err}); kept as a string"
                    ),
                    raw: excerpt(input_json, 64 * 1024),
                });
                serde_json::Value::String(input_json.to_string())
            }
        };
        self.tool_index.insert(call_id.clone(), self.tools.len());
        self.tools.push(ToolCall {
            record: ToolCallRecord {
                call_id,
                name,
                input,
                parent_call_id,
                status: ToolOutcome::Interrupted,
                exit_code: None,
                output_excerpt: String::new(),
                started_ms: ms(at),
                finished_ms: None,
                duration_ms: 0,
            },
            start_us: at,
            end_us: None,
        });
        None
    }

    pub(super) fn on_tool_end(&mut self, line: u64, at: u64, end: ToolEnd<'_>) {
        let ToolEnd {
            call_id,
            status,
            output_excerpt,
            exit_code,
            cli_duration_ms,
        } = end;
        // The first end closes a call; a repeated one changes nothing.
        let Some(&i) = self.tool_index.get(call_id) else {
            return;
        };
        let floor = self.last_call_us.unwrap_or(0);
        let tool = &mut self.tools[i];
        if tool.end_us.is_some() {
            // A later refusal of a call whose end read as an error (the CLI's own list of
            // refused calls, after an unfamiliar refusal text): it never ran. Nothing
            // else of the first end changes.
            if status == ToolStatus::Denied && tool.record.status == ToolOutcome::Error {
                tool.record.status = ToolOutcome::Denied;
            }
            return;
        }
        tool.end_us = Some(at);
        // A CLI that prints a tool only once finished: start and end came on one line.
        // Place the start by the CLI's own duration (a duration, anchored to our stamp:
        // no clock bases meet).
        // A duration longer than the host saw since the model call that asked for the
        // tool cannot be right (a start the CLI restamped, a clock that jumped): it is
        // bounded by that call's stamp and said so, not moved into generation time.
        let mut clipped = None;
        if let (true, Some(ms_long)) = (tool.start_us == at, cli_duration_ms) {
            let wanted = at.saturating_sub(ms_long.saturating_mul(1000));
            tool.start_us = wanted.max(floor.min(at));
            tool.record.started_ms = ms(tool.start_us);
            if tool.start_us > wanted {
                clipped = Some((ms_long, ms(at - tool.start_us)));
            }
        }
        tool.record.status = match status {
            ToolStatus::Ok => ToolOutcome::Ok,
            ToolStatus::Error => ToolOutcome::Error,
            ToolStatus::Unknown => ToolOutcome::Unknown,
            // Never executed: kept out of `commands` (finish.rs).
            ToolStatus::Denied => ToolOutcome::Denied,
        };
        tool.record.exit_code = exit_code;
        tool.record.output_excerpt = output_excerpt;
        tool.record.finished_ms = Some(ms(at));
        let (start, end) = (tool.start_us, at.max(tool.start_us));
        self.tool_union.insert(ms(start), ms(end));
        if let Some((reported, seen)) = clipped
            && !std::mem::replace(&mut self.clip_said, true)
        {
            self.diagnostics.push(DiagnosticRecord {
                line,
                at_ms: ms(at),
                kind: "tool_duration_clipped".into(),
                message: format!(
                    "the CLI reports tool call `{call_id}` ran {reported} ms, longer than the \
                     {seen} ms the host saw since the model call that asked for it (the \
                     stream brought that call late, or the CLI's figure is off): its start is \
                     placed at that model call (so are later ones, not listed again)"
                ),
                raw: String::new(),
            });
        }
    }
}

/// What a `tool_call_finished` event says, as [`Collector::on_tool_end`] reads it.
pub(super) struct ToolEnd<'a> {
    pub call_id: &'a str,
    pub status: ToolStatus,
    pub output_excerpt: String,
    pub exit_code: Option<i32>,
    /// ms by the CLI's clock, when it reports the tool's duration.
    pub cli_duration_ms: Option<u64>,
}

/// A tool call's input as JSON. Lone UTF-16 surrogate escapes (half an emoji, which
/// JavaScript CLIs write and serde_json refuses) read as U+FFFD; other input that is not
/// JSON (a number out of range, nesting past 128) is the error.
fn tool_input(input_json: &str) -> Result<serde_json::Value, serde_json::Error> {
    serde_json::from_str(input_json).or_else(|err| {
        replace_lone_surrogates(input_json)
            .and_then(|fixed| serde_json::from_str(&fixed).ok())
            .ok_or(err)
    })
}
