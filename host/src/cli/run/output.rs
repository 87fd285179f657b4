//! What `coder-eval run` prints: a row per task, the variants' statistics, each line
//! escaped for a terminal and written so a closed pipe never stops the run.

use coder_eval::results::TaskResult;

/// One line per variant from `run.json`'s `statistics` (runs with variants or repeats).
pub(super) fn print_statistics(out_dir: &std::path::Path) {
    let Some(summary) = std::fs::read_to_string(out_dir.join("run.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<coder_eval::results::RunSummary>(&t).ok())
    else {
        return;
    };
    for v in &summary.statistics {
        print_line(&format!(
            "{:<20} pass rate {} over {} graded task(s); {} flaky; replicates: {} graded, {} errored, {} skipped, {} missing",
            v.variant,
            coder_eval::suite::report::estimate(v.pass_rate.as_ref()),
            v.tasks_graded,
            v.tasks_flaky,
            v.graded,
            v.errored,
            v.skipped,
            v.missing
        ));
    }
}

/// The terminal summary line of one task.
pub(super) fn row(r: &TaskResult) -> String {
    let capped = r
        .notes()
        .map_or(String::new(), |note| format!("  [{note}]"));
    let leftovers = match r.cli.leftover_processes.unwrap_or(0) {
        0 => String::new(),
        1 => "  [1 process the agent left running was stopped]".to_string(),
        n => format!("  [{n} processes the agent left running were stopped]"),
    };
    let retried = r.attempts.filter(|n| *n > 1).map_or(String::new(), |n| {
        format!(
            "  [attempt {n}: the earlier ones ended in infrastructure errors, kept in attempts/]"
        )
    });
    let unit = match (&r.variant, r.replicate) {
        (None, None) => r.task_id.clone(),
        (Some(v), None) => format!("{} [{v}]", r.task_id),
        (None, Some(i)) => format!(
            "{} [{}]",
            r.task_id,
            coder_eval::suite::replicate_dir_of(i, r.replicates)
        ),
        (Some(v), Some(i)) => format!(
            "{} [{v} {}]",
            r.task_id,
            coder_eval::suite::replicate_dir_of(i, r.replicates)
        ),
    };
    format!(
        "{} {:<28} {:<12} {:<20} score {:<5} turns {:<3} tools {:<3} {:>7.1} s{}{capped}{leftovers}{retried}",
        r.status.icon(),
        unit,
        r.harness,
        r.status.as_str(),
        r.weighted_score.map_or("-".into(), |s| format!("{s:.2}")),
        // The whole task: every session of a time-budget run.
        r.task_num_turns().map_or("-".into(), |n| n.to_string()),
        r.task_tool_calls().map_or("-".into(), |n| n.to_string()),
        r.task_duration_ms().map_or(0.0, |ms| ms as f64 / 1000.0),
        r.error
            .as_ref()
            .map_or(String::new(), |e| format!("  ({})", printable(e))),
    )
}

/// Writes `line` and a newline to stdout, ignoring a failed write: a reader that went
/// away (`coder-eval run … | head -1`, EPIPE) must not stop the run half way; every
/// task still runs to its end and its result files are written.
pub(super) fn print_line(line: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}").and_then(|()| out.flush());
}

/// `text` for a terminal: control characters (escape sequences from a CLI's stderr, say)
/// shown escaped instead of acted on.
pub(super) fn printable(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}
