//! Two variants compared, paired by task id ([`compare`]): the mean difference in pass
//! rate with its interval and paired t-test, and the tasks whose verdict flipped.

use super::{mean_estimate, t_test_p};
use crate::results::{CompareReport, CompareTask, MeanEstimate, TaskStatistics, VariantStatistics};
use std::collections::BTreeMap;

/// Compares variant `b` against variant `a`, paired by task id: per task, B's pass rate
/// minus A's; their mean with a t-interval (clamped to [-1, 1]) and a paired t-test
/// (tasks − 1 df); the tasks
/// whose verdict flipped (a task passes when at least half its graded replicates do).
/// Tasks graded on one side only are listed, not paired.
pub fn compare(a: &VariantStatistics, b: &VariantStatistics) -> CompareReport {
    let a_by: BTreeMap<&str, &TaskStatistics> =
        a.per_task.iter().map(|t| (t.task_id.as_str(), t)).collect();
    let b_by: BTreeMap<&str, &TaskStatistics> =
        b.per_task.iter().map(|t| (t.task_id.as_str(), t)).collect();
    let mut tasks = Vec::new();
    let mut unpaired = Vec::new();
    let mut diffs = Vec::new();
    let ids: std::collections::BTreeSet<&str> = a_by.keys().chain(b_by.keys()).copied().collect();
    for id in ids {
        let ra = a_by.get(id).and_then(|t| t.pass_rate);
        let rb = b_by.get(id).and_then(|t| t.pass_rate);
        match (ra, rb) {
            (Some(ra), Some(rb)) => {
                diffs.push(rb - ra);
                let (pa, pb) = (ra >= 0.5, rb >= 0.5);
                tasks.push(CompareTask {
                    task_id: id.to_string(),
                    a: ra,
                    b: rb,
                    difference: rb - ra,
                    flipped: match (pa, pb) {
                        (false, true) => Some("fail→pass".into()),
                        (true, false) => Some("pass→fail".into()),
                        _ => None,
                    },
                });
            }
            _ => unpaired.push(id.to_string()),
        }
    }
    // A difference of pass rates lies in [-1, 1]: so does its interval (a t-interval on
    // few tasks reaches far past it).
    let difference = mean_estimate(&diffs).map(|mut d| {
        if let Some(ci) = &mut d.ci95 {
            ci.low = ci.low.clamp(-1.0, 1.0);
            ci.high = ci.high.clamp(-1.0, 1.0);
        }
        d
    });
    let (t, p_value) = match &difference {
        Some(MeanEstimate {
            mean,
            se: Some(se),
            df: Some(df),
            ..
        }) if *se > 0.0 => {
            let t = mean / se;
            (Some(t), t_test_p(t, *df))
        }
        // Every difference equal (standard error 0): t is undefined and so is p (null,
        // not 0 or 1: no spread to test against).
        _ => (None, None),
    };
    CompareReport {
        a: a.variant.clone(),
        b: b.variant.clone(),
        a_pass_rate: a.pass_rate.clone(),
        b_pass_rate: b.pass_rate.clone(),
        paired_tasks: diffs.len(),
        difference,
        t_statistic: t,
        p_value,
        test: "paired t-test on per-task pass rates (two-sided, tasks − 1 df)".into(),
        tasks,
        unpaired,
        a_run: None,
        b_run: None,
        warnings: Vec::new(),
    }
}

/// What a comparison over exactly one paired task can say, for `compare`'s warnings
/// (`None` unless [`compare`] paired exactly one task): why there is no interval and no
/// t-test (one task has no between-task variance), and that task's replicates on each
/// side (passed / graded, Wilson 95% of the pass rate) with the difference of their pass
/// rates, noted as a difference over replicates of one task, not a test.
pub fn single_task_note(
    c: &CompareReport,
    a: &VariantStatistics,
    b: &VariantStatistics,
) -> Option<String> {
    if c.paired_tasks != 1 {
        return None;
    }
    let paired = c.tasks.first()?;
    let find = |v: &VariantStatistics| {
        v.per_task
            .iter()
            .find(|t| t.task_id == paired.task_id)
            .cloned()
    };
    let (ta, tb) = (find(a)?, find(b)?);
    let pct = |v: f64| format!("{:.1}%", v * 100.0);
    let side = |t: &TaskStatistics| {
        let wilson = t.wilson95.map_or("-".to_string(), |i| {
            format!("[{}, {}]", pct(i.low), pct(i.high))
        });
        format!(
            "{} / {} passed ({}, Wilson 95% {wilson})",
            t.passes,
            t.graded,
            pct(t.pass_rate.unwrap_or(0.0))
        )
    };
    Some(format!(
        "1 paired task (`{}`): no interval and no t-test, since both are over tasks and one \
         task has no between-task variance. Over its replicates: A {}, B {}; B − A {:+.1}% \
         in pass rate. That is how this one task's replicates came out, not a test of B \
         against A (nor evidence about other tasks): compare over more tasks for one",
        paired.task_id,
        side(&ta),
        side(&tb),
        paired.difference * 100.0
    ))
}
