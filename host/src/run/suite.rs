//! A suite: the prepared task × harness pairs run `jobs` at a time, then `run.json`,
//! `junit.xml` and `report.html` beside them.

use super::{Prepared, RunOptions, junit, report, thresholds};
use crate::results::{
    RunRow, RunSummary, SuiteThresholdResult, TASK_RESULT_VERSION, TaskResult,
    write_json_atomically,
};
use std::path::Path;
use std::sync::Arc;
use tokio::sync::watch;

/// Records a `skip: true` task as the unit `unit` (SKIPPED) and writes its `task.json`
/// (`<out>/<unit folder>/task.json`); nothing is started. Pass the results to
/// [`run_all`] so `run.json` and the reports list them.
pub fn record_skipped(
    task: &crate::task::Task,
    unit: &crate::results::UnitId,
    out_dir: &std::path::Path,
) -> TaskResult {
    let mut result = super::assemble::skipped(task, &unit.harness);
    result.variant = unit.variant.clone();
    result.replicate = unit.replicate;
    let dir = out_dir.join(unit.rel_dir());
    super::write_result::write_task_json(&dir, &mut result);
    result
}

/// Runs the prepared pairs, `jobs` at a time; an interrupt (`cancel`: a signal, see
/// `crate::interrupt`) stops every running CLI, starts no further task, and still writes
/// what was recorded (each task's result with the stop reason `interrupted`). Writes
/// `run.json` at the start and again as each task ends (atomically), `junit.xml` and
/// `report.html` at the end.
/// `skipped` ([`record_skipped`], or units a resumed run keeps) come first in the
/// results and `run.json`. A run with variants or replicates also writes its
/// `statistics` (`crate::suite::statistics`).
pub async fn run_all(
    prepared: Vec<Prepared>,
    skipped: Vec<TaskResult>,
    options: &RunOptions,
    jobs: usize,
    cancel: watch::Receiver<bool>,
    mut on_done: impl FnMut(&TaskResult),
) -> std::io::Result<Vec<TaskResult>> {
    std::fs::create_dir_all(&options.out_dir)?;
    if let Some(progress) = &options.progress {
        progress.begin(prepared.len() + skipped.len());
    }
    for r in &skipped {
        on_done(r);
        if let Some(progress) = &options.progress {
            progress.finished(r, false);
        }
    }
    let criteria: thresholds::CriteriaByTask = prepared
        .iter()
        .map(|p| (p.task.task_id.clone(), p.task.success_criteria.clone()))
        .collect();
    let expected = crate::suite::expected(
        prepared
            .iter()
            .map(|p| p.unit.clone())
            .chain(skipped.iter().map(crate::suite::unit_of))
            .collect::<Vec<_>>()
            .iter(),
    );
    let semaphore = Arc::new(tokio::sync::Semaphore::new(jobs.max(1)));
    let mut set = tokio::task::JoinSet::new();
    // Tasks start in the order given: each takes its permit only after the one before it
    // took its own (a chain of one-shot turns), whichever thread runs it first.
    let (first_tx, mut turn_rx) = tokio::sync::oneshot::channel::<()>();
    let _ = first_tx.send(());
    for (index, p) in prepared.into_iter().enumerate() {
        let options = options.clone();
        let cancel = cancel.clone();
        let semaphore = semaphore.clone();
        let (next_tx, next_rx) = tokio::sync::oneshot::channel::<()>();
        let my_turn = std::mem::replace(&mut turn_rx, next_rx);
        set.spawn(async move {
            let _ = my_turn.await;
            let _permit = semaphore.acquire_owned().await;
            let _ = next_tx.send(());
            // The interrupt came before this task's turn: it records as interrupted
            // without starting, and is counted `not run`.
            let before = *cancel.borrow() || crate::interrupt::raised().is_some();
            if let Some(progress) = &options.progress
                && !before
            {
                progress.started();
            }
            let result = super::retry::run_with_retries(p, &options, cancel).await;
            // Counted as ended before its permit goes: the next task's start never
            // counts one running task too many.
            if let Some(progress) = &options.progress {
                if before {
                    progress.not_run(&result);
                } else {
                    progress.finished(&result, true);
                }
            }
            (index, result)
        });
    }
    let total = set.len();
    let mut done: Vec<(usize, TaskResult)> = Vec::new();
    // run.json lists the finished rows from the start, and again after every task: a host
    // killed mid-run leaves an up-to-date run.json (its `unfinished` says how many are
    // missing). These writes are best effort: one that fails (a full disk) is said once
    // and the running tasks go on to their own results; the final write below decides.
    let mut said = false;
    let mut keep_current = |done: &[(usize, TaskResult)], unfinished: usize| {
        let written = write_json_atomically(
            &options.out_dir.join("run.json"),
            &summary(&skipped, done, unfinished, &options.experiment),
        );
        if let Err(err) = written
            && !std::mem::replace(&mut said, true)
        {
            eprintln!(
                "warning: {}: run.json could not be kept current ({err}); the tasks go on",
                options.out_dir.display()
            );
        }
    };
    keep_current(&done, total);
    while let Some(joined) = set.join_next().await {
        let (index, result) = joined.map_err(std::io::Error::other)?;
        on_done(&result);
        done.push((index, result));
        done.sort_by_key(|(i, _)| *i);
        keep_current(&done, total - done.len());
    }
    if let Some(progress) = &options.progress {
        progress.finish();
    }
    let results: Vec<TaskResult> = skipped
        .into_iter()
        .chain(done.into_iter().map(|(_, r)| r))
        .collect();
    write_run(
        &options.out_dir,
        &results,
        &expected,
        &criteria,
        &options.experiment,
        0,
        false,
    )?;
    Ok(results)
}

/// Writes a finished run's `run.json` (its rows, the suite thresholds judged over
/// `criteria`, and for a suite with variants or replicates the statistics over the
/// `expected` units), `junit.xml` and `report.html` into `dir`; `unfinished` = units
/// without a result. What `run_all` writes at its end, and `coder-eval merge` for the
/// results of a plan's shards. `suite`: the units have variants or replicates (so the
/// statistics are written even when no unit has a result: all count as missing).
pub fn write_run(
    dir: &Path,
    results: &[TaskResult],
    expected: &crate::suite::Expected,
    criteria: &thresholds::CriteriaByTask,
    experiment: &Option<crate::results::ExperimentRecord>,
    unfinished: usize,
    suite: bool,
) -> std::io::Result<RunSummary> {
    let mut summary = summary_of(results.iter().collect(), unfinished, experiment);
    summary.suite_thresholds = thresholds::suite_verdicts(results, criteria);
    if suite || crate::suite::is_suite(results) {
        summary.statistics = crate::suite::statistics(results, expected);
    }
    write_json_atomically(&dir.join("run.json"), &summary)?;
    write_suite_reports(dir, results, &summary.suite_thresholds)?;
    Ok(summary)
}

/// `run.json` of the finished results (`skipped`, then `done` in task order), with
/// `unfinished` pairs still to come; the suite thresholds are judged once the run ends.
fn summary(
    skipped: &[TaskResult],
    done: &[(usize, TaskResult)],
    unfinished: usize,
    experiment: &Option<crate::results::ExperimentRecord>,
) -> RunSummary {
    summary_of(
        skipped.iter().chain(done.iter().map(|(_, r)| r)).collect(),
        unfinished,
        experiment,
    )
}

fn summary_of(
    results: Vec<&TaskResult>,
    unfinished: usize,
    experiment: &Option<crate::results::ExperimentRecord>,
) -> RunSummary {
    RunSummary {
        result_version: TASK_RESULT_VERSION,
        rows: results
            .iter()
            .map(|r| RunRow {
                task_id: r.task_id.clone(),
                harness: r.harness.clone(),
                status: r.status,
                weighted_score: r.weighted_score,
                // The whole task: every session of a time-budget run.
                num_turns: r.task_num_turns(),
                tool_calls: r.task_tool_calls(),
                duration_ms: r.task_duration_ms(),
                capped: r.cap_note(),
                early_stop: r.early_stop_note(),
                budget: r.budget_note(),
                soft_budgets: r.soft_budget_note(),
                result: format!("{}/task.json", crate::suite::unit_of(r).rel_dir().display()),
                variant: r.variant.clone(),
                replicate: r.replicate,
                cost: r.cost.clone(),
            })
            .collect(),
        suite_thresholds: Vec::new(),
        unfinished,
        experiment: experiment.clone(),
        statistics: Vec::new(),
    }
}

/// Writes a suite's `junit.xml` and `report.html` into `dir` (beside its `run.json`),
/// with its suite-threshold groups.
pub fn write_suite_reports(
    dir: &Path,
    results: &[TaskResult],
    gates: &[SuiteThresholdResult],
) -> std::io::Result<()> {
    junit::write(&dir.join("junit.xml"), results, gates)?;
    let statistics = if crate::suite::is_suite(results) {
        crate::suite::statistics(results, &crate::suite::Expected::new())
    } else {
        Vec::new()
    };
    report::write(&dir.join("report.html"), results, gates, &statistics)
}
