//! A suite: the prepared task × harness pairs run `jobs` at a time, then `run.json`,
//! `junit.xml` and `report.html` beside them.

use super::{Prepared, RunOptions, junit, report, run_one};
use crate::results::{RunRow, RunSummary, TASK_RESULT_VERSION, TaskResult, write_json_atomically};
use std::path::Path;
use std::sync::Arc;
use tokio::sync::watch;

/// Runs the prepared pairs, `jobs` at a time; Ctrl-C (`cancel`) stops every running CLI
/// and still writes what was recorded. Writes `run.json`, `junit.xml` and `report.html`
/// at the end.
pub async fn run_all(
    prepared: Vec<Prepared>,
    options: &RunOptions,
    jobs: usize,
    cancel: watch::Receiver<bool>,
    mut on_done: impl FnMut(&TaskResult),
) -> std::io::Result<Vec<TaskResult>> {
    std::fs::create_dir_all(&options.out_dir)?;
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
    let results: Vec<TaskResult> = results.into_iter().map(|(_, r)| r).collect();
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
            })
            .collect(),
    };
    write_json_atomically(&options.out_dir.join("run.json"), &summary)?;
    write_suite_reports(&options.out_dir, &results)?;
    Ok(results)
}

/// Writes a suite's `junit.xml` and `report.html` into `dir` (beside its `run.json`).
pub fn write_suite_reports(dir: &Path, results: &[TaskResult]) -> std::io::Result<()> {
    junit::write(&dir.join("junit.xml"), results)?;
    report::write(&dir.join("report.html"), results)
}
