//! `junit.xml`: a suite's results as JUnit XML, for CI test reporters (GitHub Actions,
//! GitLab, Jenkins), written next to `run.json` by every `coder-eval run`.
//!
//! Shape: one `<testsuite>` per harness (in the order harnesses first appear), one
//! `<testcase name="<task_id>" classname="coder-eval.<harness>">` per task on it (a
//! replicate: `name="<task_id> [r02]"`; a variant: `classname="coder-eval.<variant>.<harness>"`), `time` =
//! the turn's duration in seconds. Status mapping:
//!
//! | status                            | JUnit                                      |
//! |-----------------------------------|--------------------------------------------|
//! | SUCCESS                           | passed                                     |
//! | FAILURE, MAX_TURNS_EXHAUSTED      | `<failure type="<status>">` + failed criteria |
//! | TIMEOUT, ERROR                    | `<error type="<status>">` + the reason     |
//! | a unit without a result (`merge`) | `<error type="MISSING">` + why             |
//!
//! Each test case's `system-out` holds the score, turns, tool calls, the cap that stopped
//! the turn if one did, and the path of its `task.json` (relative to the suite folder).

use crate::results::{CriterionResult, SuiteThresholdResult, TaskResult, TaskStatus};
use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};
use std::path::Path;
use std::time::Duration;

/// The JUnit report of these results (see the module docs for the mapping).
/// A suite `suite_thresholds` with a case per group comes last when any criterion sets
/// thresholds (a missed threshold is a failure naming it).
pub fn report(results: &[TaskResult], gates: &[SuiteThresholdResult]) -> Report {
    report_with_missing(results, gates, &[], "")
}

/// [`report`], with a case per unit of `missing` (units the suite planned that have no
/// result: `<error type="MISSING">` whose message is `why`) in its harness's suite.
pub(crate) fn report_with_missing(
    results: &[TaskResult],
    gates: &[SuiteThresholdResult],
    missing: &[crate::results::UnitId],
    why: &str,
) -> Report {
    let mut report = Report::new("coder-eval");
    let mut harnesses: Vec<&str> = Vec::new();
    for h in results
        .iter()
        .map(|r| r.harness.as_str())
        .chain(missing.iter().map(|u| u.harness.as_str()))
    {
        if !harnesses.contains(&h) {
            harnesses.push(h);
        }
    }
    let mut total = Duration::ZERO;
    for harness in harnesses {
        let mut suite = TestSuite::new(harness);
        let mut suite_time = Duration::ZERO;
        for r in results.iter().filter(|r| r.harness == harness) {
            let case = test_case(r);
            suite_time += case.time.unwrap_or_default();
            suite.add_test_case(case);
        }
        for unit in missing.iter().filter(|u| u.harness == harness) {
            let mut status = TestCaseStatus::non_success(NonSuccessKind::Error);
            status.set_type("MISSING");
            status.set_message(format!("MISSING: {why}"));
            let name = match unit.replicate {
                Some(i) => format!(
                    "{} [{}]",
                    unit.task_id,
                    crate::suite::replicate_dir_of(i, unit.replicates)
                ),
                None => unit.task_id.clone(),
            };
            let mut case = TestCase::new(name, status);
            case.set_classname(match &unit.variant {
                Some(v) => format!("coder-eval.{v}.{}", unit.harness),
                None => format!("coder-eval.{}", unit.harness),
            });
            suite.add_test_case(case);
        }
        suite.set_time(suite_time);
        total += suite_time;
        report.add_test_suite(suite);
    }
    if !gates.is_empty() {
        report.add_test_suite(threshold_suite(gates));
    }
    report.set_time(total);
    report
}

/// The `suite_thresholds` suite: a case per group.
fn threshold_suite(gates: &[SuiteThresholdResult]) -> TestSuite {
    let mut suite = TestSuite::new("suite_thresholds");
    for g in gates {
        let name = format!(
            "{} / criterion {} ({})",
            g.task_id,
            g.criterion_index + 1,
            g.description
        );
        let status = if g.passed {
            TestCaseStatus::success()
        } else {
            let missed: Vec<String> = g
                .thresholds
                .iter()
                .filter(|t| !t.passed)
                .map(|t| {
                    format!(
                        "{} = {} < {}",
                        t.metric,
                        t.value.map_or("unknown".into(), |v| format!("{v:.3}")),
                        t.minimum
                    )
                })
                .collect();
            let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
            s.set_type("SUITE_THRESHOLD");
            s.set_message(format!("missed: {}", missed.join(", ")));
            s
        };
        let mut case = TestCase::new(name, status);
        case.set_classname(g.harness.clone());
        suite.add_test_case(case);
    }
    suite
}

fn test_case(r: &TaskResult) -> TestCase {
    let status_name = r.status.as_str();
    let status = match r.status {
        TaskStatus::Success => TestCaseStatus::success(),
        TaskStatus::Failure
        | TaskStatus::MaxTurnsExhausted
        | TaskStatus::TokenBudgetExceeded
        | TaskStatus::CostBudgetExceeded => {
            let failed: Vec<&CriterionResult> = r
                .criteria
                .iter()
                .filter(|c| !c.passed && c.weight > 0.0)
                .collect();
            let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
            s.set_type(status_name);
            s.set_message(match failed.as_slice() {
                [] => format!("{status_name}: no criterion passed"),
                [one] => format!("{status_name}: {} failed", one.description),
                many => format!("{status_name}: {} criteria failed", many.len()),
            });
            s.set_description(
                failed
                    .iter()
                    .map(|c| criterion_line(c))
                    .collect::<Vec<_>>()
                    .join("\n"),
            );
            s
        }
        TaskStatus::Skipped => {
            let mut s = TestCaseStatus::skipped();
            s.set_message("skip: true in the task file");
            s
        }
        TaskStatus::Timeout | TaskStatus::Error => {
            let mut s = TestCaseStatus::non_success(NonSuccessKind::Error);
            s.set_type(status_name);
            let reason = r.error.clone().unwrap_or_else(|| match &r.stop {
                Some(stop) => format!("stopped by the host: {}", stop.reason.as_str()),
                None => status_name.to_string(),
            });
            s.set_message(format!("{status_name}: {reason}"));
            s
        }
    };
    let mut case = TestCase::new(case_name(r), status);
    case.set_classname(class_name(r));
    // The whole task: every session of a time-budget run.
    if let Some(ms) = r.task_duration_ms() {
        case.set_time(Duration::from_millis(ms));
    }
    case.set_system_out(format!(
        "status {status_name}, score {}, turns {}, tool calls {}{}\nresult: {}\n",
        r.weighted_score.map_or("-".into(), |s| format!("{s:.2}")),
        r.task_num_turns().map_or("-".into(), |n| n.to_string()),
        r.task_tool_calls().map_or("-".into(), |n| n.to_string()),
        r.notes().map_or(String::new(), |note| format!("; {note}")),
        // The unit's own folder (variant and replicate included), as run.json's rows.
        crate::suite::unit_of(r)
            .rel_dir()
            .join("task.json")
            .display(),
    ));
    case
}

/// One failed criterion, for a failure's description.
fn criterion_line(c: &CriterionResult) -> String {
    let why = match &c.error {
        Some(e) => format!("could not judge: {}", e.message),
        None => c.details.lines().next().unwrap_or("").to_string(),
    };
    format!(
        "{} ({}): score {:.2} < {:.2}: {why}",
        c.description, c.kind, c.score, c.pass_threshold
    )
}

/// Writes [`report`] to `path` atomically (temporary file, then rename).
pub fn write(
    path: &Path,
    results: &[TaskResult],
    gates: &[SuiteThresholdResult],
) -> std::io::Result<()> {
    write_with_missing(path, results, gates, &[], "")
}

/// Writes [`report_with_missing`] to `path` atomically.
pub fn write_with_missing(
    path: &Path,
    results: &[TaskResult],
    gates: &[SuiteThresholdResult],
    missing: &[crate::results::UnitId],
    why: &str,
) -> std::io::Result<()> {
    let text = report_with_missing(results, gates, missing, why)
        .to_string()
        .map_err(std::io::Error::other)?;
    crate::results::write_atomically(path, text.as_bytes())
}

/// A case's name: the task id, with its replicate (`flaky [r02]`) when it has one.
fn case_name(r: &TaskResult) -> String {
    match r.replicate {
        Some(i) => format!(
            "{} [{}]",
            r.task_id,
            crate::suite::replicate_dir_of(i, r.replicates)
        ),
        None => r.task_id.clone(),
    }
}

/// A case's class: `coder-eval.<harness>`, or `coder-eval.<variant>.<harness>` in an
/// experiment, so no two units share name and class.
fn class_name(r: &TaskResult) -> String {
    match &r.variant {
        Some(v) => format!("coder-eval.{v}.{}", r.harness),
        None => format!("coder-eval.{}", r.harness),
    }
}
