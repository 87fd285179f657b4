//! The suite-level gate: every criterion's `suite_thresholds` judged over the rows of its
//! dataset task ([`crate::grading::suite`]), once the whole suite has run. A row is a task
//! made from one dataset row; its group is the dataset task it came from (its `row`'s
//! `suite_id`, the task file's own `task_id`), per harness and criterion. Rows that ended
//! before grading (ERROR, TIMEOUT) have no result for the criterion and are counted apart
//! (`ungraded`).

use crate::grading::CriterionSpec;
use crate::grading::suite::{RowCriterion, evaluate};
use crate::results::{SuiteThresholdResult, TaskResult};
use std::collections::BTreeMap;

/// The dataset task a result belongs to: its row's `suite_id`; for a result without a
/// row (an older `task.json`), its id before the first `/`.
pub(crate) fn suite_of(r: &TaskResult) -> &str {
    match &r.row {
        Some(row) => &row.suite_id,
        None => r.task_id.split('/').next().unwrap_or(&r.task_id),
    }
}

/// Each task's criteria, by task id (what [`suite_verdicts`] reads the thresholds from).
pub type CriteriaByTask = BTreeMap<String, Vec<CriterionSpec>>;

/// Judges every `suite_thresholds` of the suite. Empty when no criterion sets any.
pub fn suite_verdicts(
    results: &[TaskResult],
    criteria: &CriteriaByTask,
) -> Vec<SuiteThresholdResult> {
    let mut rows = Vec::new();
    // (suite, harness, criterion) → (ungraded rows, the criterion as a row has it).
    let mut ungraded: BTreeMap<(String, String, usize), (usize, &CriterionSpec)> = BTreeMap::new();
    for r in results {
        let Some(specs) = criteria.get(&r.task_id) else {
            continue;
        };
        for (i, spec) in specs.iter().enumerate() {
            let Some(thresholds) = &spec.suite_thresholds else {
                continue;
            };
            match r.criteria.get(i) {
                Some(result) => rows.push(RowCriterion {
                    task_id: suite_of(r),
                    harness: &r.harness,
                    criterion_index: i,
                    thresholds,
                    result,
                }),
                None => {
                    ungraded
                        .entry((suite_of(r).to_string(), r.harness.clone(), i))
                        .or_insert((0, spec))
                        .0 += 1
                }
            }
        }
    }
    let mut out = evaluate(&rows);
    for g in &mut out {
        g.ungraded = ungraded
            .remove(&(g.task_id.clone(), g.harness.clone(), g.criterion_index))
            .map_or(0, |(n, _)| n);
    }
    // Groups where no row was graded at all: every threshold unmet, value unknown.
    for ((task_id, harness, i), (n, spec)) in ungraded {
        out.push(SuiteThresholdResult::ungraded(
            &task_id, &harness, i, spec, n,
        ));
    }
    out
}

/// One line per group, for the terminal.
pub fn summary_line(g: &SuiteThresholdResult) -> String {
    let checks: Vec<String> = g
        .thresholds
        .iter()
        .map(|t| {
            format!(
                "{} {} ≥ {}{}",
                t.metric,
                t.value.map_or("unknown".into(), |v| format!("{v:.3}")),
                t.minimum,
                if t.passed { "" } else { " FAILED" }
            )
        })
        .collect();
    format!(
        "{} suite {:<22} {:<12} criterion {} ({}), {} rows: {}",
        if g.passed { '+' } else { 'x' },
        g.task_id,
        g.harness,
        g.criterion_index + 1,
        g.description,
        g.rows,
        checks.join(", ")
    )
}
