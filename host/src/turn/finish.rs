//! [`Collector::finish`]: how the turn ended plus what the collector kept becomes the
//! [`TurnRecord`]: the final status, the caps, the timing buckets (maths in `timing.rs`),
//! each main call's generation time, usage and cost.

use super::collect::totals::{AttemptTotals, cumulative_note};
use super::collect::{Collector, ModelCall, Session, ToolCall};
use super::recording::ExitStatus;
use super::timing::{ms, timing};
use crate::results::{
    DiagnosticRecord, ExitRecord, ReducerError, StampedEvent, StopReason, TURN_RECORD_VERSION,
    ToolCallRecord, ToolOutcome, TotalsStatus, TurnRecord, TurnStatus, UnreportedRecord,
};
use harness_kit::Event;

/// How the turn ended, from outside the stream.
#[derive(Debug, Clone, Default)]
pub(crate) struct TurnEnd {
    /// µs from the turn's start.
    pub end_us: u64,
    /// How the CLI process ended, when known.
    pub exit: Option<ExitStatus>,
    /// The host's stop, when it ended the turn (a timeout makes the turn a timeout).
    pub stop: Option<StopReason>,
    /// Set when the reducer component failed.
    pub reducer_error: Option<ReducerError>,
    /// A replayed recording's stop record had a reason this host does not know: the turn
    /// was stopped, so it is never `completed` (at best `incomplete`).
    pub unknown_stop: bool,
    /// Complete stdout lines read.
    pub stdout_lines: u64,
    /// Stdout bytes read, newlines included.
    pub stdout_bytes: u64,
}

impl Collector {
    /// The turn record and the trajectory, given how the turn ended. The record's
    /// `harness` and `component` are left empty for the caller, which knows them.
    pub(crate) fn finish(mut self, end: TurnEnd) -> (TurnRecord, Vec<StampedEvent>) {
        self.take_leading();
        let attempt = self.attempt_totals();
        let end_us = end.end_us;
        let timed_out = end.stop.is_some_and(StopReason::is_timeout);
        // The host stopped the CLI (a cap, a budget, an early stop, a timeout) before its
        // final result: what the CLI reports only there, or last, is missing (Claude Code
        // reports its final usage only in its result; any CLI's in-flight model call is
        // never reported). The usage is partial, never complete (the cost: `run::cost`).
        if (self.stop.is_some() || end.stop.is_some() || self.frozen) && self.cli_result.is_none() {
            let at = |kind, reason: &str| UnreportedRecord {
                kind,
                call_id: None,
                reason: reason.to_string(),
                line: 0,
                at_ms: ms(end.end_us),
            };
            if attempt.usage_source == "messages" {
                self.unreported.push(at(
                    harness_kit::UnreportedKind::Usage,
                    "the host stopped the CLI before its final result: the usage streamed \
                     per model call is a lower bound (the final usage and the in-flight \
                     call's are missing)",
                ));
            }
        }
        // No final result, but the CLI exited with its documented turn-limit code (the
        // stream was cut as it exited): its own cap stopped it all the same.
        let exit_turn_limit = self.cli_result.is_none()
            && self.stop.is_none()
            && end.exit.is_some_and(|e| e.turn_limit);
        let mut diagnostics = self.diagnostics;
        if exit_turn_limit {
            diagnostics.push(DiagnosticRecord {
                line: 0,
                at_ms: ms(end_us),
                kind: "cap_from_exit_code".into(),
                message: format!(
                    "no final result, but exit code {} is the CLI's own turn limit: its \
                     max_turns cap stopped it",
                    end.exit.and_then(|e| e.code).unwrap_or_default()
                ),
                raw: String::new(),
            });
        }
        let cli_max = exit_turn_limit
            || self
                .cli_result
                .as_ref()
                .is_some_and(|r| r.max_turns_reached);
        let max_turns_exhausted = self.stop == Some(StopReason::MaxTurns) || cli_max;
        let cli_num_turns = self.cli_result.as_ref().and_then(|r| r.num_turns);
        let num_turns = if cli_max && self.stop.is_none() {
            // The CLI's own cap stopped it before call N+1 reached the stream.
            self.main_calls
                .max(cli_num_turns.unwrap_or(self.main_calls + 1))
        } else {
            self.main_calls
        };

        // Tool intervals in µs; an interrupted call runs to the turn's end. The finished
        // ones are in the union already.
        let mut union = self.tool_union;
        let mut tool_sum_ms = 0;
        let mut last_tool_end_us = None;
        for tool in &self.tools {
            let end = tool.end_us.unwrap_or(end_us).max(tool.start_us);
            if tool.end_us.is_none() {
                union.insert(ms(tool.start_us), ms(end));
            }
            tool_sum_ms += ms(end) - ms(tool.start_us);
            last_tool_end_us = last_tool_end_us.max(Some(end));
        }
        // Retry waits are neither generation nor tool time: the union of tools and waits
        // is what generation excludes; the waits' share outside tools is their bucket.
        let waits = &self.retries.waits;
        let busy = (!waits.is_empty()).then(|| {
            let mut busy = union.clone();
            for &(start, end) in waits {
                busy.insert(ms(start), ms(end));
            }
            busy.index()
        });
        let union = union.index();
        let busy = busy.as_ref().unwrap_or(&union);
        let last_activity_us = last_tool_end_us.max(self.last_output_us);
        let mut timing = timing(
            end_us,
            self.first_output_us,
            last_activity_us,
            busy,
            tool_sum_ms,
        );
        if !waits.is_empty()
            && let (Some(head), Some(busy_ms), Some(tail)) = (
                timing.harness_startup_ms,
                timing.tool_union_ms,
                timing.harness_teardown_ms,
            )
        {
            let tools_ms = union.covered(head, timing.turn_duration_ms - tail);
            // A retry before the first output (the first request failed) is retry wait,
            // not start-up: it comes out of the head.
            let waited_in_head = busy.covered(0, head) - union.covered(0, head);
            timing.harness_startup_ms = Some(head - waited_in_head);
            timing.tool_union_ms = Some(tools_ms);
            timing.retry_wait_ms = Some(busy_ms - tools_ms + waited_in_head);
        }
        let model_calls = generation_per_main_call(self.model_calls, last_activity_us, |w0, w1| {
            busy.covered(w0, w1)
        });

        let tool_calls: Vec<ToolCallRecord> = self
            .tools
            .into_iter()
            .map(
                |ToolCall {
                     mut record,
                     start_us,
                     end_us: stop,
                 }| {
                    record.duration_ms = ms(stop.unwrap_or(end_us).max(start_us)) - ms(start_us);
                    record
                },
            )
            .collect();
        // A call the CLI refused, or one with no end (the host stopped the CLI as it
        // started, the stream cut), is not known to have run: not a command.
        let commands = tool_calls
            .iter()
            .filter(|t| !matches!(t.status, ToolOutcome::Denied | ToolOutcome::Interrupted))
            .filter_map(command_of)
            .collect();

        let AttemptTotals {
            usage,
            usage_source,
            cost_usd,
            status: totals_status,
            note,
        } = attempt;
        if let Some(note) = note {
            diagnostics.push(cumulative_note(end_us, note));
        }
        let totals = match totals_status {
            TotalsStatus::Complete if !self.unreported.is_empty() => TotalsStatus::Partial,
            status => status,
        };

        // A live rule that decided after the CLI had exited gives the verdict as a stop would.
        let decided = self.stop.or(self.decided_after_exit);
        let final_status = if timed_out {
            TurnStatus::Timeout
        } else if end.stop == Some(StopReason::TimeBudget) {
            TurnStatus::TimeBudgetReached
        } else if decided == Some(StopReason::EarlyStop) {
            TurnStatus::EarlyStopped
        } else if max_turns_exhausted {
            TurnStatus::MaxTurnsExhausted
        } else if self.stop == Some(StopReason::MaxToolCalls) {
            TurnStatus::MaxToolCallsExhausted
        } else if matches!(
            decided,
            Some(
                StopReason::MaxInputTokens
                    | StopReason::MaxOutputTokens
                    | StopReason::MaxTotalTokens
            )
        ) {
            TurnStatus::TokenBudgetExceeded
        } else if decided == Some(StopReason::MaxUsd) {
            TurnStatus::CostBudgetExceeded
        } else if end.reducer_error.is_some() {
            TurnStatus::ReducerFailed
        } else {
            match &self.cli_result {
                Some(r) if r.success && !end.unknown_stop => TurnStatus::Completed,
                Some(r) if r.success => TurnStatus::Incomplete,
                Some(_) => TurnStatus::CliError,
                None => TurnStatus::Incomplete,
            }
        };
        let session = self.session.unwrap_or_default();
        let Session {
            session_id,
            cli_version,
            model,
        } = session;
        let record = TurnRecord {
            record_version: TURN_RECORD_VERSION,
            harness: String::new(),
            component: String::new(),
            session_id,
            cli_version,
            model,
            final_status,
            num_turns,
            cli_num_turns,
            max_turns_exhausted,
            max_tool_calls_exhausted: self.stop == Some(StopReason::MaxToolCalls),
            model_calls,
            messages: self.messages,
            tool_calls,
            commands,
            usage,
            usage_source: usage_source.to_string(),
            cost_usd,
            cli_result: self.cli_result,
            timing,
            exit: end.exit.map(|e| ExitRecord {
                at_ms: ms(e.stamp_us),
                code: e.code,
                signal: e.signal,
            }),
            diagnostics,
            reducer_error: end.reducer_error,
            stdout_lines: end.stdout_lines,
            stdout_bytes: end.stdout_bytes,
            early_stop: self.early_stop.as_ref().map(|e| e.outcome()),
            budget: self.budget.as_ref().and_then(|m| m.breach().copied()),
            retries: self.retries.records,
            unreported: self.unreported,
            totals,
            gateway: None,
        };
        (record, self.trajectory)
    }
}

impl Collector {
    /// Puts the input diagnostics in front (see [`Collector::input_diagnostic`]).
    fn take_leading(&mut self) {
        if self.leading.is_empty() {
            return;
        }
        let leading = std::mem::take(&mut self.leading);
        let mut records = Vec::with_capacity(leading.len() + self.diagnostics.len());
        for event in &leading {
            if let Event::Diagnostic { kind, message, raw } = &event.event {
                records.push(DiagnosticRecord {
                    line: event.line,
                    at_ms: ms(event.stamp_us),
                    kind: kind.clone(),
                    message: message.clone(),
                    raw: raw.clone(),
                });
            }
        }
        records.append(&mut self.diagnostics);
        self.diagnostics = records;
        if !self.keep_trajectory {
            return;
        }
        let mut trajectory = leading;
        trajectory.append(&mut self.trajectory);
        self.trajectory = trajectory;
    }
}

/// Each main-thread call's generation time: its window (its start to the next main call's
/// start, or to the last activity) minus the tool time inside it (`covered(from, to)`,
/// ms).
fn generation_per_main_call(
    mut calls: Vec<ModelCall>,
    last_activity_us: Option<u64>,
    covered: impl Fn(u64, u64) -> u64,
) -> Vec<crate::results::ModelCallRecord> {
    let main_starts: Vec<(usize, u64)> = calls
        .iter()
        .enumerate()
        .filter(|(_, c)| c.record.main_index.is_some())
        .map(|(i, c)| (i, c.start_us))
        .collect();
    for (k, &(i, start)) in main_starts.iter().enumerate() {
        let window_end = main_starts
            .get(k + 1)
            .map(|&(_, s)| s)
            .or(last_activity_us)
            .unwrap_or(start);
        let (w0, w1) = (ms(start), ms(window_end.max(start)));
        calls[i].record.generation_ms = Some(w1 - w0 - covered(w0, w1));
    }
    calls.into_iter().map(|c| c.record).collect()
}

/// The shell command of a tool call, when its input has one: the one definition the
/// reducers and the graders use too ([`harness_kit::shell::shell_command`]: `command`, or
/// `cmd`, as a string, or an argv joined with shell quoting).
fn command_of(tool: &ToolCallRecord) -> Option<String> {
    harness_kit::shell::shell_command(&tool.input)
}
