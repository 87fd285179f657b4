//! The early-stop watcher (`stop_early`, coder_eval's semantics): the armed criteria
//! watch the run's events live, and the watcher ends the run as soon as their verdicts
//! settle the armed gate.
//!
//! Arming: a criterion with a `stop_early: {on_pass: stop|continue, decide_within: N}`
//! block (or the older `stop_when: pass|fail` with `run_limits.stop_early: true`) is
//! *armed*; each armed criterion has one live watcher (a `live-grader` component
//! instance, `runtime::grader_v2::LiveInstance`, armed from the task's [`LivePlan`] by
//! [`arm()`]). Its triggers:
//!
//! - **fail-stop**: an armed criterion's effective fail (its watcher answered `failed`,
//!   or its `decide_within` budget ran out) stops the run once the armed set's weighted
//!   *ceiling* (every undecided criterion credited its full weight, every failed one 0)
//!   falls below `run_limits.stop_early_gate_threshold`. It waits while any pass-capable
//!   armed criterion is still undecided, so a distractor's misfire cannot cut a run before
//!   the expected signal had its chance.
//! - **pass-stop**: once the weighted *floor* of the `on_pass: stop` subset (undecided
//!   members credited 0) reaches the threshold. It waits while a pass-capable armed
//!   criterion outside that subset is undecided.
//! - **`decide_within: N`**: still undecided after N finished tool calls that ran (a
//!   `denied` call, refused or unknown to the CLI, never ran and does not count; and none
//!   in flight) latches an effective fail (`decision_budget_exceeded`).
//!
//! Verdicts latch: a watcher that decided is not called again. A trigger whose polarity
//! the instance can never decide is inert (`on_pass: stop` on an instance that cannot
//! live-pass; the implicit fail trigger on one that cannot live-fail; `decide_within` on
//! one that cannot live-pass). The watcher fails open: a watcher that errs (a trap, a
//! verdict its decidability denies) disarms the whole early stop with a diagnostic and the
//! run goes on to its natural end.
//!
//! Everything here is a function of the events and their stamps, so a replay of the
//! recording reaches the same decision at the same event.

pub use crate::results::EarlyStopReason;
pub(crate) use crate::results::EarlyStopRecord;
use crate::results::StampedEvent;
pub(crate) use crate::results::{ArmedRecord, EarlyStopOutcome};
/// The live watcher's interface is the live grader component's (`runtime::grader_v2`):
/// the early stop drives any [`LiveWatcher`], a component instance or a test's double.
pub use crate::runtime::grader_v2::LiveWatcher;
pub(crate) use crate::runtime::grader_v2::{Decidability, LiveVerdict};
use harness_kit::{Event, ToolStatus};
use std::collections::HashSet;

mod arm;
mod block;
pub use arm::arm;
pub(crate) use arm::{ArmedSpec, BoxedWatcher, LivePlan};
pub(crate) use arm::{arm_one, to_arming};
pub(crate) use block::{OnPass, StopEarlyBlock, StopWhen};

/// How one criterion is armed (from the task file).
#[derive(Debug, Clone, PartialEq)]
pub struct Arming {
    /// The criterion's index in the task's `success_criteria`.
    pub index: usize,
    /// `type: description`, for records and people.
    pub label: String,
    /// The criterion's weight (> 0: a weight-0 criterion cannot be armed).
    pub weight: f64,
    /// `on_pass: stop`.
    pub on_pass_stop: bool,
    /// `decide_within: N` tool calls.
    pub decide_within: Option<u32>,
    /// What the instance can decide live (its watcher's answer at arming).
    pub decidability: Decidability,
}

impl Arming {
    /// The triggers of this arming that can never fire on this instance, by field name.
    pub(crate) fn inert_triggers(&self) -> Vec<&'static str> {
        let mut inert = Vec::new();
        if self.on_pass_stop && !self.decidability.can_pass {
            inert.push("on_pass: stop");
        }
        if self.decide_within.is_some() && !self.decidability.can_pass {
            inert.push("decide_within");
        }
        // A pass-only arm (`on_pass: stop`) has no fail trigger to be inert, and a
        // `decide_within` budget fails the criterion when it runs out (its fail trigger
        // can fire: it is never listed as inert).
        if !self.decidability.can_fail && !self.on_pass_stop && self.budget().is_none() {
            inert.push("the fail trigger");
        }
        inert
    }

    fn pass_trigger(&self) -> bool {
        self.on_pass_stop && self.decidability.can_pass
    }

    fn budget(&self) -> Option<u32> {
        self.decide_within.filter(|_| self.decidability.can_pass)
    }
}

/// One armed criterion's state.
#[derive(Debug, Clone, PartialEq)]
enum Latch {
    Undecided,
    Passed(f64),
    Failed { why: String, budget: bool },
}

/// The watcher of one turn.
pub struct EarlyStop<W> {
    arming: Vec<Arming>,
    watchers: Vec<W>,
    latched: Vec<Latch>,
    threshold: f64,
    max_turns: Option<u32>,
    main_calls: u32,
    /// Finished tool calls (`tool_call_index`).
    tools_finished: u32,
    /// Finished tool calls that ran (not `denied`): what `decide_within` counts.
    tools_ran: u32,
    pending: HashSet<String>,
    events: u64,
    fired: Option<EarlyStopRecord>,
    disarmed: Option<String>,
}

impl<W: LiveWatcher> EarlyStop<W> {
    /// A watcher for the armed criteria (in task-file order), each with its live watcher.
    pub fn new(
        arming: Vec<Arming>,
        watchers: Vec<W>,
        threshold: f64,
        max_turns: Option<u32>,
    ) -> EarlyStop<W> {
        assert_eq!(
            arming.len(),
            watchers.len(),
            "one watcher per armed criterion"
        );
        EarlyStop {
            latched: vec![Latch::Undecided; arming.len()],
            arming,
            watchers,
            threshold,
            max_turns,
            main_calls: 0,
            tools_finished: 0,
            tools_ran: 0,
            pending: HashSet::new(),
            events: 0,
            fired: None,
            disarmed: None,
        }
    }

    /// The stop that fired, if one did.
    pub fn fired(&self) -> Option<&EarlyStopRecord> {
        self.fired.as_ref()
    }

    /// Why the watcher disarmed itself (it fails open), if it did.
    pub fn disarmed(&self) -> Option<&str> {
        self.disarmed.as_deref()
    }

    /// The armed criteria.
    pub fn arming(&self) -> &[Arming] {
        &self.arming
    }

    /// Each armed criterion's latched verdict as text (`undecided`, `passed`,
    /// `failed: why`, `failed: decide_within …`), for the record.
    pub(crate) fn verdicts(&self) -> Vec<String> {
        self.latched
            .iter()
            .map(|l| match l {
                Latch::Undecided => "undecided".to_string(),
                Latch::Passed(s) => format!("passed ({s:.2})"),
                Latch::Failed { why, .. } => format!("failed: {why}"),
            })
            .collect()
    }

    /// What the turn record keeps of this watcher.
    pub fn outcome(&self) -> EarlyStopOutcome {
        EarlyStopOutcome {
            armed: self
                .arming
                .iter()
                .zip(self.verdicts())
                .map(|(a, verdict)| ArmedRecord {
                    index: a.index,
                    criterion: a.label.clone(),
                    weight: a.weight,
                    verdict,
                })
                .collect(),
            gate_threshold: self.threshold,
            fired: self.fired.clone(),
            disarmed: self.disarmed.clone(),
        }
    }

    /// Takes the next event of the trajectory; returns the stop when it fires on it (once).
    pub fn observe(&mut self, stamped: &StampedEvent) -> Option<&EarlyStopRecord> {
        let index = self.events;
        self.events += 1;
        if self.fired.is_some() || self.disarmed.is_some() {
            return None;
        }
        let mut in_flight = false;
        match &stamped.event {
            Event::ModelCallStarted {
                parent_call_id: None,
                ..
            } => self.main_calls += 1,
            Event::ToolCallStarted { call_id, .. } if !self.pending.contains(call_id) => {
                self.pending.insert(call_id.clone());
                in_flight = true;
            }
            Event::ToolCallFinished {
                call_id, status, ..
            } if self.pending.remove(call_id) => {
                self.tools_finished += 1;
                // A denied call never ran: it does not use up `decide_within`.
                if *status != ToolStatus::Denied {
                    self.tools_ran += 1;
                }
            }
            _ => {}
        }
        let mut passed_now = Vec::new();
        for i in 0..self.arming.len() {
            if self.latched[i] != Latch::Undecided {
                continue;
            }
            let verdict = match self.watchers[i].observe(stamped) {
                Ok(v) => v,
                Err(e) => {
                    self.disarm(format!(
                        "the live watcher of success_criteria[{}] (`{}`) failed: {e}",
                        self.arming[i].index, self.arming[i].label
                    ));
                    return None;
                }
            };
            let d = self.arming[i].decidability;
            self.latched[i] = match verdict {
                LiveVerdict::Undecided => Latch::Undecided,
                LiveVerdict::Passed(_) if !d.can_pass => {
                    return self.contradiction(i, "passed");
                }
                LiveVerdict::Failed(_) if !d.can_fail => {
                    return self.contradiction(i, "failed");
                }
                LiveVerdict::Passed(s) if s.is_finite() => {
                    passed_now.push(i);
                    Latch::Passed(s.clamp(0.0, 1.0))
                }
                LiveVerdict::Passed(s) => {
                    self.disarm(format!(
                        "the live watcher of success_criteria[{}] (`{}`) passed with score {s}",
                        self.arming[i].index, self.arming[i].label
                    ));
                    return None;
                }
                LiveVerdict::Failed(why) => Latch::Failed { why, budget: false },
            };
        }
        self.evaluate(index, stamped.stamp_us, in_flight, &passed_now)
    }

    fn contradiction(&mut self, i: usize, said: &str) -> Option<&EarlyStopRecord> {
        self.disarm(format!(
            "the live watcher of success_criteria[{}] (`{}`) {said}, which its decidability said it \
             cannot",
            self.arming[i].index,
            self.arming[i].label
        ));
        None
    }

    fn disarm(&mut self, why: String) {
        self.disarmed = Some(why);
    }

    /// The armed set's best case: undecided criteria at their full weight.
    fn ceiling(&self) -> f64 {
        let total: f64 = self.arming.iter().map(|a| a.weight).sum();
        let got: f64 = self
            .arming
            .iter()
            .zip(&self.latched)
            .map(|(a, l)| match l {
                Latch::Undecided => a.weight,
                Latch::Passed(s) => a.weight * s,
                Latch::Failed { .. } => 0.0,
            })
            .sum();
        got / total
    }

    /// The `on_pass: stop` subset's worst case, or `None` when the subset is empty.
    fn floor(&self) -> Option<f64> {
        let mut total = 0.0;
        let mut got = 0.0;
        for (a, l) in self.arming.iter().zip(&self.latched) {
            if !a.pass_trigger() {
                continue;
            }
            total += a.weight;
            if let Latch::Passed(s) = l {
                got += a.weight * s;
            }
        }
        (total > 0.0).then(|| got / total)
    }

    fn evaluate(
        &mut self,
        index: u64,
        stamp_us: u64,
        in_flight: bool,
        passed_now: &[usize],
    ) -> Option<&EarlyStopRecord> {
        // decide_within: counted in finished calls that ran (a denied one did not), never
        // while a call is in flight (the call in hand may be the one that decides).
        let mut flipped_to_budget = Vec::new();
        if self.pending.is_empty() {
            for (i, a) in self.arming.iter().enumerate() {
                if let (Latch::Undecided, Some(n)) = (&self.latched[i], a.budget())
                    && self.tools_ran >= n
                {
                    flipped_to_budget.push((i, n));
                }
            }
        }
        for (i, n) in flipped_to_budget {
            self.latched[i] = Latch::Failed {
                why: format!("undecided after decide_within {n} tool calls"),
                budget: true,
            };
        }
        let tool_call_index = self.tools_finished + u32::from(in_flight);
        let pass_capable_undecided = |outside_pass_subset: bool| {
            self.arming.iter().zip(&self.latched).any(|(a, l)| {
                *l == Latch::Undecided
                    && a.decidability.can_pass
                    && (!outside_pass_subset || !a.pass_trigger())
            })
        };
        if !pass_capable_undecided(false) {
            let failed = |budget_wanted: bool| {
                self.arming.iter().zip(&self.latched).position(|(a, l)| {
                    matches!(l, Latch::Failed { budget, .. }
                        if *budget == budget_wanted && (budget_wanted || a.decidability.can_fail))
                })
            };
            let candidate = failed(false)
                .map(|i| (i, EarlyStopReason::CriterionFailed))
                .or_else(|| failed(true).map(|i| (i, EarlyStopReason::DecisionBudgetExceeded)));
            if let Some((i, reason)) = candidate
                && self.ceiling() < self.threshold
            {
                return self.fire(reason, i, index, stamp_us, tool_call_index);
            }
        }
        if !pass_capable_undecided(true)
            && let Some(floor) = self.floor()
            && floor >= self.threshold
        {
            // The deciding criterion (coder_eval's attribution): the last of the subset,
            // in task-file order, that passed on this event; else the last of the subset.
            let subset: Vec<usize> = (0..self.arming.len())
                .filter(|&i| self.arming[i].pass_trigger())
                .collect();
            let deciding = subset
                .iter()
                .rev()
                .find(|i| passed_now.contains(i))
                .or(subset.last())
                .copied()
                .unwrap_or(0);
            return self.fire(
                EarlyStopReason::CriterionPassed,
                deciding,
                index,
                stamp_us,
                tool_call_index,
            );
        }
        None
    }

    fn fire(
        &mut self,
        reason: EarlyStopReason,
        i: usize,
        event_index: u64,
        stamp_us: u64,
        tool_call_index: u32,
    ) -> Option<&EarlyStopRecord> {
        self.fired = Some(EarlyStopRecord {
            reason,
            deciding_index: self.arming[i].index,
            deciding_criterion: self.arming[i].label.clone(),
            armed: self.arming.iter().map(|a| a.label.clone()).collect(),
            model_call_index: self.main_calls,
            tool_call_index,
            event_index,
            elapsed_ms: stamp_us / 1000,
            turns_remaining: self.max_turns.map(|n| n.saturating_sub(self.main_calls)),
            gate_threshold: self.threshold,
        });
        self.fired.as_ref()
    }
}

/// The armed gate of a run cut short by an early stop: the weighted mean of the armed
/// criteria's final scores (`scores[i]` for `arming[i]`) reaches the threshold. A run that
/// ends naturally is gated on the full criteria set instead.
pub fn armed_gate(weights: &[f64], scores: &[f64], threshold: f64) -> (f64, bool) {
    let total: f64 = weights.iter().sum();
    if total <= 0.0 {
        return (0.0, false);
    }
    let got: f64 = weights.iter().zip(scores).map(|(w, s)| w * s).sum();
    let score = got / total;
    (score, score >= threshold)
}

#[cfg(test)]
mod tests;
