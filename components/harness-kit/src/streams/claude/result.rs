//! The `result` line: the run's final result (success, error kind and message, turns,
//! cost, usage), an API error told from an agent failure (B38), the text rebuilt from
//! the last main-thread message when the CLI left it empty (B01), and the figures of a
//! process that printed several results (a follow-up query, see [`ProcessResults`]).

use super::wire::Line;
use super::{ClaudeReducer, Dialect, usage_of};
use crate::{Event, UnreportedKind, Usage};

/// The figures of the `result` lines one Claude Code process printed so far, for one
/// session id.
///
/// When a background task (a `run_in_background` Bash call, a `Monitor`, an `Agent` call:
/// sub-agents are async in 2.1.332) ends after the final reply, Claude Code 2.1.332 starts
/// a follow-up query in the same process: a second `system/init`, more model calls and a
/// second `result`. Each result's `usage`, `num_turns` and `duration_ms` cover its own
/// query only; `total_cost_usd` (and `modelUsage`) are the process's running totals
/// (recordings `tests/corpus/live/claude/{bg2,err1,sub1}-2.1.332.*`). So the
/// [`Event::FinalResult`] of the Nth result carries the sum of the N results' usage, turns
/// and durations (the time the queries took, not the waits between them), and the Nth
/// result's own cost: the process's running figures, as `usage-totals`/`totals` declare
/// them. A result of another session id (a stream of two sessions) starts a new sum.
#[derive(Debug, Default)]
pub(super) struct ProcessResults {
    session_id: Option<String>,
    /// Results seen (of this session id).
    count: u32,
    /// The sum of the results' usage (`None`: none reported usage).
    usage: Option<Usage>,
    /// Results that reported usage.
    with_usage: u32,
    /// The sum of the results' `num_turns`; `None` once one did not report it.
    num_turns: Option<u64>,
    /// The sum of the results' `duration_ms`; `None` once one did not report it.
    duration_ms: Option<u64>,
    /// Whether the gap in the usage, and in the other figures, was said already (once).
    said: (bool, bool),
}

/// A result's own figures (one query's).
struct QueryFigures {
    usage: Option<Usage>,
    num_turns: Option<u64>,
    duration_ms: Option<u64>,
}

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
        let own = QueryFigures {
            usage: parsed.usage.map(|u| usage_of(self.dialect, u)),
            num_turns: parsed.num_turns,
            duration_ms: parsed.duration_ms,
        };
        let whole = match self.dialect {
            Dialect::ClaudeCode => self.add_result(parsed, own, out),
            // Qwen Code: no follow-up query seen; its result is taken as it is.
            Dialect::QwenCode => own,
        };
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
            num_turns: whole.num_turns.map(|n| n as u32),
            cost_usd: parsed.total_cost_usd,
            duration_ms: whole.duration_ms,
            text,
            usage: whole.usage,
        });
    }

    /// Adds this result's own figures to the earlier results' of the same process and
    /// session ([`ProcessResults`]); returns the sums. Usage some results did not report
    /// is an `Unreported { kind: Usage }` (the sum of the others is a lower bound), and an
    /// unreported `num_turns` or `duration_ms` makes the sum unknown, with a diagnostic.
    fn add_result(
        &mut self,
        parsed: &Line,
        own: QueryFigures,
        out: &mut Vec<Event>,
    ) -> QueryFigures {
        self.calls_after_result = 0;
        let session_id = parsed.session_id.as_deref().map(String::from);
        let mut sums = match self.results.take() {
            Some(earlier) if earlier.session_id == session_id => earlier,
            _ => ProcessResults {
                session_id,
                num_turns: Some(0),
                duration_ms: Some(0),
                ..ProcessResults::default()
            },
        };
        sums.count += 1;
        sums.usage = match (sums.usage, own.usage) {
            (Some(a), Some(b)) => Some(a.saturating_add(&b)),
            (a, b) => a.or(b),
        };
        sums.with_usage += u32::from(own.usage.is_some());
        let follow_up = sums.count > 1;
        if follow_up && !sums.said.0 && sums.with_usage > 0 && sums.with_usage < sums.count {
            sums.said.0 = true;
            out.push(Event::Unreported {
                kind: UnreportedKind::Usage,
                call_id: None,
                reason: format!(
                    "Claude Code printed {} results in this process (a follow-up query after \
                     a background task ended), {} of them without usage: the usage is the \
                     others' sum, a lower bound",
                    sums.count,
                    sums.count - sums.with_usage
                ),
            });
        }
        let add = |sum: Option<u64>, own: Option<u64>| Some(sum?.saturating_add(own?));
        sums.num_turns = add(sums.num_turns, own.num_turns);
        sums.duration_ms = add(sums.duration_ms, own.duration_ms);
        let lost: Vec<&str> = [
            (sums.num_turns.is_none(), "`num_turns`"),
            (sums.duration_ms.is_none(), "`duration_ms`"),
        ]
        .into_iter()
        .filter_map(|(lost, name)| lost.then_some(name))
        .collect();
        if follow_up && !sums.said.1 && !lost.is_empty() {
            sums.said.1 = true;
            out.push(Event::diagnostic(
                "result_figures_unknown",
                format!(
                    "Claude Code printed {} results in this process (a follow-up query after a \
                     background task ended), and not every one has {}: the process's figure \
                     is unknown (null), not one query's alone",
                    sums.count,
                    lost.join(" or ")
                ),
                b"",
            ));
        }
        let whole = QueryFigures {
            usage: sums.usage,
            num_turns: sums.num_turns,
            duration_ms: sums.duration_ms,
        };
        self.results = Some(sums);
        whole
    }
}
