//! `run.json` (the suite: one row per task × harness, with the run's statistics): see
//! [`super`] for the file layout and the version rule.

use super::TaskStatus;
use serde::{Deserialize, Serialize};

/// One row of `run.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunRow {
    pub task_id: String,
    pub harness: String,
    pub status: TaskStatus,
    /// Why the row is an ERROR (or what else ended it badly): `task.json`'s `error_kind`
    /// (`interrupted`, `launch`, `cli_error`, ...); absent when it has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_kind: Option<String>,
    pub weighted_score: Option<f64>,
    pub num_turns: Option<u32>,
    pub tool_calls: Option<usize>,
    pub duration_ms: Option<u64>,
    /// When a cap stopped the turn: which, and who enforced it (see
    /// [`super::TaskResult::cap_note`]); a capped run can still be a SUCCESS.
    #[serde(default)]
    pub capped: Option<String>,
    /// When the early-stop watcher stopped the run: the reason, the deciding criterion,
    /// where, and the armed gate (see [`super::TaskResult::early_stop_note`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub early_stop: Option<String>,
    /// When a token or USD budget stopped the run (see [`super::TaskResult::budget_note`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<String>,
    /// A time-budget run's outcome: "time budget: 3 sessions, ended: deadline_reached"
    /// (see [`super::TaskResult::time_budget_note`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_budget: Option<String>,
    /// Soft budgets gone over (a badge, never a stop).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub soft_budgets: Option<String>,
    /// `[<variant>/]<task_id>/<harness>[/rNN]/task.json`, relative to `run.json`.
    pub result: String,
    /// The variant (experiment runs only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<String>,
    /// The replicate index (runs with repeats only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicate: Option<u32>,
    /// The summary of the task's `cost.json` (absent when no CLI was launched).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<super::CostSummary>,
    /// The model gateway's figures (`run --gateway`; absent without it): requests, main
    /// and side, median time to first response byte, usage source.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gateway: Option<super::GatewaySummary>,
}

/// `run.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunSummary {
    pub result_version: u32,
    pub rows: Vec<RunRow>,
    /// Every criterion's `suite_thresholds`, judged over its dataset's rows (absent when
    /// no criterion sets any). One that is not `passed` makes the run's exit code 1.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub suite_thresholds: Vec<super::SuiteThresholdResult>,
    /// Task × harness pairs of this run not finished yet: `run.json` is rewritten as tasks
    /// end (at most once per 2 s, and once at an interrupt), so while the run goes on (or
    /// after the host was killed) it lists the rows finished by its last rewrite and counts
    /// the rest here. Absent (0) once the run has finished.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unfinished: usize,
    /// `true` when the run was interrupted (the host received SIGINT, SIGTERM or SIGHUP,
    /// or a row ended by it: stop reason or `error_kind` `interrupted`); absent otherwise.
    /// `run --resume` finishes such a run.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
    /// The experiment this run resolved its tasks with (`experiment_id`, its file and
    /// variant ids); absent outside an experiment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub experiment: Option<ExperimentRecord>,
    /// Per variant (per harness without an experiment): pass rates over tasks and
    /// replicates with their intervals; written for runs with variants or repeats.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub statistics: Vec<super::VariantStatistics>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// `run.json`'s `experiment`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExperimentRecord {
    pub experiment_id: String,
    pub description: String,
    /// The experiment file (absolute path).
    pub file: String,
    pub variants: Vec<String>,
}
