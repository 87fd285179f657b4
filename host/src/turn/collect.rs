//! The collector: the one place where events and stamps become counts, caps and timing.
//!
//! Fed event by event (live, so caps can stop the CLI at the right event) and finished
//! once with how the turn ended ([`Collector::finish`], in `finish.rs`). Same events and
//! stamps in, same [`TurnRecord`](crate::results::TurnRecord) out. Here: the collector's
//! state and [`Collector::push`], which hands each event kind to its handler: sessions,
//! model calls and messages in `calls.rs`, tool calls in `tools.rs`, retries and
//! unreported work in `retries.rs`, diagnostics in `diagnostics.rs`; where counting
//! stops (freeze, held calls, the cut) is in `cut.rs`. The timing maths are in
//! `timing.rs`.
//!
//! Caps (DESIGN.md): `max_turns: N` lets main-thread call N and its tools run, and fires
//! when main-thread call N+1 begins; `max_tool_calls: N` fires when tool call N+1 starts
//! after N have been made, or, against the scripted model, when it holds the reply that
//! would hand out tool call N+1 ([`Collector::held_call`]: that tool never runs). After a
//! cap fires, later events are no longer counted, so the record shows `num_turns = N + 1`.
//! The same holds after any other stop (an early stop, a budget, or one the host decides,
//! [`Collector::freeze`]). That stop is the cut: the trajectory (what the criteria read)
//! holds the events before it and, of the later ones, only the diagnostics the record
//! keeps too ([`cut::past_the_cut`]), so criteria and record see the same run.

use super::early_stop::BoxedWatcher;
use super::early_stop::EarlyStop;
use super::timing::ToolUnion;
use crate::limits::Caps;
use crate::limits::budget::{BudgetMeter, Budgets};
use crate::results::{
    CliResult, DiagnosticRecord, MessageRecord, ModelCallRecord, StampedEvent, StopReason,
    ToolCallRecord, UnreportedRecord,
};
use cut::past_the_cut;
use harness_kit::Event;
use harness_kit::reduce::HashMap;
pub(crate) use retries::Retries;
pub(crate) use totals::{Launch, TotalsBasis};

/// What the CLI said of its session (the first `session_started`).
#[derive(Debug, Clone, Default)]
pub(super) struct Session {
    pub(super) session_id: Option<String>,
    pub(super) cli_version: Option<String>,
    pub(super) model: Option<String>,
}

/// A model call and the µs stamp it began at.
#[derive(Debug, Clone)]
pub(super) struct ModelCall {
    pub(super) record: ModelCallRecord,
    pub(super) start_us: u64,
}

/// A tool call, its start and (once seen) its end, µs.
#[derive(Debug, Clone)]
pub(super) struct ToolCall {
    pub(super) record: ToolCallRecord,
    pub(super) start_us: u64,
    pub(super) end_us: Option<u64>,
}

/// Builds one turn's record from its events.
pub(crate) struct Collector {
    pub(super) caps: Caps,
    pub(super) trajectory: Vec<StampedEvent>,
    /// Whether events are kept in the trajectory (not when only the record is wanted).
    pub(super) keep_trajectory: bool,
    /// Whether a tool duration bounded by its model call was said already (once per turn:
    /// a CLI that prints tools only once finished does it on every call).
    pub(super) clip_said: bool,
    /// The cap that fired, if one did.
    pub(super) stop: Option<StopReason>,
    /// The host decided to end the turn (any reason): later events are not counted (the
    /// trajectory keeps only their diagnostics).
    pub(super) frozen: bool,
    pub(super) main_calls: u32,
    tools_started: u32,
    pub(super) first_output_us: Option<u64>,
    pub(super) last_output_us: Option<u64>,
    /// When the latest model call began (a back-dated tool start never goes before it).
    last_call_us: Option<u64>,
    pub(super) session: Option<Session>,
    pub(super) model_calls: Vec<ModelCall>,
    pub(super) messages: Vec<MessageRecord>,
    message_index: HashMap<String, usize>,
    pub(super) tools: Vec<ToolCall>,
    tool_index: HashMap<String, usize>,
    /// The union of the finished tool calls' intervals, kept as they finish.
    pub(super) tool_union: ToolUnion,
    pub(super) cli_result: Option<CliResult>,
    pub(super) diagnostics: Vec<DiagnosticRecord>,
    /// Diagnostics about the input itself (unreadable recording lines), which lead the
    /// record's diagnostics and the trajectory whenever they were met.
    pub(super) leading: Vec<StampedEvent>,
    /// The early-stop watcher of an armed run.
    pub(super) early_stop: Option<EarlyStop<BoxedWatcher>>,
    /// The token and USD budgets' meter, when the task sets one.
    pub(super) budget: Option<BudgetMeter>,
    /// Retried model requests, and the main thread's retry waits (`retries.rs`).
    pub(super) retries: Retries,
    /// Work the stream did not report.
    pub(super) unreported: Vec<UnreportedRecord>,
    /// How the CLI's reported totals accumulate, and whether this process resumed a
    /// session (`totals.rs`).
    pub(super) totals: TotalsBasis,
    /// Main-thread model calls the session's earlier launches made (a resumed session:
    /// the assistant turns its replayed history holds); a held call's index, the
    /// scripted model's count over that history, less these is this launch's own.
    earlier_turns: u32,
    /// The tool call whose start fired `max_tool_calls` (id, name): the CLI may still run
    /// it, so its end, arriving past the cut, is noted (`tool_ran_past_cap`).
    past_cap_tool: Option<(String, String)>,
    /// Every event reaches the host only after the CLI exited (a harness in
    /// [`EVENTS_AFTER_EXIT`](crate::components::EVENTS_AFTER_EXIT)): a live rule's
    /// decision (early stop, budget) cannot stop the CLI, so it does not cut the record.
    after_exit: bool,
    /// The live rule that decided after the CLI had exited ([`Collector::events_after_exit`]):
    /// the verdict it gives, with nothing cut and no host stop.
    pub(super) decided_after_exit: Option<StopReason>,
}

impl Collector {
    /// A collector that enforces `caps`.
    pub(crate) fn new(caps: Caps) -> Collector {
        Collector {
            caps,
            trajectory: Vec::new(),
            keep_trajectory: true,
            clip_said: false,
            stop: None,
            frozen: false,
            main_calls: 0,
            tools_started: 0,
            first_output_us: None,
            last_output_us: None,
            last_call_us: None,
            session: None,
            model_calls: Vec::new(),
            messages: Vec::new(),
            message_index: HashMap::default(),
            tools: Vec::new(),
            tool_index: HashMap::default(),
            tool_union: ToolUnion::default(),
            cli_result: None,
            diagnostics: Vec::new(),
            leading: Vec::new(),
            early_stop: None,
            budget: None,
            retries: Retries::default(),
            unreported: Vec::new(),
            totals: TotalsBasis::default(),
            earlier_turns: 0,
            past_cap_tool: None,
            after_exit: false,
            decided_after_exit: None,
        }
    }

    /// This process resumed a session whose earlier launches made `earlier_turns`
    /// main-thread model calls (time-budget mode): a held call's index
    /// ([`Collector::held_call`]) counts them, this launch's `num_turns` does not.
    pub(crate) fn resumed_after(&mut self, earlier_turns: u32) {
        self.earlier_turns = earlier_turns;
    }

    /// Every event of this turn reaches the host after the CLI exited (its transcript or
    /// session file is read then): an early stop or a budget that decides on them gives
    /// the turn its verdict (`early_stopped`, `token_budget_exceeded`, ...) but neither
    /// cuts the record (the CLI ran to its end: every call it made is counted and graded)
    /// nor stops the CLI ([`Collector::push`] returns no stop for it). A cap still cuts:
    /// it comes from the scripted model's hold, a real stop.
    pub(crate) fn events_after_exit(&mut self) {
        self.after_exit = true;
    }

    /// Keeps no trajectory: [`Collector::finish`] returns an empty one. For a caller that
    /// wants the record only (`replay`), whose memory then follows the record.
    pub(crate) fn without_trajectory(mut self) -> Collector {
        self.keep_trajectory = false;
        self
    }

    /// Watches the turn live: the early-stop watcher (armed criteria) and the budgets.
    /// Both see every event while the turn counts, so a replay decides at the same event.
    pub(crate) fn watch(&mut self, early_stop: Option<EarlyStop<BoxedWatcher>>, budgets: Budgets) {
        self.early_stop = early_stop;
        self.budget = budgets.any().then(|| BudgetMeter::new(budgets));
    }

    /// Whether the CLI's final result has been seen.
    pub(crate) fn final_result_seen(&self) -> bool {
        self.cli_result.is_some()
    }

    /// Takes one event; returns the cap that fires on it, the first time one does.
    pub(crate) fn push(&mut self, stamped: StampedEvent) -> Option<StopReason> {
        let (line, at) = (stamped.line, stamped.stamp_us);
        // The live watchers first: an early stop and a cap on the same event, the early
        // stop wins; a cap and a budget, the cap.
        let (mut early, mut over_budget) = (None, None);
        let counting = self.counting();
        if counting {
            if let Some(watcher) = self.early_stop.as_mut()
                && watcher.observe(&stamped).is_some()
            {
                early = Some(StopReason::EarlyStop);
            }
            if let Some(meter) = self.budget.as_mut()
                && let Some(breach) = meter.observe(at, &stamped.event)
            {
                over_budget = Some(breach.budget.stop_reason());
            }
        }
        if self.after_exit && self.decided_after_exit.is_none() {
            // The CLI had already exited: the decision is the verdict, not a cut.
            if let Some(reason) = early.take().or(over_budget.take()) {
                self.decided_after_exit = Some(reason);
                self.host_diagnostic(
                    line,
                    at,
                    "decided_after_exit",
                    format!(
                        "{} decided on an event that reached the host after the CLI had \
                         exited: the CLI ran to its end, so the record keeps every call it \
                         made; the decision gives the verdict only (the host stopped nothing)",
                        match reason {
                            StopReason::EarlyStop => "the early stop".to_string(),
                            other => format!("the budget ({})", other.as_str()),
                        }
                    ),
                );
            }
        }
        // The trajectory keeps the event as it came; the handlers take their own copy, or,
        // when no trajectory is kept (replay), the event itself: its strings move into the
        // record instead of being copied.
        let mut past_cap = None;
        // Only a `max_tool_calls` cap needs the start's names once the event is consumed.
        let tool_start = match &stamped.event {
            Event::ToolCallStarted { call_id, name, .. } if self.caps.max_tool_calls.is_some() => {
                Some((call_id.clone(), name.clone()))
            }
            _ => None,
        };
        let (kept, event) = if self.keep_trajectory {
            let event = stamped.event.clone();
            (Some(stamped), event)
        } else {
            (None, stamped.event)
        };
        let fired = match event {
            Event::Diagnostic { kind, message, raw } => {
                self.on_diagnostic(line, at, &kind, &message, &raw);
                None
            }
            // events@0.2.0: also noted as the diagnostic a harness@0.1.0 component sends in
            // their place (harness_kit::down_to_diagnostic), then acted on while counting:
            // a retried call is un-counted, unreported work makes the totals partial.
            ref event @ (Event::ModelCallRetried { .. } | Event::Unreported { .. }) => {
                if let Some((kind, message)) = harness_kit::down_to_diagnostic(event) {
                    self.on_diagnostic(line, at, &kind, &message, "");
                }
                if self.counting() {
                    self.on_gap(line, at, event);
                }
                None
            }
            // The end of the tool call that fired `max_tool_calls`: it ran past the cap.
            Event::ToolCallFinished {
                call_id,
                status,
                exit_code,
                ..
            } if !self.counting()
                && self
                    .past_cap_tool
                    .as_ref()
                    .is_some_and(|(id, _)| *id == call_id) =>
            {
                let (id, name) = self.past_cap_tool.take().unwrap_or_default();
                let cap = self.caps.max_tool_calls.unwrap_or_default();
                past_cap = Some(match status {
                    harness_kit::ToolStatus::Denied => (
                        "tool_denied_past_cap",
                        format!(
                            "tool call `{id}` ({name}), past max_tool_calls ({cap}), was \
                             refused by the CLI: it never ran"
                        ),
                    ),
                    _ => {
                        let how = match status {
                            harness_kit::ToolStatus::Ok => "ok",
                            harness_kit::ToolStatus::Error => "error",
                            _ => "unknown outcome",
                        };
                        let exit = exit_code.map_or(String::new(), |c| format!(", exit code {c}"));
                        (
                            "tool_ran_past_cap",
                            format!(
                                "tool call `{id}` ({name}), past max_tool_calls ({cap}), ran: \
                                 the CLI reported it finished ({how}{exit}) after the host \
                                 stopped it; its effects can be in the workspace, and it is \
                                 not in tool_calls"
                            ),
                        )
                    }
                });
                None
            }
            _ if !self.counting() => None,
            Event::SessionStarted {
                session_id,
                cli_version,
                model,
                ..
            } => {
                self.on_session(session_id, cli_version, model);
                None
            }
            Event::ModelCallStarted {
                message_id,
                parent_call_id,
            } => self.on_model_call(at, message_id, parent_call_id),
            Event::AssistantMessage {
                message_id,
                parent_call_id,
                text,
                usage,
                cost_usd,
            } => {
                self.on_message(at, message_id, parent_call_id, text, usage, cost_usd);
                None
            }
            Event::ToolCallStarted {
                call_id,
                name,
                input_json,
                parent_call_id,
            } => self.on_tool_start(line, at, call_id, name, &input_json, parent_call_id),
            Event::ToolCallFinished {
                call_id,
                status,
                output_excerpt,
                exit_code,
                cli_duration_ms,
            } => {
                self.on_tool_end(
                    line,
                    at,
                    tools::ToolEnd {
                        call_id: &call_id,
                        status,
                        output_excerpt,
                        exit_code,
                        cli_duration_ms,
                    },
                );
                None
            }
            Event::FinalResult {
                success,
                error_kind,
                error_message,
                max_turns_reached,
                num_turns,
                cost_usd,
                duration_ms,
                text,
                usage,
            } => {
                self.cli_result = Some(CliResult {
                    success,
                    error_kind,
                    error_message,
                    max_turns_reached,
                    num_turns,
                    cost_usd,
                    duration_ms,
                    text,
                    usage,
                });
                None
            }
        };
        // The tool start that fires `max_tool_calls` is not counted (the record holds the N
        // calls made): it is past the cut.
        let past_cap_start = tool_start.filter(|_| fired == Some(StopReason::MaxToolCalls));
        let counted = counting && past_cap_start.is_none();
        if let Some(stamped) = kept {
            if counted {
                self.trajectory.push(stamped);
            } else if let Some(kept) = past_the_cut(stamped) {
                self.trajectory.push(kept);
            }
        }
        let fired = early.or(fired).or(over_budget);
        if fired.is_some() {
            self.stop = fired;
        }
        // A stream-based `max_tool_calls` stop comes as tool N+1 starts: the CLI may run
        // it before it is stopped (the scripted model's hold, by contrast, never hands it
        // out). Said, so a record of N tools is never silently short of what ran.
        if let Some((id, name)) =
            past_cap_start.filter(|_| self.stop == Some(StopReason::MaxToolCalls))
        {
            let message = format!(
                "tool call `{id}` ({name}) began after max_tool_calls ({}) was reached: the \
                 host stopped the CLI then, but the CLI may have run it (its effects can be in \
                 the workspace); it is not in tool_calls",
                self.caps.max_tool_calls.unwrap_or_default()
            );
            self.past_cap_tool = Some((id, name));
            past_cap = Some(("tool_past_cap", message));
        }
        if let Some((kind, message)) = past_cap {
            self.host_diagnostic(line, at, kind, message);
        }
        fired
    }
}

mod calls;
mod cut;
mod diagnostics;
mod retries;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_gaps;
mod tools;
pub(crate) mod totals;
