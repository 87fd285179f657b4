//! The variant comparison of `report.html` and the page of `coder-eval compare --html`
//! (maud: every value escaped), each with its interval chart (`chart.rs`).

use crate::results::{CompareReport, Interval, MeanEstimate, VariantStatistics};
use maud::{DOCTYPE, Markup, html};

fn pct(v: f64) -> String {
    format!("{:.1}%", v * 100.0)
}

fn interval(i: Option<&Interval>) -> String {
    i.map_or("-".into(), |i| format!("[{}, {}]", pct(i.low), pct(i.high)))
}

/// `mean [low, high]` of an estimate, as percentages (`-` for no interval). When every
/// task has the same value (standard error 0) the interval has no width, which reads as
/// certainty: a note in parentheses says it is only the tasks' lack of spread.
pub fn estimate(m: Option<&MeanEstimate>) -> String {
    match m {
        None => "-".into(),
        Some(m) if m.se == Some(0.0) && m.ci95.is_some() => format!(
            "{} {} (all {} tasks equal: no spread between them, not certainty)",
            pct(m.mean),
            interval(m.ci95.as_ref()),
            m.n
        ),
        Some(m) => format!("{} {}", pct(m.mean), interval(m.ci95.as_ref())),
    }
}

/// `mean [low, high]` of a compare's difference B − A, as percentages. Over fewer than
/// two paired tasks there is no spread to build an interval from: it is `undefined`,
/// like t and p when the standard error is 0 (not `[d, d]`, which claims a certainty one
/// task cannot give). `-` when nothing is paired.
pub fn difference(m: Option<&MeanEstimate>) -> String {
    match m {
        None => "-".into(),
        Some(m) if m.ci95.is_none() => format!(
            "{} [interval undefined: {} paired task(s), needs 2]",
            pct(m.mean),
            m.n
        ),
        Some(m) => estimate(Some(m)),
    }
}

/// t or p of a compare, `undefined` when there is none (every difference equal, or one
/// paired task) and `-` when nothing is paired.
pub fn statistic(c: &CompareReport, value: Option<f64>, digits: usize) -> String {
    match value {
        Some(v) => format!("{v:.digits$}"),
        None if c.paired_tasks == 0 => "-".into(),
        None => "undefined".into(),
    }
}

/// One task × variant cell of the "Passes per task" table: `passed / graded`, `flaky`,
/// `pass rate P [low, high]` (Wilson 95% of the pass rate), then `pass@k` and `pass^k`
/// at k = graded, then errored and missing replicates when there are any.
fn task_cell(t: &crate::results::TaskStatistics) -> Markup {
    let k = t.graded.to_string();
    html! {
        (t.passes) " / " (t.graded)
        @if t.flaky { " " span.FAILURE { "flaky" } }
        @if let Some(rate) = t.pass_rate {
            " · pass rate " (pct(rate)) " " (interval(t.wilson95.as_ref()))
        }
        @if let Some(p) = t.pass_at_k.get(&k) {
            " · pass@" (k) " " (pct(*p))
        }
        @if let Some(p) = t.pass_hat_k.get(&k) {
            " · pass^" (k) " " (pct(*p))
        }
        @if t.errored + t.missing > 0 {
            " · " span.muted { (t.errored) " errored, " (t.missing) " missing" }
        }
    }
}

/// The "Variants" section: one row per variant, then passes per task × variant.
pub fn variants(stats: &[VariantStatistics]) -> Markup {
    let mut tasks: Vec<&str> = Vec::new();
    for v in stats {
        for t in &v.per_task {
            if !tasks.contains(&t.task_id.as_str()) {
                tasks.push(&t.task_id);
            }
        }
    }
    html! {
        h2 { "Variants" }
        p.muted {
            "Pass rate: the mean over tasks of each task's pass rate over its graded "
            "replicates, with a 95% t-interval (task-clustered standard error, tasks − 1 "
            "degrees of freedom). Errored (ERROR, TIMEOUT), skipped and missing replicates "
            "are counted apart, never as failures."
        }
        table {
            tr {
                th { "variant" } th { "pass rate [95% CI]" } th { "mean score [95% CI]" }
                th { "tasks (graded)" } th { "flaky tasks" } th { "replicates graded / passed" }
                th { "errored" } th { "skipped" } th { "missing" }
            }
            @for v in stats {
                tr {
                    td { (v.variant) }
                    td { (estimate(v.pass_rate.as_ref())) }
                    td { (estimate(v.score.as_ref())) }
                    td { (v.tasks) " (" (v.tasks_graded) ")" }
                    td { (v.tasks_flaky) }
                    td { (v.graded) " / " (v.passes) }
                    td { (v.errored) } td { (v.skipped) } td { (v.missing) }
                }
            }
        }
        (super::chart::intervals(
            &stats
                .iter()
                .map(|v| super::chart::Row { label: &v.variant, estimate: v.pass_rate.as_ref() })
                .collect::<Vec<_>>(),
            0.0,
            1.0,
            None,
        ))
        h3 { "Passes per task" }
        p.muted {
            "Each cell: passed / graded replicates; the pass rate with its Wilson 95% "
            "interval (the interval is the pass rate's, not pass@k's); pass@k, the chance "
            "that at least one of k replicates passes, and pass^k, the chance that all k "
            "pass, both at k = graded (every k in run.json's statistics)."
        }
        table {
            tr {
                th { "task" }
                @for v in stats { th { (v.variant) } }
            }
            @for task in &tasks {
                tr {
                    td { (task) }
                    @for v in stats {
                        @match v.per_task.iter().find(|t| t.task_id == *task) {
                            Some(t) => td { (task_cell(t)) },
                            None => td.muted { "not run" },
                        }
                    }
                }
            }
        }
    }
}

/// The comparison as a self-contained page.
pub fn compare_page(c: &CompareReport) -> String {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                title { "coder-eval compare" }
                style { "body{font:14px/1.4 system-ui,sans-serif;margin:2em}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 8px;text-align:left}" }
            }
            body {
                h1 { "B (" (c.b) ") against A (" (c.a) ")" }
                @if let (Some(a), Some(b)) = (&c.a_run, &c.b_run) {
                    p { "A: " (c.a) " of " code { (a) } "; B: " (c.b) " of " code { (b) } }
                }
                @for w in &c.warnings {
                    p { strong { "Warning: " } (w) }
                }
                p {
                    "A: " (estimate(c.a_pass_rate.as_ref())) "; B: "
                    (estimate(c.b_pass_rate.as_ref())) ". Difference B − A over "
                    (c.paired_tasks) (if c.paired_tasks == 1 { " paired task: " } else { " paired tasks: " })
                    (difference(c.difference.as_ref()))
                    "; " (c.test) ": t = "
                    (statistic(c, c.t_statistic, 3))
                    ", p = " (statistic(c, c.p_value, 4))
                }
                (super::chart::intervals(
                    &[
                        super::chart::Row { label: &c.a, estimate: c.a_pass_rate.as_ref() },
                        super::chart::Row { label: &c.b, estimate: c.b_pass_rate.as_ref() },
                    ],
                    0.0,
                    1.0,
                    None,
                ))
                (super::chart::intervals(
                    &[super::chart::Row { label: "B − A", estimate: c.difference.as_ref() }],
                    -1.0,
                    1.0,
                    Some(0.0),
                ))
                p.muted {
                    "Pass rates are the mean over tasks of each task's pass rate, with a 95% "
                    "t-interval; \"-\" where there are too few tasks for one (fewer than 2). "
                    "The dashed line of the B − A chart is no difference."
                }
                table {
                    tr { th { "task" } th { "A" } th { "B" } th { "B − A" } th { "flipped" } }
                    @for t in &c.tasks {
                        tr {
                            td { (t.task_id) } td { (pct(t.a)) } td { (pct(t.b)) }
                            td { (format!("{:+.1}%", t.difference * 100.0)) }
                            td { (t.flipped.as_deref().unwrap_or("")) }
                        }
                    }
                }
                @if !c.unpaired.is_empty() {
                    p { "Graded on one side only: " (c.unpaired.join(", ")) }
                }
            }
        }
    }
    .into_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_zero_width_interval_says_the_tasks_are_equal_not_certain() {
        let equal = crate::suite::stats::rate_estimate(&[0.0, 0.0, 0.0]);
        assert_eq!(
            estimate(equal.as_ref()),
            "0.0% [0.0%, 0.0%] (all 3 tasks equal: no spread between them, not certainty)"
        );
        let spread = crate::suite::stats::rate_estimate(&[0.0, 0.5, 1.0]);
        assert!(!estimate(spread.as_ref()).contains("equal"));
        let one = crate::suite::stats::rate_estimate(&[1.0]);
        assert_eq!(estimate(one.as_ref()), "100.0% -");
    }

    /// The trial's flaky coin at 2 of 6: the Wilson interval sits beside the pass rate it
    /// belongs to, and pass^k is shown next to pass@k.
    #[test]
    fn a_task_cell_labels_the_pass_rate_interval_and_shows_pass_hat_k() {
        use crate::suite::stats::{pass_at_k, pass_hat_k, wilson};
        let t = crate::results::TaskStatistics {
            task_id: "coin".into(),
            replicates: 6,
            graded: 6,
            passes: 2,
            errored: 0,
            skipped: 0,
            missing: 0,
            pass_rate: Some(2.0 / 6.0),
            mean_score: None,
            pass_at_k: (1..=6)
                .map(|k| (k.to_string(), pass_at_k(6, 2, k).unwrap()))
                .collect(),
            pass_hat_k: (1..=6)
                .map(|k| (k.to_string(), pass_hat_k(6, 2, k).unwrap()))
                .collect(),
            wilson95: wilson(2, 6),
            flaky: true,
        };
        let cell = task_cell(&t).into_string();
        assert!(
            cell.contains("pass rate 33.3% [9.7%, 70.0%] · pass@6 100.0% · pass^6 0.0%"),
            "{cell}"
        );
    }
}
