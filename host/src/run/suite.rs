//! A suite: the prepared task × harness pairs run `jobs` at a time, then `run.json`,
//! `junit.xml` and `report.html` beside them.

use super::{Prepared, RunOptions, junit, report, run_one, thresholds};
use crate::results::{
    RunRow, RunSummary, SuiteThresholdResult, TASK_RESULT_VERSION, TaskResult, TaskStatus,
    write_json_atomically,
};
use std::path::Path;
use std::sync::Arc;
use tokio::sync::watch;

/// Records a `skip: true` task on `harness` as SKIPPED and writes its `task.json`
/// (`<out>/<task_id>/<harness>/task.json`); nothing is started. Pass the results to
/// [`run_all`] so `run.json` and the reports list them.
pub fn record_skipped(
    task: &crate::task::Task,
    harness: &str,
    out_dir: &std::path::Path,
) -> TaskResult {
    let mut result = super::assemble::skipped(task, harness);
    let dir = out_dir.join(&task.task_id).join(harness);
    if let Err(err) = std::fs::create_dir_all(&dir)
        .and_then(|()| write_json_atomically(&dir.join("task.json"), &result))
    {
        result.status = TaskStatus::Error;
        result.error = Some(format!("could not write task.json: {err}"));
    }
    result
}

/// Runs the prepared pairs, `jobs` at a time; Ctrl-C (`cancel`) stops every running CLI
/// and still writes what was recorded. Writes `run.json`, `junit.xml` and `report.html`
/// at the end.
/// `skipped` ([`record_skipped`]) come first in the results and `run.json`.
pub async fn run_all(
    prepared: Vec<Prepared>,
    skipped: Vec<TaskResult>,
    options: &RunOptions,
    jobs: usize,
    cancel: watch::Receiver<bool>,
    mut on_done: impl FnMut(&TaskResult),
) -> std::io::Result<Vec<TaskResult>> {
    std::fs::create_dir_all(&options.out_dir)?;
    for r in &skipped {
        on_done(r);
    }
    let criteria: thresholds::CriteriaByTask = prepared
        .iter()
        .map(|p| (p.task.task_id.clone(), p.task.success_criteria.clone()))
        .collect();
    let semaphore = Arc::new(tokio::sync::Semaphore::new(jobs.max(1)));
    let mut set = tokio::task::JoinSet::new();
    for (index, p) in prepared.into_iter().enumerate() {
        let options = options.clone();
        let cancel = cancel.clone();
        let semaphore = semaphore.clone();
        set.spawn(async move {
            let _permit = semaphore.acquire_owned().await;
            (index, run_one(p, &options, cancel).await)
        });
    }
    let mut results = Vec::new();
    while let Some(joined) = set.join_next().await {
        let (index, result) = joined.map_err(std::io::Error::other)?;
        on_done(&result);
        results.push((index, result));
    }
    results.sort_by_key(|(i, _)| *i);
    let results: Vec<TaskResult> = skipped
        .into_iter()
        .chain(results.into_iter().map(|(_, r)| r))
        .collect();
    let summary = RunSummary {
        result_version: TASK_RESULT_VERSION,
        rows: results
            .iter()
            .map(|r| RunRow {
                task_id: r.task_id.clone(),
                harness: r.harness.clone(),
                status: r.status,
                weighted_score: r.weighted_score,
                num_turns: r.turn.as_ref().map(|t| t.num_turns),
                tool_calls: r.turn.as_ref().map(|t| t.tool_calls.len()),
                duration_ms: r.turn.as_ref().map(|t| t.timing.turn_duration_ms),
                capped: r.cap_note(),
                early_stop: r.early_stop_note(),
                budget: r.budget_note(),
                soft_budgets: r.soft_budget_note(),
                result: format!("{}/{}/task.json", r.task_id, r.harness),
                cost: r.cost.clone(),
            })
            .collect(),
        suite_thresholds: thresholds::suite_verdicts(&results, &criteria),
    };
    write_json_atomically(&options.out_dir.join("run.json"), &summary)?;
    write_suite_reports(&options.out_dir, &results, &summary.suite_thresholds)?;
    Ok(results)
}

/// Writes a suite's `junit.xml` and `report.html` into `dir` (beside its `run.json`),
/// with its suite-threshold groups.
pub fn write_suite_reports(
    dir: &Path,
    results: &[TaskResult],
    gates: &[SuiteThresholdResult],
) -> std::io::Result<()> {
    junit::write(&dir.join("junit.xml"), results, gates)?;
    report::write(&dir.join("report.html"), results, gates)
}
