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
    result.replicates = unit.replicates;
    let dir = out_dir.join(unit.rel_dir());
    super::write_result::write_task_json(&dir, &mut result);
    result
}

/// Runs the prepared pairs, `jobs` at a time; an interrupt (`cancel`: a signal, see
/// `crate::interrupt`) stops every running CLI, starts no further task, and still writes
/// what was recorded (each task's result with the stop reason `interrupted`). Writes
/// `run.json` at the start, again as tasks end (atomically; at most once per
/// [`RunJsonPace::EVERY`], never after an interrupt) and once at the end, with
/// `junit.xml` and `report.html`.
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
            // Not running any more before its permit goes: the next task's start never
            // counts one running task too many. Counted done once its row is printed.
            if let Some(progress) = &options.progress
                && !before
            {
                progress.left();
            }
            (index, result, before)
        });
    }
    let total = set.len();
    let mut done: Vec<(usize, TaskResult)> = Vec::new();
    // run.json lists the finished rows from the start, and again as tasks end (paced: a
    // rewrite costs the whole file, so one per task would make a large suite quadratic):
    // a host killed mid-run leaves a run.json at most `RunJsonPace::EVERY` behind (its
    // `unfinished` says how many are missing; each task's task.json is there). After an
    // interrupt none: the stop writes it once, at the end. These writes are best effort:
    // one that fails (a full disk) is said once and the running tasks go on to their own
    // results; the final write below decides.
    let mut said = false;
    let mut keep_current = |done: &mut Vec<(usize, TaskResult)>| {
        done.sort_by_key(|(i, _)| *i);
        let unfinished = total - done.len();
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
    keep_current(&mut done);
    let mut pace = RunJsonPace::new(std::time::Instant::now());
    let mut not_started = 0usize;
    let stopping = |c: &watch::Receiver<bool>| *c.borrow() || crate::interrupt::raised().is_some();
    loop {
        // Rows that ended since the last rewrite are written once the pace allows, even
        // when no further task ends by then.
        let flush = pace.pending_until().filter(|_| !stopping(&cancel));
        let joined = tokio::select! {
            joined = set.join_next() => joined,
            () = sleep_until(flush) => {
                pace.written(std::time::Instant::now());
                keep_current(&mut done);
                continue;
            }
        };
        let Some(joined) = joined else { break };
        let (index, result, before) = joined.map_err(std::io::Error::other)?;
        // A unit the interrupt came before gets no row of its own: one line counts them
        // after the loop (a large suite would print hundreds of identical ERROR rows).
        if before && super::progress::stopped_by_interrupt(&result) {
            not_started += 1;
        } else {
            on_done(&result);
        }
        // The progress line after the row: `4/4 done` follows the last row.
        if let Some(progress) = &options.progress {
            if stopping(&cancel) {
                progress.stop();
            }
            if before {
                progress.not_run(&result);
            } else {
                progress.finished(&result, true);
            }
        }
        done.push((index, result));
        if pace.ended(std::time::Instant::now(), stopping(&cancel)) {
            keep_current(&mut done);
        }
    }
    done.sort_by_key(|(i, _)| *i);
    if not_started > 0 {
        let line = not_started_line(not_started);
        match &options.progress {
            Some(progress) => progress.println(&line),
            None => {
                use std::io::Write;
                let mut out = std::io::stdout().lock();
                let _ = writeln!(out, "{line}").and_then(|()| out.flush());
            }
        }
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

/// The one row printed for the `n` units an interrupt came before (in place of a row
/// each): they are ERROR in `run.json`, each with its `task.json`.
fn not_started_line(n: usize) -> String {
    format!(
        "- {n} unit(s) not started: the interrupt came before their turn (each is ERROR in \
         run.json and its task.json says nothing ran; `--resume` runs them)"
    )
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

/// `run.json` of `results`, with `unfinished` pairs still to come (no suite thresholds,
/// no statistics: the caller adds those).
pub(crate) fn summary_of(
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
                error_kind: r.error_kind.clone(),
                weighted_score: r.weighted_score,
                // The whole task: every session of a time-budget run.
                num_turns: r.task_num_turns(),
                tool_calls: r.task_tool_calls(),
                duration_ms: r.task_duration_ms(),
                capped: r.cap_note(),
                early_stop: r.early_stop_note(),
                budget: r.budget_note(),
                time_budget: r.time_budget_note(),
                soft_budgets: r.soft_budget_note(),
                result: format!("{}/task.json", crate::suite::unit_of(r).rel_dir().display()),
                variant: r.variant.clone(),
                replicate: r.replicate,
                cost: r.cost.clone(),
                gateway: r
                    .turn
                    .as_ref()
                    .and_then(|t| t.gateway.as_ref().map(|g| g.summary(&t.usage_source))),
            })
            .collect(),
        suite_thresholds: Vec::new(),
        unfinished,
        interrupted: crate::interrupt::raised().is_some()
            || results.iter().any(|r| {
                r.error_kind.as_deref() == Some("interrupted")
                    || r.stop
                        .as_ref()
                        .is_some_and(|s| s.reason == crate::results::StopReason::Interrupted)
            }),
        experiment: experiment.clone(),
        statistics: Vec::new(),
    }
}

/// Writes a suite's `junit.xml` and `report.html` into `dir` (beside its `run.json`),
/// with its suite-threshold groups.
pub(crate) fn write_suite_reports(
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

/// Sleeps until `at`; never returns when `None`.
async fn sleep_until(at: Option<std::time::Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at.into()).await,
        None => std::future::pending().await,
    }
}

/// When [`run_all`] rewrites `run.json` as tasks end: at most once per [`Self::EVERY`]
/// (a rewrite costs the whole file: one per task would make a suite of n tasks cost
/// n² rows), none once the run is stopping (an interrupt: each task not run ends at
/// once, and the stop writes `run.json` once, at its end).
#[derive(Debug)]
pub(crate) struct RunJsonPace {
    /// The last rewrite (or the run's start).
    last: std::time::Instant,
    /// Tasks ended since `last`, not yet in `run.json`.
    pending: usize,
}

impl RunJsonPace {
    /// The shortest time between two rewrites.
    pub(crate) const EVERY: std::time::Duration = std::time::Duration::from_secs(2);

    /// A pace whose last write was at `now`.
    pub(crate) fn new(now: std::time::Instant) -> RunJsonPace {
        RunJsonPace {
            last: now,
            pending: 0,
        }
    }

    /// A task ended at `now`: whether to rewrite `run.json` now (`stopping`: the run was
    /// interrupted, never). A `true` counts as the rewrite.
    pub(crate) fn ended(&mut self, now: std::time::Instant, stopping: bool) -> bool {
        self.pending += 1;
        if stopping || now.duration_since(self.last) < Self::EVERY {
            return false;
        }
        self.written(now);
        true
    }

    /// `run.json` was rewritten at `now`.
    pub(crate) fn written(&mut self, now: std::time::Instant) {
        self.last = now;
        self.pending = 0;
    }

    /// When the rows that ended since the last rewrite are due, if any ended.
    pub(crate) fn pending_until(&self) -> Option<std::time::Instant> {
        (self.pending > 0).then(|| self.last + Self::EVERY)
    }
}

#[cfg(test)]
mod tests {
    use super::RunJsonPace;
    use std::time::{Duration, Instant};

    /// Counts the rewrites the pace asks for over `n` tasks ending `gap` apart, the run
    /// stopping (interrupted) after `stop_after` of them; plus the final write.
    fn writes(n: usize, gap: Duration, stop_after: usize) -> usize {
        let start = Instant::now();
        let mut pace = RunJsonPace::new(start);
        let mut count = 1; // at the start
        for i in 0..n {
            let now = start + gap * (i as u32 + 1);
            if pace.ended(now, i >= stop_after) {
                count += 1;
            }
        }
        count + 1 // at the end
    }

    #[test]
    fn run_json_is_rewritten_at_most_once_per_interval_and_never_while_stopping() {
        // Stopped before any task ended: the start and the end, however many tasks.
        for n in [10, 1000, 100_000] {
            assert_eq!(writes(n, Duration::from_millis(1), 0), 2, "{n}");
        }
        // Tasks ending 10 ms apart: one rewrite per 2 s, not one per task.
        let n = 10_000; // 100 s
        let w = writes(n, Duration::from_millis(10), n);
        assert!((50..=52).contains(&w), "{w}");
        // Tasks longer than the interval: each one's row is written as it ends.
        assert_eq!(writes(20, Duration::from_secs(3), 20), 22);
        // Interrupted after 5 slow tasks: no rewrite for the 1000 that end at once after.
        let start = Instant::now();
        let mut pace = RunJsonPace::new(start);
        let slow = (1..=5)
            .filter(|i| pace.ended(start + Duration::from_secs(3 * i), false))
            .count();
        assert_eq!(slow, 5);
        let t = start + Duration::from_secs(100);
        assert!((0..1000).all(|_| !pace.ended(t, true)));
        // A pending row is due one interval after the last rewrite.
        assert_eq!(
            pace.pending_until(),
            Some(start + Duration::from_secs(15) + RunJsonPace::EVERY)
        );
        pace.written(t);
        assert_eq!(pace.pending_until(), None);
    }

    /// Trial 16u M6: a row says why it is an ERROR, and the run says it was interrupted.
    #[test]
    fn run_json_rows_carry_the_error_kind_and_the_run_its_interrupt() {
        let result = |status: &str, kind: Option<&str>| {
            let mut r: crate::results::TaskResult = serde_json::from_str(&format!(r#"{{"result_version":1,"task_id":"t","harness":"claude-code","status":"{status}","error":null,"description":null,"task_file":"/t.yaml","prompt":"p","requested_model":null,"cli":{{"path":null,"version":null,"argv":[],"pgid":null,"caveats":[]}},"run_limits":{{"max_turns":null,"max_tool_calls":null,"turn_timeout_ms":null,"task_timeout_ms":null,"native":[]}},"stop":null,"turn":null,"criteria":[],"weighted_score":null,"post_failure_criteria_results":[],"setup_ms":0,"grading_ms":0,"host_turn_work_us":0,"stderr_tail":"","scripted_model_requests":null,"paths":{{"recording":"r","stderr":"s","workspace":"w"}}}}"#)).unwrap();
            r.error_kind = kind.map(String::from);
            r
        };
        let ok = result("SUCCESS", None);
        let cut = result("ERROR", Some("interrupted"));
        let summary = super::summary_of(vec![&ok, &cut], 0, &None);
        assert_eq!(summary.rows[1].error_kind.as_deref(), Some("interrupted"));
        assert!(summary.interrupted);
        let json = serde_json::to_value(&summary).unwrap();
        assert_eq!(json["interrupted"], true);
        assert_eq!(json["rows"][1]["error_kind"], "interrupted");
        assert!(json["rows"][0].get("error_kind").is_none());
        // A run nothing interrupted says nothing of it.
        let summary = super::summary_of(vec![&ok], 0, &None);
        assert!(!summary.interrupted);
        let json = serde_json::to_value(&summary).unwrap();
        assert!(json.get("interrupted").is_none(), "{json}");
    }

    /// The README and the interrupt doc say how often `run.json` is rewritten, with the
    /// pace's own number, so a reader knows which finished tasks a killed host's
    /// `run.json` may miss.
    #[test]
    fn the_docs_name_the_run_json_pace() {
        let secs = RunJsonPace::EVERY.as_secs();
        let readme = include_str!("../../../README.md").replace('\n', " ");
        let readme = readme.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(readme.contains(&format!("at most once every {secs} s")));
        assert!(readme.contains(&format!("ended in the last {secs} s before the kill")));
        let interrupt: String = include_str!("../interrupt.rs")
            .lines()
            .filter_map(|line| line.strip_prefix("//!"))
            .collect::<Vec<_>>()
            .join(" ");
        let interrupt = interrupt.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(interrupt.contains(&format!("at most one per {secs} s")));
        assert!(!interrupt.contains("`run.json` are written as tasks end"));
    }
}
