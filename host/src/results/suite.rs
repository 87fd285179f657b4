//! `run.json`'s `suite_thresholds`: each criterion's minimums over a dataset's rows,
//! judged once the suite has run (the rules: `grading::suite`). Metrics are 0–1.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The result of one criterion's `suite_thresholds` over one group of rows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SuiteThresholdResult {
    /// The dataset task (its id before the row part).
    pub task_id: String,
    pub harness: String,
    /// The criterion's index in `success_criteria`.
    pub criterion_index: usize,
    /// Its type.
    #[serde(rename = "type")]
    pub kind: String,
    /// Its description, else its type.
    pub description: String,
    /// Rows that graded it.
    pub rows: usize,
    /// Rows of the group that ended before grading (ERROR, TIMEOUT): not in the metrics.
    #[serde(default)]
    pub ungraded: usize,
    /// Every metric computed (0–1).
    pub metrics: BTreeMap<String, f64>,
    /// Each threshold: the minimum, the value (`null` when it could not be computed) and
    /// whether it is met.
    pub thresholds: Vec<ThresholdCheck>,
    /// Every threshold met.
    pub passed: bool,
}

/// One `suite_thresholds` entry, judged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThresholdCheck {
    pub metric: String,
    pub minimum: f64,
    pub value: Option<f64>,
    pub passed: bool,
}
