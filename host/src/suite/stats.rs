//! The numbers of a suite: per task (pass count, pass@k, pass^k, Wilson interval, flaky),
//! per variant (mean of per-task means, task-clustered standard error, t-interval) and
//! between two runs (paired difference, paired t-test, flipped tasks).
//!
//! Every figure is a closed form: nothing is resampled, so the same results give the same
//! numbers on every machine. Rates and scores are 0–1. A replicate that ended before
//! grading (ERROR, TIMEOUT), was skipped, or is missing is counted apart and never enters
//! a mean as a 0.

use crate::results::{
    CompareReport, CompareTask, Interval, MeanEstimate, TaskStatistics, TaskStatus,
    VariantStatistics,
};
use statrs::distribution::{ContinuousCDF, StudentsT};
use std::collections::BTreeMap;

/// z for a two-sided 95% interval.
const Z95: f64 = 1.959_963_984_540_054;

/// The unbiased pass@k estimator (Chen et al. 2021, "Evaluating Large Language Models
/// Trained on Code"): the chance that at least one of `k` replicates drawn without
/// replacement from `n` graded ones, `c` of which passed, passes:
/// 1 − C(n−c, k) / C(n, k). `None` when `k` is 0 or greater than `n`.
pub fn pass_at_k(n: u32, c: u32, k: u32) -> Option<f64> {
    if k == 0 || k > n || c > n {
        return None;
    }
    if n - c < k {
        return Some(1.0);
    }
    // C(n−c, k) / C(n, k) = Π_{i=n−c+1}^{n} (1 − k/i), stable for large n.
    let miss: f64 = ((n - c + 1)..=n)
        .map(|i| 1.0 - f64::from(k) / f64::from(i))
        .product();
    Some(1.0 - miss)
}

/// pass^k (Yao et al. 2024, τ-bench): the chance that all of `k` replicates drawn
/// without replacement from `n` graded ones, `c` of which passed, pass: C(c, k) / C(n, k).
/// `None` when `k` is 0 or greater than `n`.
pub fn pass_hat_k(n: u32, c: u32, k: u32) -> Option<f64> {
    if k == 0 || k > n || c > n {
        return None;
    }
    if c < k {
        return Some(0.0);
    }
    // Π_{i=0}^{k−1} (c − i) / (n − i)
    Some(
        (0..k)
            .map(|i| f64::from(c - i) / f64::from(n - i))
            .product(),
    )
}

/// The Wilson score interval (95%) of `successes` out of `n`; `None` when `n` is 0.
pub fn wilson(successes: u32, n: u32) -> Option<Interval> {
    if n == 0 {
        return None;
    }
    let n = f64::from(n);
    let p = f64::from(successes) / n;
    let z2 = Z95 * Z95;
    let denominator = 1.0 + z2 / n;
    let centre = (p + z2 / (2.0 * n)) / denominator;
    let half = Z95 * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt() / denominator;
    Some(Interval {
        low: (centre - half).max(0.0),
        high: (centre + half).min(1.0),
    })
}

/// The two-sided 95% quantile of Student's t with `df` degrees of freedom (t₀.₉₇₅).
pub fn t95(df: u32) -> Option<f64> {
    let dist = StudentsT::new(0.0, 1.0, f64::from(df)).ok()?;
    Some(dist.inverse_cdf(0.975))
}

/// The two-sided p-value of `t` under Student's t with `df` degrees of freedom.
pub fn t_test_p(t: f64, df: u32) -> Option<f64> {
    let dist = StudentsT::new(0.0, 1.0, f64::from(df)).ok()?;
    Some((2.0 * (1.0 - dist.cdf(t.abs()))).clamp(0.0, 1.0))
}

/// The mean of `values` (one per task) with its standard error (sample sd / √n) and a
/// t-interval on n − 1 degrees of freedom. Treating each task as one observation is the
/// task-clustered standard error of the mean of per-task means: replicates of one task
/// are not independent draws. One value: the mean alone. `None` when empty. Not clipped
/// (a difference may be negative): see [`rate_estimate`] for pass rates and scores.
pub fn mean_estimate(values: &[f64]) -> Option<MeanEstimate> {
    if values.is_empty() {
        return None;
    }
    let n = values.len();
    let mean = values.iter().sum::<f64>() / n as f64;
    if n < 2 {
        return Some(MeanEstimate {
            mean,
            n,
            se: None,
            df: None,
            ci95: None,
        });
    }
    let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    let se = (var / n as f64).sqrt();
    let df = (n - 1) as u32;
    let t = t95(df)?;
    Some(MeanEstimate {
        mean,
        n,
        se: Some(se),
        df: Some(df),
        ci95: Some(Interval {
            low: mean - t * se,
            high: mean + t * se,
        }),
    })
}

/// [`mean_estimate`] of values in [0, 1] (per-task pass rates, weighted scores), its
/// t-interval clipped to [0, 1]: the normal approximation of a few tasks otherwise reaches
/// past 0% or 100%, which no pass rate can.
pub fn rate_estimate(values: &[f64]) -> Option<MeanEstimate> {
    let mut e = mean_estimate(values)?;
    if let Some(ci) = &mut e.ci95 {
        ci.low = ci.low.max(0.0);
        ci.high = ci.high.min(1.0);
    }
    Some(e)
}

/// How one replicate counts in the statistics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The criteria decided it: passed or not, with its weighted score.
    Graded { passed: bool },
    /// It ended before grading (ERROR, TIMEOUT).
    Errored,
    /// `skip: true`.
    Skipped,
}

impl Outcome {
    /// How a status counts.
    pub fn of(status: TaskStatus) -> Outcome {
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
pub struct Replicate {
    pub status: TaskStatus,
    pub weighted_score: Option<f64>,
}

/// The statistics of one task on one variant from its replicates; `expected` is how many
/// replicates the run asked for (the ones without a result are `missing`).
pub fn task_statistics(task_id: &str, replicates: &[Replicate], expected: u32) -> TaskStatistics {
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
pub fn variant_statistics(variant: &str, tasks: Vec<TaskStatistics>) -> VariantStatistics {
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

/// Compares variant `b` against variant `a`, paired by task id: per task, B's pass rate
/// minus A's; their mean with a t-interval and a paired t-test (tasks − 1 df); the tasks
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
    let difference = mean_estimate(&diffs);
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
        // Every difference equal: no spread to test against.
        Some(MeanEstimate {
            mean, se: Some(_), ..
        }) => (None, Some(if *mean == 0.0 { 1.0 } else { 0.0 })),
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
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn pass_at_k_matches_the_binomial_formula_by_hand() {
        // n=5, c=2, k=2: 1 − C(3,2)/C(5,2) = 1 − 3/10 = 0.7
        assert!(close(pass_at_k(5, 2, 2).unwrap(), 0.7));
        // k=1 is the pass rate.
        assert!(close(pass_at_k(5, 2, 1).unwrap(), 0.4));
        // n=4, c=1, k=3: 1 − C(3,3)/C(4,3) = 1 − 1/4
        assert!(close(pass_at_k(4, 1, 3).unwrap(), 0.75));
        // n − c < k: certain.
        assert_eq!(pass_at_k(5, 3, 3), Some(1.0));
        assert_eq!(pass_at_k(5, 0, 5), Some(0.0));
        assert_eq!(pass_at_k(3, 1, 4), None);
        assert_eq!(pass_at_k(3, 1, 0), None);
    }

    #[test]
    fn pass_hat_k_is_all_k_passing() {
        // n=5, c=3, k=2: C(3,2)/C(5,2) = 3/10
        assert!(close(pass_hat_k(5, 3, 2).unwrap(), 0.3));
        assert!(close(pass_hat_k(4, 4, 4).unwrap(), 1.0));
        assert_eq!(pass_hat_k(4, 1, 2), Some(0.0));
        assert!(close(pass_hat_k(4, 1, 1).unwrap(), 0.25));
    }

    #[test]
    fn wilson_interval_by_hand() {
        // 2 of 4, z=1.96: centre 0.5, half = 1.96·√(0.0625 + 0.0600)/1.9604 ≈ 0.3498
        let w = wilson(2, 4).unwrap();
        assert!((w.low - 0.1500).abs() < 1e-3, "{w:?}");
        assert!((w.high - 0.8500).abs() < 1e-3, "{w:?}");
        // 0 of 10: [0, 0.2775]
        let w = wilson(0, 10).unwrap();
        assert_eq!(w.low, 0.0);
        assert!((w.high - 0.2775).abs() < 1e-3, "{w:?}");
        assert!(wilson(0, 0).is_none());
    }

    #[test]
    fn t_quantiles_are_the_tabled_ones() {
        assert!((t95(1).unwrap() - 12.706).abs() < 1e-3);
        assert!((t95(4).unwrap() - 2.776).abs() < 1e-3);
        assert!((t95(30).unwrap() - 2.042).abs() < 1e-3);
    }

    #[test]
    fn mean_of_task_means_with_clustered_interval() {
        // Task means 1, 0.5, 0: mean 0.5, sd 0.5, se 0.5/√3 = 0.288675, t(2) = 4.302653
        let m = mean_estimate(&[1.0, 0.5, 0.0]).unwrap();
        assert!(close(m.mean, 0.5));
        assert!((m.se.unwrap() - 0.288_675).abs() < 1e-6);
        assert_eq!(m.df, Some(2));
        let ci = m.ci95.unwrap();
        assert!(
            (ci.low - (0.5 - 4.302_653 * 0.288_675)).abs() < 1e-4,
            "{ci:?}"
        );
        // Clipped for rates: 0.5 ± 4.30 × 0.29 would reach −74% and 174%.
        let r = rate_estimate(&[1.0, 0.5, 0.0]).unwrap().ci95.unwrap();
        assert_eq!((r.low, r.high), (0.0, 1.0));
        let r = rate_estimate(&[1.0, 0.9, 0.95, 1.0]).unwrap().ci95.unwrap();
        assert!(r.high == 1.0 && r.low > 0.8, "{r:?}");
        let single = mean_estimate(&[0.7]).unwrap();
        assert_eq!((single.se, single.ci95), (None, None));
        assert!(mean_estimate(&[]).is_none());
    }

    fn rep(status: TaskStatus, score: Option<f64>) -> Replicate {
        Replicate {
            status,
            weighted_score: score,
        }
    }

    #[test]
    fn errored_and_missing_replicates_are_not_zeros() {
        let t = task_statistics(
            "t",
            &[
                rep(TaskStatus::Success, Some(1.0)),
                rep(TaskStatus::Failure, Some(0.5)),
                rep(TaskStatus::Error, None),
            ],
            4,
        );
        assert_eq!((t.graded, t.passes, t.errored, t.missing), (2, 1, 1, 1));
        assert_eq!(t.pass_rate, Some(0.5));
        assert_eq!(t.mean_score, Some(0.75));
        assert!(t.flaky);
        assert_eq!(t.pass_at_k.get("2"), Some(&1.0));
        let all_errors = task_statistics("u", &[rep(TaskStatus::Timeout, None)], 1);
        assert_eq!(all_errors.pass_rate, None);
        assert!(!all_errors.flaky);
        let v = variant_statistics("v", vec![t, all_errors]);
        // The errored task is counted, not averaged in as a 0.
        assert_eq!((v.tasks, v.tasks_graded), (2, 1));
        assert_eq!(v.pass_rate.unwrap().mean, 0.5);
        assert_eq!((v.errored, v.missing), (2, 1));
    }

    #[test]
    fn paired_comparison_by_hand() {
        let task = |id: &str, passes: u32| {
            let reps: Vec<Replicate> = (0..2)
                .map(|i| {
                    rep(
                        if i < passes {
                            TaskStatus::Success
                        } else {
                            TaskStatus::Failure
                        },
                        None,
                    )
                })
                .collect();
            task_statistics(id, &reps, 2)
        };
        let a = variant_statistics("a", vec![task("x", 0), task("y", 1), task("z", 2)]);
        let b = variant_statistics(
            "b",
            vec![task("x", 2), task("y", 2), task("z", 2), task("w", 1)],
        );
        let c = compare(&a, &b);
        // Differences 1, 0.5, 0: mean 0.5, se 0.288675, t = 1.732051, p(df 2) = 0.225403
        assert_eq!(c.paired_tasks, 3);
        assert_eq!(c.unpaired, vec!["w".to_string()]);
        assert!(close(c.difference.as_ref().unwrap().mean, 0.5));
        assert!((c.t_statistic.unwrap() - 1.732_051).abs() < 1e-5);
        assert!(
            (c.p_value.unwrap() - 0.225_403).abs() < 1e-4,
            "{:?}",
            c.p_value
        );
        let flips: Vec<_> = c
            .tasks
            .iter()
            .filter_map(|t| t.flipped.as_deref().map(|f| (t.task_id.as_str(), f)))
            .collect();
        assert_eq!(flips, vec![("x", "fail→pass")]);
    }
}
