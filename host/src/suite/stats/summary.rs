//! A task's figures on one variant from its replicates ([`task_statistics`]), and a
//! variant's over its tasks ([`variant_statistics`]).

use super::{pass_at_k, pass_hat_k, rate_estimate, wilson};
use crate::results::{TaskStatistics, TaskStatus, VariantStatistics};
use std::collections::BTreeMap;

/// How one replicate counts in the statistics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// The criteria decided it: passed or not, with its weighted score.
    Graded { passed: bool },
    /// It ended before grading (ERROR, TIMEOUT).
    Errored,
    /// `skip: true`.
    Skipped,
}

impl Outcome {
    /// How a status counts.
    pub(crate) fn of(status: TaskStatus) -> Outcome {
        match status {
            TaskStatus::Success => Outcome::Graded { passed: true },
            TaskStatus::Failure
            | TaskStatus::MaxTurnsExhausted
            | TaskStatus::TokenBudgetExceeded
            | TaskStatus::CostBudgetExceeded => Outcome::Graded { passed: false },
            TaskStatus::Error | TaskStatus::Timeout => Outcome::Errored,
            TaskStatus::Skipped => Outcome::Skipped,
        }
    }
}

/// One replicate's figures, as the statistics read them.
#[derive(Debug, Clone)]
pub(crate) struct Replicate {
    pub status: TaskStatus,
    pub weighted_score: Option<f64>,
}

/// The statistics of one task on one variant from its replicates; `expected` is how many
/// replicates the run asked for (the ones without a result are `missing`).
pub(crate) fn task_statistics(
    task_id: &str,
    replicates: &[Replicate],
    expected: u32,
) -> TaskStatistics {
    let (mut graded, mut passes, mut errored, mut skipped) = (0u32, 0u32, 0u32, 0u32);
    let mut scores = Vec::new();
    for r in replicates {
        match Outcome::of(r.status) {
            Outcome::Graded { passed } => {
                graded += 1;
                passes += u32::from(passed);
                if let Some(s) = r.weighted_score {
                    scores.push(s);
                }
            }
            Outcome::Errored => errored += 1,
            Outcome::Skipped => skipped += 1,
        }
    }
    let missing = expected.saturating_sub(replicates.len() as u32);
    let ks: Vec<u32> = if graded <= 10 {
        (1..=graded).collect()
    } else {
        let mut ks = vec![1, 2, 5, 10, graded];
        ks.dedup();
        ks
    };
    let pass_at_k: BTreeMap<String, f64> = ks
        .iter()
        .filter_map(|&k| pass_at_k(graded, passes, k).map(|v| (k.to_string(), v)))
        .collect();
    let pass_hat_k: BTreeMap<String, f64> = ks
        .iter()
        .filter_map(|&k| pass_hat_k(graded, passes, k).map(|v| (k.to_string(), v)))
        .collect();
    TaskStatistics {
        task_id: task_id.to_string(),
        replicates: expected.max(replicates.len() as u32),
        graded,
        passes,
        errored,
        skipped,
        missing,
        pass_rate: (graded > 0).then(|| f64::from(passes) / f64::from(graded)),
        mean_score: (!scores.is_empty()).then(|| scores.iter().sum::<f64>() / scores.len() as f64),
        pass_at_k,
        pass_hat_k,
        wilson95: wilson(passes, graded),
        flaky: passes > 0 && passes < graded,
    }
}

/// A variant's statistics from its tasks' statistics: the mean of the per-task pass
/// rates and of the per-task mean scores (tasks with no graded replicate left out, and
/// counted), each with its task-clustered interval.
pub(crate) fn variant_statistics(variant: &str, tasks: Vec<TaskStatistics>) -> VariantStatistics {
    let rates: Vec<f64> = tasks.iter().filter_map(|t| t.pass_rate).collect();
    let scores: Vec<f64> = tasks.iter().filter_map(|t| t.mean_score).collect();
    VariantStatistics {
        variant: variant.to_string(),
        tasks: tasks.len(),
        tasks_graded: rates.len(),
        tasks_flaky: tasks.iter().filter(|t| t.flaky).count(),
        graded: tasks.iter().map(|t| t.graded).sum(),
        passes: tasks.iter().map(|t| t.passes).sum(),
        errored: tasks.iter().map(|t| t.errored).sum(),
        skipped: tasks.iter().map(|t| t.skipped).sum(),
        missing: tasks.iter().map(|t| t.missing).sum(),
        pass_rate: rate_estimate(&rates),
        score: rate_estimate(&scores),
        per_task: tasks,
    }
}
