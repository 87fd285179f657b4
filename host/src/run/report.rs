//! `report.html`: a suite's results as one self-contained HTML page (no external files;
//! one small inline script filters and sorts the matrix, and the page reads the same
//! without it), written beside `run.json` by every `coder-eval run` and kept in step by
//! `grade --write`. Every value from a run is escaped (maud templates).
//!
//! The page holds:
//! - per harness: tasks that passed, mean weighted score, median turn duration, tokens
//!   (input, output, cache read, cache write) and cost in USD, each run's from its
//!   `cost.json` summary (a time-budget run's sessions summed), summed over the tasks that
//!   report one, with how many did and how many are partial (a lower bound: the host's
//!   stop cut the CLI off before it reported all of it; "not reported" is a CLI that
//!   reports none);
//! - in an experiment, the variants take the harnesses' place in the two tables below,
//!   and a *Variants* section compares them over replicates (`suite::report`);
//! - a matrix, one row per task and one column per harness: status, score, turns, tool
//!   calls and turn duration, linking to the task's `task.json`;
//! - per task × harness: where the turn's time went (head, generation, tools, tail, as a
//!   bar and in ms), the criteria with score and details, the error or stop when there is
//!   one, and what the agent left running.
//!
//! The rooms: this file lays out the page (summary, matrix, gates); `detail` renders one
//! run's section (timing bar, tool calls, criteria).

use crate::results::{
    SuiteThresholdResult, TaskResult, TaskStatus, TotalsStatus, VariantStatistics,
};
use maud::{DOCTYPE, Markup, html};
use std::path::Path;

mod detail;
#[cfg(test)]
mod tests;

use super::anchors::{anchor, run_anchor};
use detail::run_detail;

/// The page for these results (see the module docs for its content).
/// `statistics` (a run with variants or replicates) adds the variant comparison: pass
/// rates over tasks with their intervals, and per task the passes of each variant.
pub fn render(
    results: &[TaskResult],
    gates: &[SuiteThresholdResult],
    statistics: &[VariantStatistics],
) -> String {
    let mut harnesses: Vec<&str> = Vec::new();
    let mut tasks: Vec<&str> = Vec::new();
    for r in results {
        if !harnesses.contains(&column(r)) {
            harnesses.push(column(r));
        }
        if !tasks.contains(&r.task_id.as_str()) {
            tasks.push(&r.task_id);
        }
    }
    let by_variant = results.iter().any(|r| r.variant.is_some());
    let find = |task: &str, harness: &str| -> Vec<&TaskResult> {
        results
            .iter()
            .filter(|r| r.task_id == task && column(r) == harness)
            .collect()
    };
    let page = html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                // No favicon request: the page loads nothing but itself.
                link rel="icon" href="data:,";
                title { "coder-eval report" }
                style { (STYLE) (super::trajectory_view::STYLE) }
            }
            body {
                h1 { "coder-eval report" }
                p.muted {
                    (header(results, tasks.len())) ". coder-eval "
                    (env!("CARGO_PKG_VERSION")) ". Statuses and fields as in task.json; "
                    "\"turns\" are main-thread model calls. Costs are what each CLI reports "
                    "(against the scripted model they mean nothing: Pi and OpenCode are "
                    "configured at 0, Codex and Gemini CLI report none)."
                }
                (super::trajectory_view::glance(results))
                @if !statistics.is_empty() { (crate::suite::report::variants(statistics)) }
                h2 { (if by_variant { "Variants (runs)" } else { "Harnesses" }) }
                table {
                    tr {
                        th { (if by_variant { "variant" } else { "harness" }) } th { "passed" } th { "mean score (graded runs)" }
                        th { "median turn time" } th { "tokens in / out" }
                        th { "cache read / write" } th { "cost (USD)" }
                    }
                    @for harness in &harnesses {
                        (harness_row(harness, results))
                    }
                }
                h2 { "Tasks" }
                (super::matrix_filter::controls(&harnesses, results))
                table #matrix {
                    tr {
                        th { "task" }
                        @for harness in &harnesses { th { (harness) } }
                    }
                    @for task in &tasks {
                        tr data-tags=(super::matrix_filter::tags_of(task, results)) {
                            td { a href={ "#" (anchor(task, "")) } { (task) } }
                            @for harness in &harnesses {
                                @match find(task, harness).as_slice() {
                                    [] => td.muted { "not run" },
                                    [r] => (matrix_cell(r)),
                                    many => (replicates_cell(many)),
                                }
                            }
                        }
                    }
                }
                (super::matrix_filter::script())
                @if !gates.is_empty() { (thresholds(gates)) }
                h2 { "Runs" }
                @for task in &tasks {
                    h3 id=(anchor(task, "")) { (task) }
                    @for r in results.iter().filter(|r| r.task_id == *task) {
                        (run_detail(r))
                    }
                }
            }
        }
    };
    page.into_string()
}

/// Writes [`render`] to `path` atomically (temporary file, then rename).
pub fn write(
    path: &Path,
    results: &[TaskResult],
    gates: &[SuiteThresholdResult],
    statistics: &[VariantStatistics],
) -> std::io::Result<()> {
    crate::results::write_atomically(path, render(results, gates, statistics).as_bytes())
}

const STYLE: &str = "
body { font: 14px/1.4 system-ui, sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; margin-bottom: 1.5em; }
th, td { border: 1px solid #ccc; padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: #f4f4f4; }
.muted { color: #777; }
.SUCCESS { background: #e3f6e3; }
.FAILURE { background: #fbe3e3; }
.MAX_TURNS_EXHAUSTED { background: #fdf0d5; }
.TIMEOUT { background: #fde2c8; }
.ERROR { background: #f6d0e4; }
.run { border: 1px solid #ccc; padding: 0.5em 1em; margin: 0 0 1em 0; }
.bar { display: flex; width: 40em; height: 1em; border: 1px solid #999; }
.bar span { display: block; height: 100%; }
.head { background: #9bb7d4; } .gen { background: #7fc97f; }
.tools { background: #fdc086; } .tail { background: #beaed4; }
pre { white-space: pre-wrap; margin: 0; max-height: 12em; overflow: auto; }
";

/// The column a result falls in: its variant in an experiment, else its harness.
fn column(r: &TaskResult) -> &str {
    r.variant.as_deref().unwrap_or(&r.harness)
}

/// `n` and the noun, plural when `n` is not 1 ("1 run", "2 runs", "2 harnesses").
fn plural(n: usize, noun: &str) -> String {
    match (n, noun.ends_with('s')) {
        (1, _) => format!("1 {noun}"),
        (_, true) => format!("{n} {noun}es"),
        (_, false) => format!("{n} {noun}s"),
    }
}

/// `text` as one path segment of a link: bytes other than unreserved ones percent-encoded.
fn url_segment(text: &str) -> String {
    text.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

fn seconds(ms: u64) -> String {
    format!("{:.1} s", ms as f64 / 1000.0)
}

fn harness_row(harness: &str, results: &[TaskResult]) -> Markup {
    // A skipped task (`skip: true`) ran nowhere: not counted.
    let runs: Vec<&TaskResult> = results
        .iter()
        .filter(|r| column(r) == harness && r.status != TaskStatus::Skipped)
        .collect();
    let passed = runs
        .iter()
        .filter(|r| r.status == TaskStatus::Success)
        .count();
    let scores: Vec<f64> = runs.iter().filter_map(|r| r.weighted_score).collect();
    let mut durations: Vec<u64> = runs
        .iter()
        .filter_map(|r| r.turn.as_ref().map(|t| t.timing.turn_duration_ms))
        .collect();
    durations.sort_unstable();
    let totals: Vec<RunTotals> = runs.iter().map(|r| run_totals(r)).collect();
    let (mut input, mut output, mut read, mut write) = (0, 0, 0, 0);
    for u in totals.iter().filter_map(|t| t.usage) {
        input += u.input_tokens;
        output += u.output_tokens;
        read += u.cache_read_tokens;
        write += u.cache_writes_or_zero();
    }
    let costs: Vec<f64> = totals.iter().filter_map(|t| t.cost_usd).collect();
    let usage_reported = totals.iter().filter(|t| t.usage.is_some()).count();
    let usage_partial = totals
        .iter()
        .filter(|t| t.usage_status == TotalsStatus::Partial)
        .count();
    let cost_partial = totals
        .iter()
        .filter(|t| t.cost_status == TotalsStatus::Partial)
        .count();
    html! {
        tr {
            td { (harness) }
            td { (passed) " / " (runs.len()) }
            td {
                @if scores.is_empty() { "-" }
                @else {
                    (format!("{:.2}", scores.iter().sum::<f64>() / scores.len() as f64))
                    @if scores.len() < runs.len() {
                        span.muted { " (" (scores.len()) " of " (runs.len()) " graded)" }
                    }
                }
            }
            td {
                @match durations.get((durations.len().max(1) - 1) / 2) {
                    Some(ms) => (seconds(*ms)),
                    None => "-",
                }
            }
            td {
                @if usage_reported == 0 && usage_partial > 0 {
                    span.muted.partial { (cut_off(usage_partial, runs.len())) }
                } @else if usage_reported == 0 { span.muted { "not reported" } }
                @else {
                    (input) " / " (output)
                    @if let Some(note) = totals_note(usage_partial, usage_reported, runs.len(), "usage") {
                        span.muted.partial { " (" (note) ")" }
                    }
                }
            }
            td {
                @if usage_reported == 0 { span.muted { "-" } }
                @else { (read) " / " (write) }
            }
            td {
                @if costs.is_empty() && cost_partial > 0 {
                    span.muted.partial { (cut_off(cost_partial, runs.len())) }
                } @else if costs.is_empty() { span.muted { "not reported" } }
                @else {
                    (format!("{:.4}", costs.iter().sum::<f64>()))
                    @if let Some(note) = totals_note(cost_partial, costs.len(), runs.len(), "one") {
                        span.muted.partial { " (" (note) ")" }
                    }
                }
            }
        }
    }
}

/// One run's tokens and cost for the *Harnesses* table.
struct RunTotals {
    usage: Option<harness_kit::Usage>,
    usage_status: TotalsStatus,
    cost_usd: Option<f64>,
    cost_status: TotalsStatus,
}

/// A run's tokens and cost: its `cost.json` summary (every launch of the CLI: a
/// time-budget run's sessions summed, as `cost.json` and `run.json` say), else, in a
/// record written before the summary, its turn's figures.
fn run_totals(r: &TaskResult) -> RunTotals {
    if let Some(c) = &r.cost {
        return RunTotals {
            usage: c.usage,
            usage_status: c.usage_status,
            cost_usd: c.total_cost_usd,
            cost_status: c.cost_status,
        };
    }
    let turn = r.turn.as_ref();
    let usage = turn.and_then(|t| t.usage.filter(|_| t.usage_source != "none"));
    let cost_usd = turn.and_then(|t| t.cost_usd);
    let status = |known: bool| {
        if known {
            TotalsStatus::Complete
        } else {
            TotalsStatus::NotReported
        }
    };
    RunTotals {
        usage,
        usage_status: status(usage.is_some()),
        cost_usd,
        cost_status: status(cost_usd.is_some()),
    }
}

/// The note after a summed figure: how many runs' figures are partial (a lower bound:
/// the host's stop cut the CLI off before it reported all of it) and how many report
/// one at all (`what`: "usage", "one"); `None` when every run's figure is complete.
fn totals_note(partial: usize, reported: usize, runs: usize, what: &str) -> Option<String> {
    let mut notes = Vec::new();
    if partial > 0 {
        notes.push(format!("a lower bound: {partial} of {runs} partial"));
    }
    if reported < runs {
        notes.push(format!("{reported} of {runs} runs report {what}"));
    }
    (!notes.is_empty()).then(|| notes.join("; "))
}

/// The cell of a figure no run reported because the host's stop cut it off (`partial`
/// with no figure), unlike a CLI that reports none ("not reported").
fn cut_off(partial: usize, runs: usize) -> String {
    format!("unknown: cut off by the stop before the CLI reported it ({partial} of {runs} partial)")
}

/// "12 runs: 3 tasks on 1 harness, 2 variants, 2 replicates each": harnesses are the
/// distinct harnesses run, variants and replicates are named only when present.
fn header(results: &[TaskResult], tasks: usize) -> String {
    let mut harnesses: Vec<&str> = results.iter().map(|r| r.harness.as_str()).collect();
    harnesses.sort_unstable();
    harnesses.dedup();
    let mut variants: Vec<&str> = results
        .iter()
        .filter_map(|r| r.variant.as_deref())
        .collect();
    variants.sort_unstable();
    variants.dedup();
    let replicates = results
        .iter()
        .filter_map(|r| r.replicate)
        .max()
        .map(|m| m + 1);
    let mut text = format!(
        "{}: {} on {}",
        plural(results.len(), "run"),
        plural(tasks, "task"),
        plural(harnesses.len(), "harness")
    );
    if !variants.is_empty() {
        text.push_str(&format!(", {}", plural(variants.len(), "variant")));
    }
    if let Some(n) = replicates {
        text.push_str(&format!(", up to {} each", plural(n as usize, "replicate")));
    }
    text
}

/// A task's replicates on one harness or variant: how many passed of how many ran
/// (`3/5 passed`), linking to the runs (SKIPPED replicates are not counted).
fn replicates_cell(runs: &[&TaskResult]) -> Markup {
    let counted: Vec<&&TaskResult> = runs
        .iter()
        .filter(|r| r.status != TaskStatus::Skipped)
        .collect();
    let passed = counted
        .iter()
        .filter(|r| r.status == TaskStatus::Success)
        .count();
    let class = if counted.is_empty() {
        "SKIPPED"
    } else if passed == counted.len() {
        "SUCCESS"
    } else {
        "FAILURE"
    };
    // Every replicate's status, for the matrix's status filter (the colour is the
    // summary: all passed, or not).
    let mut statuses: Vec<&str> = runs.iter().map(|r| r.status.as_str()).collect();
    statuses.sort_unstable();
    statuses.dedup();
    html! {
        td class=(class) data-statuses=(serde_json::to_string(&statuses).unwrap_or_default()) {
            a href={ "#" (run_anchor(runs[0])) } {
                (passed) "/" (counted.len()) " passed"
            }
            br;
            span.muted { (plural(runs.len(), "replicate")) }
        }
    }
}

fn matrix_cell(r: &TaskResult) -> Markup {
    let status = r.status.as_str();
    html! {
        td class=(status) {
            a href={ "#" (run_anchor(r)) } { (status) }
            br;
            "score " (r.weighted_score.map_or("-".into(), |s| format!("{s:.2}")))
            br;
            span.muted {
                "turns " (r.task_num_turns().map_or("-".into(), |n| n.to_string()))
                ", tools " (r.task_tool_calls().map_or("-".into(), |n| n.to_string()))
                ", " (r.task_duration_ms().map_or("-".into(), seconds))
            }
            @if let Some(note) = r.notes() { br; i { (note) } }
        }
    }
}

/// The suite-threshold groups: a row each, its thresholds with their values.
fn thresholds(gates: &[SuiteThresholdResult]) -> Markup {
    html! {
        h2 { "Suite thresholds" }
        table {
            tr {
                th { "dataset task" } th { "harness" } th { "criterion" }
                th { "rows" } th { "thresholds" }
            }
            @for g in gates {
                tr class=(if g.passed { "SUCCESS" } else { "FAILURE" }) {
                    td { (g.task_id) } td { (g.harness) }
                    td { (g.criterion_index + 1) ". " (g.description) " (" (g.kind) ")" }
                    td {
                        (g.rows)
                        @if g.ungraded > 0 { " (+" (g.ungraded) " ungraded)" }
                    }
                    td {
                        @for t in &g.thresholds {
                            div {
                                (t.metric) " "
                                (t.value.map_or("unknown".into(), |v| format!("{v:.3}")))
                                " ≥ " (t.minimum)
                                @if !t.passed { " — missed" }
                            }
                        }
                    }
                }
            }
        }
    }
}
