//! `suite_thresholds`: a criterion's minimums over all the rows of a dataset task,
//! judged once the suite has run (coder_eval's across-row gate).
//!
//! ```yaml
//! success_criteria:
//!   - type: classification_match
//!     expected_label: "${row.label}"
//!     allowed_labels: [positive, negative]
//!     suite_thresholds: {accuracy: 0.8, recall.positive: 0.7, macro_f1: 0.6}
//! ```
//!
//! Metrics (0–1), over the rows that graded the criterion (one group per dataset task,
//! harness and criterion):
//! - every criterion: `mean` (of its scores), `min`, `max`, `pass_rate` (the share that
//!   passed);
//! - label-emitting criteria (`classification_match`, `skill_triggered`), from each row's
//!   (expected, observed) labels: `accuracy`, `precision.<label>`, `recall.<label>`,
//!   `f1.<label>`, `macro_f1` (also `f1` and `f1.macro`), `micro_f1` (`f1.micro`),
//!   `weighted_f1` (`f1.weighted`). A zero denominator gives 0, and so does a label that
//!   never occurs (coder_eval's convention).
//!
//! A group passes when every metric meets its minimum. A missed threshold, or a metric
//! that could not be computed (no row graded), fails the suite: `run.json` lists the
//! groups and the run's exit code is non-zero. At load: the task must declare a
//! `dataset:`, the criterion's weight must be > 0, thresholds are 0–1, and each name has
//! one of the shapes above (label metrics only on label-emitting types).

use crate::results::CriterionResult;
pub(crate) use crate::results::{SuiteThresholdResult, ThresholdCheck};
use std::collections::BTreeMap;

/// The criterion types whose rows carry (expected, observed) labels.
pub(crate) const LABEL_TYPES: [&str; 2] = ["classification_match", "skill_triggered"];

/// Metrics every criterion has.
const BASE: [&str; 4] = ["mean", "min", "max", "pass_rate"];
/// Label metrics without a label part.
const LABEL_WHOLE: [&str; 8] = [
    "accuracy",
    "macro_f1",
    "micro_f1",
    "weighted_f1",
    "f1",
    "f1.macro",
    "f1.micro",
    "f1.weighted",
];

/// Checks `suite_thresholds` of a criterion of type `kind` with `weight`.
pub fn validate(kind: &str, weight: f64, thresholds: &BTreeMap<String, f64>) -> Result<(), String> {
    if weight == 0.0 {
        return Err(
            "weight 0 makes the criterion informational, so it cannot also set \
                    suite_thresholds (a pass/fail gate); give it a weight, or drop \
                    suite_thresholds"
                .into(),
        );
    }
    if thresholds.is_empty() {
        return Err("suite_thresholds is empty".into());
    }
    let labels = LABEL_TYPES.contains(&kind);
    for (name, min) in thresholds {
        if !(0.0..=1.0).contains(min) {
            return Err(format!(
                "suite_thresholds.{name} must be between 0 and 1, got {min}"
            ));
        }
        let per_label = ["precision.", "recall.", "f1."]
            .iter()
            .any(|p| name.strip_prefix(p).is_some_and(|l| !l.is_empty()));
        let known = BASE.contains(&name.as_str());
        let label_metric = LABEL_WHOLE.contains(&name.as_str()) || per_label;
        if known {
            continue;
        }
        if label_metric && !labels {
            return Err(format!(
                "suite_thresholds.{name}: `{kind}` emits no labels; label metrics need \
                 classification_match or skill_triggered (every criterion has: {})",
                BASE.join(", ")
            ));
        }
        if !label_metric {
            return Err(format!(
                "suite_thresholds: unknown metric `{name}` (known: {}{})",
                BASE.join(", "),
                if labels {
                    ", accuracy, macro_f1, micro_f1, weighted_f1, precision.<label>, \
                     recall.<label>, f1.<label>"
                } else {
                    ""
                }
            ));
        }
    }
    Ok(())
}

/// The (expected, observed) labels of a label-emitting criterion's result, read from its
/// details (`observed=…, expected=…`, as `classification_match` and `skill_triggered`
/// write them).
pub fn labels(result: &CriterionResult) -> Option<(String, String)> {
    if !LABEL_TYPES.contains(&result.kind.as_str()) || result.error.is_some() {
        return None;
    }
    let re = regex::Regex::new(
        r#"observed=(?:"((?:[^"\\]|\\.)*)"|([^,;\s]+)), expected=(?:"((?:[^"\\]|\\.)*)"|([^,;\s]+))"#,
    )
    .expect("a fixed pattern");
    let c = re.captures(&result.details)?;
    let unquote = |q: Option<regex::Match>, bare: Option<regex::Match>| -> Option<String> {
        match (q, bare) {
            (Some(q), _) => serde_json::from_str::<String>(&format!("\"{}\"", q.as_str())).ok(),
            (None, Some(b)) => Some(b.as_str().to_string()),
            _ => None,
        }
    };
    let observed = unquote(c.get(1), c.get(2))?;
    let expected = unquote(c.get(3), c.get(4))?;
    Some((expected, observed))
}

/// Classification metrics of (expected, observed) pairs; empty for no pairs.
pub(crate) fn classification_metrics(pairs: &[(String, String)]) -> BTreeMap<String, f64> {
    let mut m = BTreeMap::new();
    if pairs.is_empty() {
        return m;
    }
    let mut labels: Vec<&String> = pairs.iter().flat_map(|(e, o)| [e, o]).collect();
    labels.sort();
    labels.dedup();
    let ratio = |a: usize, b: usize| if b == 0 { 0.0 } else { a as f64 / b as f64 };
    let f1 = |p: f64, r: f64| {
        if p + r == 0.0 {
            0.0
        } else {
            2.0 * p * r / (p + r)
        }
    };
    let (mut tp_all, mut fp_all, mut fn_all) = (0, 0, 0);
    let (mut f1_sum, mut f1_weighted, mut support_sum) = (0.0, 0.0, 0usize);
    for c in &labels {
        let tp = pairs.iter().filter(|(e, o)| e == *c && o == *c).count();
        let fp = pairs.iter().filter(|(e, o)| e != *c && o == *c).count();
        let fn_ = pairs.iter().filter(|(e, o)| e == *c && o != *c).count();
        let support = pairs.iter().filter(|(e, _)| e == *c).count();
        let (p, r) = (ratio(tp, tp + fp), ratio(tp, tp + fn_));
        let f = f1(p, r);
        m.insert(format!("precision.{c}"), p);
        m.insert(format!("recall.{c}"), r);
        m.insert(format!("f1.{c}"), f);
        tp_all += tp;
        fp_all += fp;
        fn_all += fn_;
        f1_sum += f;
        f1_weighted += f * support as f64;
        support_sum += support;
    }
    let accuracy = ratio(pairs.iter().filter(|(e, o)| e == o).count(), pairs.len());
    let macro_f1 = f1_sum / labels.len() as f64;
    let weighted = if support_sum == 0 {
        0.0
    } else {
        f1_weighted / support_sum as f64
    };
    let micro = f1(
        ratio(tp_all, tp_all + fp_all),
        ratio(tp_all, tp_all + fn_all),
    );
    m.insert("accuracy".into(), accuracy);
    for (names, v) in [
        (["macro_f1", "f1", "f1.macro"].as_slice(), macro_f1),
        (["micro_f1", "f1.micro"].as_slice(), micro),
        (["weighted_f1", "f1.weighted"].as_slice(), weighted),
    ] {
        for n in names {
            m.insert(n.to_string(), v);
        }
    }
    m
}

impl SuiteThresholdResult {
    /// A group none of whose `ungraded` rows graded the criterion: every threshold unmet.
    pub(crate) fn ungraded(
        task_id: &str,
        harness: &str,
        criterion_index: usize,
        spec: &super::CriterionSpec,
        ungraded: usize,
    ) -> SuiteThresholdResult {
        let thresholds = spec
            .suite_thresholds
            .iter()
            .flatten()
            .map(|(metric, &minimum)| ThresholdCheck {
                metric: metric.clone(),
                minimum,
                value: None,
                passed: false,
            })
            .collect();
        SuiteThresholdResult {
            task_id: task_id.to_string(),
            harness: harness.to_string(),
            criterion_index,
            kind: spec.kind.clone(),
            description: spec
                .description
                .clone()
                .unwrap_or_else(|| spec.kind.clone()),
            rows: 0,
            ungraded,
            metrics: BTreeMap::new(),
            thresholds,
            passed: false,
        }
    }
}

/// One criterion result of one row, with what identifies its group.
pub(crate) struct RowCriterion<'a> {
    pub task_id: &'a str,
    pub harness: &'a str,
    pub criterion_index: usize,
    pub thresholds: &'a BTreeMap<String, f64>,
    pub result: &'a CriterionResult,
}

/// Judges every group's thresholds. Groups are ordered by (task, harness, criterion).
pub(crate) fn evaluate(rows: &[RowCriterion<'_>]) -> Vec<SuiteThresholdResult> {
    type Key<'a> = (&'a str, &'a str, usize);
    let mut groups: BTreeMap<Key, Vec<&RowCriterion>> = BTreeMap::new();
    for r in rows {
        groups
            .entry((r.task_id, r.harness, r.criterion_index))
            .or_default()
            .push(r);
    }
    groups
        .into_iter()
        .map(|((task_id, harness, criterion_index), members)| {
            let first = members[0].result;
            let scores: Vec<f64> = members.iter().map(|m| m.result.score).collect();
            let mut metrics = BTreeMap::new();
            if !scores.is_empty() {
                metrics.insert(
                    "mean".into(),
                    scores.iter().sum::<f64>() / scores.len() as f64,
                );
                metrics.insert(
                    "min".into(),
                    scores.iter().cloned().fold(f64::INFINITY, f64::min),
                );
                metrics.insert(
                    "max".into(),
                    scores.iter().cloned().fold(f64::NEG_INFINITY, f64::max),
                );
                metrics.insert(
                    "pass_rate".into(),
                    members.iter().filter(|m| m.result.passed).count() as f64 / scores.len() as f64,
                );
            }
            let pairs: Vec<(String, String)> =
                members.iter().filter_map(|m| labels(m.result)).collect();
            let labelled = LABEL_TYPES.contains(&first.kind.as_str());
            metrics.extend(classification_metrics(&pairs));
            let thresholds: Vec<ThresholdCheck> = members[0]
                .thresholds
                .iter()
                .map(|(metric, &minimum)| {
                    let value = metrics.get(metric).copied().or_else(|| {
                        // A label that never occurred: coder_eval's 0 convention.
                        (labelled && !pairs.is_empty() && !BASE.contains(&metric.as_str()))
                            .then_some(0.0)
                    });
                    ThresholdCheck {
                        metric: metric.clone(),
                        minimum,
                        value,
                        passed: value.is_some_and(|v| v + 1e-9 >= minimum),
                    }
                })
                .collect();
            SuiteThresholdResult {
                task_id: task_id.to_string(),
                harness: harness.to_string(),
                criterion_index,
                kind: first.kind.clone(),
                description: first.description.clone(),
                rows: members.len(),
                ungraded: 0,
                passed: thresholds.iter().all(|t| t.passed),
                metrics,
                thresholds,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests;
