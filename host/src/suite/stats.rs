//! The numbers of a suite: per task (pass count, pass@k, pass^k, Wilson interval, flaky),
//! per variant (mean of per-task means, task-clustered standard error, t-interval) and
//! between two runs (paired difference, paired t-test, flipped tasks).
//!
//! Every figure is a closed form: nothing is resampled, so the same results give the same
//! numbers on every machine. Rates and scores are 0–1. A replicate that ended before
//! grading (ERROR, TIMEOUT), was skipped, or is missing is counted apart and never enters
//! a mean as a 0.
//!
//! The rooms: this file holds the closed-form estimators (pass@k, Wilson, t); `summary`
//! a task's and a variant's figures from replicates; `compare` two variants paired by task.

use crate::results::{Interval, MeanEstimate};
use statrs::distribution::{ContinuousCDF, StudentsT};

mod compare;
mod summary;
#[cfg(test)]
mod tests;

pub use compare::{compare, single_task_note};
pub(crate) use summary::{Replicate, task_statistics, variant_statistics};

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
pub(crate) fn wilson(successes: u32, n: u32) -> Option<Interval> {
    if n == 0 {
        return None;
    }
    let n = f64::from(n);
    let p = f64::from(successes) / n;
    let z2 = Z95 * Z95;
    let denominator = 1.0 + z2 / n;
    let centre = (p + z2 / (2.0 * n)) / denominator;
    let half = Z95 * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt() / denominator;
    // At 0 (or n) successes the bound is exactly 0 (or 1); the formula gives it only up
    // to rounding (0 of 3: 5.55e-17).
    Some(Interval {
        low: if successes == 0 {
            0.0
        } else {
            (centre - half).max(0.0)
        },
        high: if f64::from(successes) == n {
            1.0
        } else {
            (centre + half).min(1.0)
        },
    })
}

/// The two-sided 95% quantile of Student's t with `df` degrees of freedom (t₀.₉₇₅).
pub(crate) fn t95(df: u32) -> Option<f64> {
    let dist = StudentsT::new(0.0, 1.0, f64::from(df)).ok()?;
    Some(dist.inverse_cdf(0.975))
}

/// The two-sided p-value of `t` under Student's t with `df` degrees of freedom.
pub(crate) fn t_test_p(t: f64, df: u32) -> Option<f64> {
    let dist = StudentsT::new(0.0, 1.0, f64::from(df)).ok()?;
    Some((2.0 * (1.0 - dist.cdf(t.abs()))).clamp(0.0, 1.0))
}

/// The mean of `values` (one per task) with its standard error (sample sd / √n) and a
/// t-interval on n − 1 degrees of freedom. Treating each task as one observation is the
/// task-clustered standard error of the mean of per-task means: replicates of one task
/// are not independent draws. One value: the mean alone. `None` when empty. Not clipped
/// (a difference may be negative): see [`rate_estimate`] for pass rates and scores.
pub(crate) fn mean_estimate(values: &[f64]) -> Option<MeanEstimate> {
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
pub(crate) fn rate_estimate(values: &[f64]) -> Option<MeanEstimate> {
    let mut e = mean_estimate(values)?;
    if let Some(ci) = &mut e.ci95 {
        ci.low = ci.low.max(0.0);
        ci.high = ci.high.min(1.0);
    }
    Some(e)
}
