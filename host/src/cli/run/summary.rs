//! After the units ran: the interrupted note, the variants' statistics, the traces sent,
//! the suite thresholds, the closing line and the exit code.

use super::{Flow, RunArgs, print_line, print_statistics};
use coder_eval::exit_codes;
use coder_eval::results::{TaskResult, TaskStatus};
use coder_eval::run::RunOptions;
use coder_eval::run::thresholds::CriteriaByTask;

/// Reports `results` and returns the exit code: an interrupted run's 128+N; a shard's
/// (`shard`) by its units; else 0 when every task passed and every suite threshold was
/// met, 1 otherwise.
pub(super) fn finish(
    args: &RunArgs,
    results: &[TaskResult],
    options: &RunOptions,
    criteria: &CriteriaByTask,
    shard: bool,
) -> Flow<i32> {
    let out_dir = &options.out_dir;
    if let Some(signal) = coder_eval::interrupt::raised() {
        eprintln!(
            "interrupted ({}): every task's result and run.json are written; results in {}",
            coder_eval::interrupt::name(signal),
            out_dir.display()
        );
        return Ok(coder_eval::interrupt::exit_code(signal));
    }
    let failed = results
        .iter()
        .filter(|r| !matches!(r.status, TaskStatus::Success | TaskStatus::Skipped))
        .count();
    let skipped = results
        .iter()
        .filter(|r| r.status == TaskStatus::Skipped)
        .count();
    print_statistics(out_dir);
    if let Some(url) = &args.otlp_endpoint
        && super::super::export::otlp(out_dir, url, options.components.dir.clone())?
            != exit_codes::OK
    {
        eprintln!("warning: not every trace reached {url} (the run's results are unchanged)");
    }
    let gates = coder_eval::run::thresholds::suite_verdicts(results, criteria);
    for g in &gates {
        print_line(&coder_eval::run::thresholds::summary_line(g));
    }
    let gates_failed = gates.iter().filter(|g| !g.passed).count();
    let gate_note = match gates_failed {
        0 if gates.is_empty() => String::new(),
        0 => format!("; suite thresholds met ({})", gates.len()),
        n => format!("; {n} of {} suite threshold group(s) missed", gates.len()),
    };
    eprintln!(
        "{} passed, {} failed{}{gate_note}; results in {}",
        results.len() - failed - skipped,
        failed,
        if skipped > 0 {
            format!(", {skipped} skipped")
        } else {
            String::new()
        },
        out_dir.display()
    );
    if shard {
        return Ok(super::shard::exit_code(results));
    }
    Ok(if failed == 0 && gates_failed == 0 {
        exit_codes::OK
    } else {
        exit_codes::FAILED
    })
}
