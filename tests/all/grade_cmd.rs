//! `coder-eval grade`: re-grading a kept run gives the live run's verdicts, and changing
//! one criterion's threshold changes only that verdict.

use crate::live_claude::{result_dir, run_task};
use crate::support::{bin, root, scratch};
use coder_eval::results::{CriterionResult, TaskResult, TaskStatus};
use std::process::Command;

fn grade(dir: &std::path::Path, task: Option<&std::path::Path>) -> TaskResult {
    let mut cmd = Command::new(bin());
    cmd.arg("grade").arg(dir).arg("--json");
    if let Some(task) = task {
        cmd.arg("--task").arg(task);
    }
    let out = cmd.output().unwrap();
    assert!(
        !out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// A verdict without its timing.
fn verdict(c: &CriterionResult) -> (String, f64, bool, String) {
    (c.description.clone(), c.score, c.passed, c.details.clone())
}

#[test]
fn regrade_matches_live_and_thresholds_are_local() {
    let out = scratch("grade-cmd");
    let live = run_task("tasks/hello_date/task.yaml", "claude-code", &out, &[]);
    assert_eq!(live.status, TaskStatus::Success);
    let dir = result_dir(&out, "hello_date", "claude-code");
    // The suite's junit.xml: one suite per harness, the task a passing test case.
    let case = junit_case(&out);
    assert!(
        matches!(case.status, quick_junit::TestCaseStatus::Success { .. }),
        "{:?}",
        case.status
    );
    assert_eq!(
        case.classname.as_ref().map(|c| c.as_str()),
        Some("coder-eval.claude-code")
    );
    assert!(case.time.is_some_and(|t| !t.is_zero()));
    let html = report_html(&out);
    assert!(
        html.contains(
            r##"<td class="SUCCESS"><a href="#run-hello_5fdate-claude_2dcode">SUCCESS</a>"##
        ),
        "{html}"
    );

    let again = grade(&dir, None);
    assert_eq!(
        again.criteria.iter().map(verdict).collect::<Vec<_>>(),
        live.criteria.iter().map(verdict).collect::<Vec<_>>()
    );
    assert_eq!(again.status, live.status);

    // The same task with one more criterion that scores 2/3: failing at the default
    // threshold (0.9), passing at 0.5. Nothing else changes.
    let task_dir = scratch("grade-cmd-task");
    std::fs::copy(
        root().join("tasks/hello_date/script.yaml"),
        task_dir.join("script.yaml"),
    )
    .unwrap();
    let base = std::fs::read_to_string(root().join("tasks/hello_date/task.yaml")).unwrap();
    let extra = |threshold: &str| {
        format!(
            "{base}  - type: file_contains\n    description: \"mentions a <zebra> & co\"\n    path: app.py\n    includes: [print, date, zebra]\n{threshold}"
        )
    };
    let strict = task_dir.join("strict.yaml");
    std::fs::write(&strict, extra("")).unwrap();
    let lenient = task_dir.join("lenient.yaml");
    std::fs::write(&lenient, extra("    pass_threshold: 0.5\n")).unwrap();

    let strict = grade(&dir, Some(&strict));
    let lenient = grade(&dir, Some(&lenient));
    let zebra = |r: &TaskResult| r.criteria.last().cloned().unwrap();
    assert!((zebra(&strict).score - 2.0 / 3.0).abs() < 1e-9);
    assert!(!zebra(&strict).passed);
    assert!(zebra(&lenient).passed);
    assert_eq!(zebra(&strict).score, zebra(&lenient).score);
    assert_eq!(strict.status, TaskStatus::Failure);
    assert_eq!(lenient.status, TaskStatus::Success);
    let first_three = |r: &TaskResult| r.criteria[..3].iter().map(verdict).collect::<Vec<_>>();
    assert_eq!(first_three(&strict), first_three(&live));
    assert_eq!(first_three(&lenient), first_three(&live));

    // --write keeps task.json and the suite's run.json in step, and records which task
    // file graded it (absolute, so it is found from anywhere).
    let strict_file = task_dir.join("strict.yaml");
    let out_write = Command::new(bin())
        .arg("grade")
        .arg(&dir)
        .arg("--task")
        .arg(&strict_file)
        .arg("--write")
        .output()
        .unwrap();
    assert_eq!(
        out_write.status.code(),
        Some(1),
        "a failing verdict exits 1"
    );
    let written: TaskResult =
        serde_json::from_str(&std::fs::read_to_string(dir.join("task.json")).unwrap()).unwrap();
    assert_eq!(written.status, TaskStatus::Failure);
    assert_eq!(written.task_file, strict_file.display().to_string());
    let summary: coder_eval::results::RunSummary =
        serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).unwrap()).unwrap();
    assert_eq!(summary.rows[0].status, TaskStatus::Failure);
    assert!(std::path::Path::new(&live.task_file).is_absolute());
    // ... and junit.xml: now a failure naming the criterion that failed.
    let case = junit_case(&out);
    let quick_junit::TestCaseStatus::NonSuccess {
        kind,
        message,
        ty,
        description,
        ..
    } = &case.status
    else {
        panic!("expected a failure: {:?}", case.status)
    };
    assert_eq!(*kind, quick_junit::NonSuccessKind::Failure);
    assert_eq!(ty.as_ref().map(|t| t.as_str()), Some("FAILURE"));
    let message = message.as_ref().map(|m| m.as_str()).unwrap_or("");
    // (Markup in a description is kept as text, in the XML and in the HTML.)
    assert_eq!(message, "FAILURE: mentions a <zebra> & co failed");
    let description = description.as_ref().map(|d| d.as_str()).unwrap_or("");
    assert!(
        description.starts_with("mentions a <zebra> & co (file_contains): score 0.67 < 0.90"),
        "{description}"
    );
    // Another task's file is refused, before anything is written.
    let other = Command::new(bin())
        .arg("grade")
        .arg(&dir)
        .arg("--task")
        .arg(root().join("tasks/scenarios/hello/task.yaml"))
        .arg("--write")
        .output()
        .unwrap();
    assert_eq!(other.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&other.stderr);
    assert!(
        stderr.contains("this task file is for task `hello`, but the run in"),
        "{stderr}"
    );
    // ... and report.html: the same failure, the task's text escaped.
    let html = report_html(&out);
    assert!(
        html.contains(
            r##"<td class="FAILURE"><a href="#run-hello_5fdate-claude_2dcode">FAILURE</a>"##
        ),
        "{html}"
    );
    assert!(
        html.contains("<td>mentions a &lt;zebra&gt; &amp; co</td>"),
        "{html}"
    );
}

/// The suite's report.html, checked to name the run and to escape what the task says.
fn report_html(out: &std::path::Path) -> String {
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"), "{html}");
    assert!(html.contains(r#"href="hello_date/claude-code/task.json""#));
    assert!(!html.contains("<zebra>"), "unescaped task text in:\n{html}");
    html
}

/// The one test case of the suite's junit.xml in `out`, checked to be `hello_date` in a
/// `claude-code` suite.
fn junit_case(out: &std::path::Path) -> quick_junit::TestCase {
    let xml = std::fs::read_to_string(out.join("junit.xml")).unwrap();
    let report = quick_junit::Report::deserialize_from_str(&xml).unwrap();
    assert_eq!(report.test_suites.len(), 1, "{xml}");
    let suite = &report.test_suites[0];
    assert_eq!(suite.name.as_str(), "claude-code");
    assert_eq!(suite.test_cases.len(), 1, "{xml}");
    let case = suite.test_cases[0].clone();
    assert_eq!(case.name.as_str(), "hello_date");
    case
}

#[test]
fn the_same_task_twice_on_one_harness_is_rejected_before_running() {
    use coder_eval::run::{PrepareError, RunOptions, prepare};
    let task = coder_eval::task::Task::load(&root().join("tasks/hello_date/task.yaml")).unwrap();
    let options = RunOptions::new(scratch("dup").join("out"));
    let err = prepare(vec![task.clone(), task], &["pi".to_string()], &options)
        .err()
        .unwrap();
    assert!(matches!(err, PrepareError::Duplicate { .. }), "{err}");
}
