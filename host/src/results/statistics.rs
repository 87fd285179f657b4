//! `run.json`'s `statistics` (per variant and per task, over replicates) and what
//! `coder-eval compare` prints with `--json`. Rates and scores 0–1; intervals 95%.
//! The formulas: `suite::stats`.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A 95% interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    pub low: f64,
    pub high: f64,
}

/// A mean over tasks (one value per task) with its task-clustered standard error and
/// t-interval on `n − 1` degrees of freedom (`null` with fewer than 2 tasks).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MeanEstimate {
    pub mean: f64,
    /// Tasks averaged.
    pub n: usize,
    pub se: Option<f64>,
    pub df: Option<u32>,
    pub ci95: Option<Interval>,
}

/// One task on one variant, over its replicates.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskStatistics {
    pub task_id: String,
    /// Replicates asked for.
    pub replicates: u32,
    /// Replicates the criteria decided (passed or failed).
    pub graded: u32,
    /// Graded replicates that passed (status SUCCESS).
    pub passes: u32,
    /// Replicates that ended before grading (ERROR, TIMEOUT): not in any rate.
    pub errored: u32,
    pub skipped: u32,
    /// Replicates asked for without a result.
    pub missing: u32,
    /// `passes / graded`; `null` when nothing was graded.
    pub pass_rate: Option<f64>,
    /// Mean weighted score of the graded replicates that have one.
    pub mean_score: Option<f64>,
    /// Unbiased pass@k, keyed by k (1 ≤ k ≤ graded).
    pub pass_at_k: BTreeMap<String, f64>,
    /// pass^k (all k drawn replicates pass), keyed by k.
    pub pass_hat_k: BTreeMap<String, f64>,
    /// Wilson 95% interval of the pass rate.
    pub wilson95: Option<Interval>,
    /// 0 < passes < graded.
    pub flaky: bool,
}

/// One variant (or harness, in a run without variants) over its tasks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VariantStatistics {
    /// The variant id; in a run without an experiment, the harness.
    pub variant: String,
    pub tasks: usize,
    /// Tasks with at least one graded replicate (the ones in the means).
    pub tasks_graded: usize,
    pub tasks_flaky: usize,
    /// Replicate counts, summed over tasks.
    pub graded: u32,
    pub passes: u32,
    pub errored: u32,
    pub skipped: u32,
    pub missing: u32,
    /// Mean of the per-task pass rates.
    pub pass_rate: Option<MeanEstimate>,
    /// Mean of the per-task mean weighted scores.
    pub score: Option<MeanEstimate>,
    pub per_task: Vec<TaskStatistics>,
}

/// One task of a comparison.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompareTask {
    pub task_id: String,
    /// Its pass rate in A and in B.
    pub a: f64,
    pub b: f64,
    /// `b − a`.
    pub difference: f64,
    /// `fail→pass` or `pass→fail` (a task passes when at least half its graded
    /// replicates do); `null` when the verdict is the same.
    pub flipped: Option<String>,
}

/// `coder-eval compare A B`: B against A, paired by task id.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompareReport {
    pub a: String,
    pub b: String,
    pub a_pass_rate: Option<MeanEstimate>,
    pub b_pass_rate: Option<MeanEstimate>,
    /// Tasks graded in both.
    pub paired_tasks: usize,
    /// Mean of the per-task differences (B − A) with its t-interval.
    pub difference: Option<MeanEstimate>,
    /// `null` when the test is undefined: fewer than 2 paired tasks, or every paired
    /// difference equal (standard error 0).
    pub t_statistic: Option<f64>,
    /// Two-sided; `null` exactly when `t_statistic` is.
    pub p_value: Option<f64>,
    /// Which test `p_value` comes from.
    pub test: String,
    pub tasks: Vec<CompareTask>,
    /// Tasks graded on one side only.
    pub unpaired: Vec<String>,
    /// The run folders compared, as given on the command line (absent in reports
    /// of an older coder-eval).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub a_run: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub b_run: Option<String>,
    /// What makes the comparison doubtful, one sentence each (also printed on stderr):
    /// the runs come from different experiments, or a side has missing replicates.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}
