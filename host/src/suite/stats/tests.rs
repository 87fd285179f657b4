//! The unit tests of the suite's statistics.

use super::*;
use crate::results::TaskStatus;

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
    // 0 of n is exactly 0 at the bottom, n of n exactly 1 at the top, whatever n
    // (0 of 3 gave 5.55e-17 from the formula).
    for n in 1..=40 {
        assert_eq!(wilson(0, n).unwrap().low, 0.0, "0 of {n}");
        assert_eq!(wilson(n, n).unwrap().high, 1.0, "{n} of {n}");
    }
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

#[test]
fn the_difference_interval_stays_within_minus_one_and_one() {
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
    let a = variant_statistics("a", vec![task("x", 0), task("y", 1)]);
    let b = variant_statistics("b", vec![task("x", 2), task("y", 2)]);
    // Differences 1 and 0.5: mean 0.75, se 0.25, t(1 df) 12.706: ±3.18 unclamped.
    let d = compare(&a, &b).difference.unwrap();
    assert!(close(d.mean, 0.75));
    let ci = d.ci95.unwrap();
    assert_eq!((ci.low, ci.high), (-1.0, 1.0));
    // Nothing clamps an interval inside the range.
    let c = compare(&a, &a).difference.unwrap().ci95.unwrap();
    assert_eq!((c.low, c.high), (0.0, 0.0));
}

/// Issue 15 trial: every paired difference equal (standard error 0): t and p are both
/// undefined (was p = 0.0000).
#[test]
fn equal_differences_leave_t_and_p_undefined() {
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
    for (a, b) in [(0, 2), (1, 1)] {
        let va = variant_statistics("a", vec![task("x", a), task("y", a)]);
        let vb = variant_statistics("b", vec![task("x", b), task("y", b)]);
        let c = compare(&va, &vb);
        assert_eq!(c.paired_tasks, 2);
        assert_eq!((c.t_statistic, c.p_value), (None, None), "{a} vs {b}");
    }
}

#[test]
fn a_one_task_comparison_says_why_there_is_no_interval_and_gives_the_replicates() {
    let task = |id: &str, passes: u32| {
        let reps: Vec<Replicate> = (0..6)
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
        task_statistics(id, &reps, 6)
    };
    let a = variant_statistics("a", vec![task("coin", 2)]);
    let b = variant_statistics("b", vec![task("coin", 5)]);
    let c = compare(&a, &b);
    assert_eq!(c.paired_tasks, 1);
    let note = single_task_note(&c, &a, &b).expect("a note for one paired task");
    assert!(note.contains("no between-task variance"), "{note}");
    assert!(
        note.contains("A 2 / 6 passed (33.3%, Wilson 95% [9.7%, 70.0%])"),
        "{note}"
    );
    assert!(note.contains("B − A +50.0%"), "{note}");
    assert!(note.contains("not a test"), "{note}");
    // Two paired tasks have an interval: no note.
    let a2 = variant_statistics("a", vec![task("coin", 2), task("dice", 1)]);
    let b2 = variant_statistics("b", vec![task("coin", 5), task("dice", 1)]);
    assert_eq!(single_task_note(&compare(&a2, &b2), &a2, &b2), None);
}
