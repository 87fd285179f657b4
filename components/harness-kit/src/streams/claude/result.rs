//! The `result` line: the run's final result (success, error kind and message, turns,
//! cost, usage), an API error told from an agent failure (B38), and the text rebuilt from
//! the last main-thread message when the CLI left it empty (B01).

use super::wire::Line;
use super::{ClaudeReducer, usage_of};
use crate::Event;

impl ClaudeReducer {
    pub(super) fn result(&mut self, parsed: &Line, out: &mut Vec<Event>) {
        self.denials(parsed, out);
        for call in std::mem::take(&mut self.subagents) {
            out.push(Event::Unreported {
                kind: crate::UnreportedKind::SubagentWork,
                reason: format!(
                    "the sub-agent of `{call}` ran, but Claude Code's result usage counts the \
                     main thread's tokens only (its sub-agents' are in modelUsage and the \
                     cost alone; a nested sub-agent prints no lines at all)"
                ),
                call_id: Some(call),
            });
        }
        let subtype = parsed.subtype.as_deref().unwrap_or("");
        let is_error = parsed.is_error.unwrap_or(false);
        let success = subtype == "success" && !is_error;
        // An API error ends as `subtype: success` with `is_error: true`, its message in
        // `result` (e.g. "API Error: 400 …", or the synthetic message's text, B38): that
        // text is the CLI's error, not the agent's answer.
        let api_error = subtype == "success" && is_error;
        if let (true, Some(status)) = (api_error, parsed.api_error_status) {
            out.push(Event::diagnostic(
                "api_error",
                format!(
                    "the model API answered HTTP {status}{}: the run ended on an API error, \
                     not an agent failure",
                    self.synthetic_text
                        .as_deref()
                        .map_or(String::new(), |t| format!(" (\"{t}\")"))
                ),
                b"",
            ));
        }
        let mut text = if api_error {
            None
        } else {
            parsed.result.as_deref().map(String::from)
        };
        if !api_error
            && text.as_deref().is_none_or(str::is_empty)
            && !self.last_main_text.is_empty()
        {
            out.push(Event::diagnostic(
                "result_text_reconstructed",
                "`result` text was empty or missing; rebuilt from the last assistant message",
                b"",
            ));
            text = Some(self.last_main_text.clone());
        }
        let error_message = parsed
            .error
            .as_deref()
            .map(String::from)
            .or_else(|| (!parsed.errors.is_empty()).then(|| parsed.errors.join("; ")))
            .or_else(|| {
                parsed
                    .result
                    .as_deref()
                    .filter(|r| api_error && !r.is_empty())
                    .map(String::from)
            })
            .or_else(|| (!success).then(|| format!("the CLI ended with `{subtype}`")));
        out.push(Event::FinalResult {
            success,
            error_kind: (!success).then(|| match (api_error, parsed.terminal_reason.as_deref()) {
                (true, Some(reason)) => reason.to_string(),
                (true, None) => "is_error".to_string(),
                (false, _) => subtype.to_string(),
            }),
            error_message: if success { None } else { error_message },
            max_turns_reached: subtype == "error_max_turns",
            num_turns: parsed.num_turns.map(|n| n as u32),
            cost_usd: parsed.total_cost_usd,
            duration_ms: parsed.duration_ms,
            text,
            usage: parsed.usage.map(|u| usage_of(self.dialect, u)),
        });
    }
}
