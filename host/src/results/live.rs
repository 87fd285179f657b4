//! What the live watchers of a run record: the early stop (`turn::early_stop`), the
//! budgets (`limits::budget`), and the armed gate of an early-stopped run.

use serde::{Deserialize, Serialize};

/// Why an early stop fired (`task.json` `early_stop.reason`, coder_eval's spelling).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EarlyStopReason {
    /// The `on_pass: stop` subset's floor reached the threshold.
    CriterionPassed,
    /// An armed criterion live-failed and the armed ceiling fell below the threshold.
    CriterionFailed,
    /// A `decide_within` budget ran out and the armed ceiling fell below the threshold.
    DecisionBudgetExceeded,
}

impl EarlyStopReason {
    pub fn as_str(self) -> &'static str {
        match self {
            EarlyStopReason::CriterionPassed => "criterion_passed",
            EarlyStopReason::CriterionFailed => "criterion_failed",
            EarlyStopReason::DecisionBudgetExceeded => "decision_budget_exceeded",
        }
    }
}

/// The early stop that fired, as `task.json` and `run.json` record it (`early_stop`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EarlyStopRecord {
    pub reason: EarlyStopReason,
    /// The deciding criterion's index in `success_criteria`.
    pub deciding_index: usize,
    /// The deciding criterion, `type: description`.
    pub deciding_criterion: String,
    /// Every armed criterion, `type: description`, in task-file order.
    pub armed: Vec<String>,
    /// Main-thread model calls begun when it fired (coder_eval's `sdk_turn_index`).
    pub model_call_index: u32,
    /// Finished tool calls when it fired, plus one when it fired on a call's start
    /// (coder_eval's 1-based `tool_call_index`).
    pub tool_call_index: u32,
    /// The 0-based index in the trajectory of the event it fired on.
    pub event_index: u64,
    /// ms from the turn's start to that event (its receive stamp, so replay agrees).
    pub elapsed_ms: u64,
    /// `max_turns` minus the model calls begun; `null` without `max_turns`.
    pub turns_remaining: Option<u32>,
    /// `run_limits.stop_early_gate_threshold`.
    pub gate_threshold: f64,
}

/// One armed criterion in the turn record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ArmedRecord {
    /// Its index in `success_criteria`.
    pub index: usize,
    /// `type: description`.
    pub criterion: String,
    pub weight: f64,
    /// Its live verdict when the turn ended: `undecided`, `passed (1.00)`, `failed: why`.
    pub verdict: String,
}

/// The early-stop watcher of an armed run, as the turn record keeps it (`early_stop`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EarlyStopOutcome {
    /// The armed criteria, in task-file order.
    pub armed: Vec<ArmedRecord>,
    /// `run_limits.stop_early_gate_threshold`.
    pub gate_threshold: f64,
    /// The stop, when one fired.
    pub fired: Option<EarlyStopRecord>,
    /// Why the watcher disarmed itself (it fails open), when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disarmed: Option<String>,
}

/// Which budget ran out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BudgetKind {
    MaxInputTokens,
    MaxOutputTokens,
    MaxTotalTokens,
    MaxUsd,
}

impl BudgetKind {
    /// The host's stop for this budget.
    pub fn stop_reason(self) -> super::StopReason {
        match self {
            BudgetKind::MaxInputTokens => super::StopReason::MaxInputTokens,
            BudgetKind::MaxOutputTokens => super::StopReason::MaxOutputTokens,
            BudgetKind::MaxTotalTokens => super::StopReason::MaxTotalTokens,
            BudgetKind::MaxUsd => super::StopReason::MaxUsd,
        }
    }

    /// The `run_limits` field.
    pub fn as_str(self) -> &'static str {
        match self {
            BudgetKind::MaxInputTokens => "max_input_tokens",
            BudgetKind::MaxOutputTokens => "max_output_tokens",
            BudgetKind::MaxTotalTokens => "max_total_tokens",
            BudgetKind::MaxUsd => "max_usd",
        }
    }

    /// A token budget (else the USD one).
    pub(crate) fn is_tokens(self) -> bool {
        self != BudgetKind::MaxUsd
    }
}

/// A budget that ran out, as `task.json` records it (`budget`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct BudgetBreach {
    pub budget: BudgetKind,
    /// The running figure that went over: tokens, or USD.
    pub actual: f64,
    /// The budget: tokens, or USD.
    pub limit: f64,
    /// The 0-based index in the trajectory of the event that took it over.
    pub event_index: u64,
    /// ms from the turn's start to that event.
    pub at_ms: u64,
    /// Main-thread model calls begun by then.
    pub model_calls: u32,
    /// Whose figures went over: `gateway` (the APIs' own usage per call, counted at the
    /// model gateway as each call ended: `run --gateway`; `event_index` is then the
    /// `seq` of the `model_call` that took it over); absent: the CLI's stream's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub figures: Option<BudgetFigures>,
}

/// Whose usage figures a budget was checked against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BudgetFigures {
    /// The model gateway's: each call's usage as the API reported it.
    Gateway,
}

/// One soft budget gone over, as `task.json` records it (`soft_budgets`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SoftBudgetWarning {
    /// `expected_turns` or `expected_tool_calls`.
    pub budget: String,
    pub expected: u32,
    pub actual: u32,
}

/// The gate of an early-stopped run: the weighted mean of the armed criteria's final
/// scores against `stop_early_gate_threshold`; the other criteria are advisory (`task.json`
/// `armed_gate`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ArmedGate {
    /// Σ weight·score / Σ weight over the armed criteria.
    pub score: f64,
    pub threshold: f64,
    pub passed: bool,
    /// The armed criteria's indices in `success_criteria`; the rest were advisory.
    pub armed: Vec<usize>,
}
