//! Grading through the sandbox: the built-in criteria as components, hostile graders (a
//! loop, a memory bomb, a panic, an escape attempt, a 100 MB verdict) each contained as
//! that criterion's error while the other criteria of the same call still run, and the
//! example user criteria (Rust, Python and JavaScript, when componentize-py and
//! componentize-js are installed) on a real
//! recorded run.

use crate::support::{corpus, root, scratch, test_component};
use coder_eval::grading::{
    CriterionSpec, GradeContext, grade_all, passed, task_status, weighted_score,
};
use coder_eval::results::{CriterionResult, StampedEvent, TaskStatus, TurnRecord};
use coder_eval::turn::replay::{ReplayOptions, replay_with_trajectory};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// The Claude Code `hello` run: its turn record and its trajectory (the events the
/// reducer produced, through the pipeline `replay` uses).
fn hello_run() -> (TurnRecord, Vec<StampedEvent>) {
    let path = corpus("live/claude/hello.jsonl");
    replay_with_trajectory(&path, &ReplayOptions::new("claude-code")).unwrap()
}

/// A workspace holding what the hello run wrote, plus files for the file criteria.
fn hello_workspace(name: &str) -> PathBuf {
    let dir = scratch(name).join("workspace");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("hello.txt"), "hello from mock\n").unwrap();
    std::fs::write(dir.join("app.py"), "print('hello')\n").unwrap();
    std::fs::write(dir.join("out.json"), r#"{"greeting": "hello", "n": 3}"#).unwrap();
    std::fs::write(dir.join("bad.json"), "{ nope").unwrap();
    dir
}

fn spec(yaml: &str) -> CriterionSpec {
    serde_yaml_ng::from_str(yaml).unwrap_or_else(|e| panic!("{yaml}: {e}"))
}

fn component(path: &Path, params: Value) -> CriterionSpec {
    CriterionSpec::new(
        "component",
        json!({"component": path.to_str().unwrap(), "params": params}),
    )
    .unwrap()
}

/// A hostile test grader built by host/build.rs from components/test-components/.
fn hostile(file: &str) -> PathBuf {
    let path = test_component(file);
    assert!(
        path.exists(),
        "{} is missing: host/build.rs must build components/test-components/grader-* \
         (packages test-grader-*) into CODER_EVAL_TEST_COMPONENTS_DIR",
        path.display()
    );
    path
}

async fn grade(
    criteria: &[CriterionSpec],
    workspace: &Path,
    trajectory: &[StampedEvent],
) -> Vec<CriterionResult> {
    let ctx = GradeContext::new(
        workspace,
        workspace,
        trajectory,
        "Create hello.txt containing a greeting, then run date.",
        None,
    );
    grade_all(criteria, &ctx).await
}

/// Two ordinary criteria around `middle`, graded in one call; checks the ordinary ones
/// were unaffected and returns the middle result.
async fn between_ordinary(middle: CriterionSpec, workspace: &Path) -> CriterionResult {
    let (_, trajectory) = hello_run();
    let criteria = vec![
        spec("type: file_exists\npath: hello.txt"),
        middle,
        spec("type: command_executed\ncommand_pattern: ^date$"),
    ];
    let results = grade(&criteria, workspace, &trajectory).await;
    assert_eq!(results.len(), 3);
    for i in [0, 2] {
        assert_eq!(results[i].score, 1.0, "{:?}", results[i]);
        assert!(
            results[i].passed && results[i].error.is_none(),
            "{:?}",
            results[i]
        );
    }
    let middle = results[1].clone();
    assert_eq!(middle.score, 0.0, "{middle:?}");
    assert!(!middle.passed);
    assert!(!passed(&results));
    middle
}

#[tokio::test]
async fn builtin_criteria_grade_a_recorded_run() {
    let (record, trajectory) = hello_run();
    let ws = hello_workspace("builtin");
    let criteria = vec![
        spec("type: file_exists\npath: hello.txt"),
        spec("type: file_exists\npath: '*.txt'"),
        spec("type: file_contains\npath: hello.txt\nincludes: [hello, mock]\nexcludes: [error]"),
        spec(
            "type: file_check\npath: app.py\nincludes: [print]\npatterns: [{pattern: '^print\\(', flags: 8}]",
        ),
        spec("type: file_matches_regex\npath: hello.txt\npattern: '^hello \\w+'"),
        spec(
            "type: json_check\npath: out.json\nschema: {type: object, required: [n]}\nassertions: [{expression: n, operator: gte, expected: 3}, {expression: greeting, operator: regex, expected: '^h'}]",
        ),
        spec(
            "type: command_executed\ntool_name: Bash\ncommand_pattern: ^date$\nrequire_success: true",
        ),
        spec("type: command_executed\ncommand_pattern: rm -rf\nmin_count: 0\nmax_count: 0"),
        spec("type: commands_efficiency\nexpected_commands: 2"),
        spec("type: skill_triggered\nskill_name: pdf\nexpected_skill: ''"),
        spec("type: classification_match\nexpected_label: done\nallowed_labels: [done, failed]"),
        spec("type: run_command\ncommand: cat hello.txt\nexpected_stdout: hello from mock"),
    ];
    let results = grade(&criteria, &ws, &trajectory).await;
    for r in &results {
        assert_eq!((r.score, r.passed), (1.0, true), "{r:?}");
        assert!(r.error.is_none(), "{r:?}");
    }
    assert_eq!(weighted_score(&results), Some(1.0));
    assert_eq!(
        task_status(record.final_status, passed(&results)),
        TaskStatus::Success
    );

    // And the failing side, through the same components.
    let failing = vec![
        spec("type: file_exists\npath: missing.txt"),
        spec("type: file_contains\npath: hello.txt\nincludes: [hello, goodbye]"),
        spec("type: json_check\npath: bad.json"),
        spec("type: json_check\npath: nope.json"),
        spec("type: command_executed\ncommand_pattern: ^date$\nmin_count: 0\nmax_count: 0"),
        spec("type: commands_efficiency\nexpected_commands: 1"),
        spec("type: classification_match\nexpected_label: failed\nallowed_labels: [done, failed]"),
        spec("type: run_command\ncommand: exit 1"),
    ];
    let results = grade(&failing, &ws, &trajectory).await;
    let scores: Vec<f64> = results.iter().map(|r| r.score).collect();
    assert_eq!(
        scores,
        vec![0.0, 0.5, 0.0, 0.0, 0.0, 0.5, 0.0, 0.0],
        "{results:#?}"
    );
    assert!(
        results.iter().all(|r| r.error.is_none() && !r.passed),
        "{results:#?}"
    );
    assert!(
        results[2].details.contains("not valid JSON"),
        "{}",
        results[2].details
    );
    assert!(
        results[3].details.contains("does not exist"),
        "{}",
        results[3].details
    );
    assert_eq!(
        task_status(record.final_status, passed(&results)),
        TaskStatus::Failure
    );
}

#[tokio::test]
async fn the_final_text_of_the_run_is_classified() {
    let (record, trajectory) = hello_run();
    let ws = hello_workspace("final-text");
    let final_text = record.cli_result.as_ref().and_then(|r| r.text.clone());
    assert_eq!(final_text.as_deref(), Some("done"));
    let criteria = vec![spec(
        "type: classification_match\nexpected_label: failed\nallowed_labels: [done, failed]",
    )];
    let ctx = GradeContext::new(&ws, &ws, &trajectory, "", Some("this failed"));
    let results = grade_all(&criteria, &ctx).await;
    assert_eq!(
        results[0].score, 1.0,
        "the runner's final text wins: {:?}",
        results[0]
    );
}

#[tokio::test]
async fn an_infinite_loop_runs_out_of_fuel_deterministically() {
    let ws = hello_workspace("looper");
    let looper = component(&hostile("test_grader_looper.wasm"), json!({}));
    let first = between_ordinary(looper.clone(), &ws).await;
    let error = first.error.clone().expect("an error");
    assert_eq!(error.kind, "out_of_fuel", "{error:?}");
    assert!(
        error
            .message
            .contains("ran out of fuel in `criterion.grade`"),
        "{}",
        error.message
    );
    // Fuel, not the wall clock, cuts it off: the same input gives the same budget and
    // the same verdict.
    let second = between_ordinary(looper, &ws).await;
    assert_eq!(second.error, first.error);
}

#[tokio::test]
async fn unbounded_allocation_hits_the_memory_cap() {
    let ws = hello_workspace("alloc");
    let r = between_ordinary(
        component(&hostile("test_grader_alloc.wasm"), json!({})),
        &ws,
    )
    .await;
    let error = r.error.expect("an error");
    assert_eq!(error.kind, "out_of_memory", "{error:?}");
    assert!(
        error.message.contains("exceeded its memory cap"),
        "{}",
        error.message
    );
}

#[tokio::test]
async fn a_panic_is_a_trap_with_the_guest_message() {
    let ws = hello_workspace("panic");
    let r = between_ordinary(
        component(&hostile("test_grader_panic.wasm"), json!({})),
        &ws,
    )
    .await;
    let error = r.error.expect("an error");
    assert_eq!(error.kind, "trap", "{error:?}");
    assert!(
        error.message.contains("grader panicked on purpose"),
        "{}",
        error.message
    );
}

#[tokio::test]
async fn a_grader_cannot_leave_its_sandbox() {
    // SAFETY: set once, before any grader runs; read by nothing else in this process.
    unsafe { std::env::set_var("CODER_EVAL_TEST_SECRET", "sk-very-secret") };
    let base = scratch("escape");
    let ws = base.join("workspace");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(base.join("secret"), "the secret").unwrap();
    std::fs::write(ws.join("inside.txt"), "fine").unwrap();
    std::os::unix::fs::symlink(base.join("secret"), ws.join("escape-link")).unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();

    let params = json!({"inside": "inside.txt", "symlink": "escape-link", "port": port});
    let escape = component(&hostile("test_grader_escape.wasm"), params);
    let results = grade(
        &[escape, spec("type: file_exists\npath: inside.txt")],
        &ws,
        &[],
    )
    .await;
    let r = &results[0];
    assert!(r.error.is_none(), "{r:?}");
    let report: Value = serde_json::from_str(&r.details).expect("the grader's JSON report");
    println!("what the escaping grader saw: {report:#}");
    assert_eq!(
        report["inside_read"]["succeeded"], true,
        "control: {report:#}"
    );
    for attempt in [
        "parent_dir_read",
        "absolute_read",
        "symlink_read",
        "workspace_write",
        "env_secret",
        "env_any",
        "tcp_connect",
    ] {
        assert_eq!(
            report[attempt]["succeeded"], false,
            "{attempt} succeeded: {report:#}"
        );
    }
    assert_eq!(r.score, 1.0, "{report:#}");
    // Nothing reached the host side either.
    assert!(!ws.join("written-by-grader.txt").exists());
    assert!(
        listener.accept().is_err(),
        "no connection reached the listener"
    );
    assert_eq!(
        std::env::var("CODER_EVAL_TEST_SECRET").unwrap(),
        "sk-very-secret"
    );
    assert_eq!(results[1].score, 1.0);
}

#[tokio::test]
async fn a_huge_verdict_is_capped() {
    let ws = hello_workspace("huge");
    let (_, trajectory) = hello_run();
    let criteria = vec![
        component(&hostile("test_grader_huge.wasm"), json!({})),
        spec("type: file_exists\npath: hello.txt"),
    ];
    let results = grade(&criteria, &ws, &trajectory).await;
    let r = &results[0];
    assert!(r.error.is_none(), "{:?}", r.error);
    assert_eq!(r.score, 1.0);
    assert!(
        r.details.starts_with("HUGE-START xxx"),
        "{}",
        &r.details[..40]
    );
    assert!(
        r.details.len() < 65 * 1024,
        "{} bytes kept",
        r.details.len()
    );
    assert!(
        r.details
            .ends_with("[truncated: the grader returned 100000000 bytes, 65536 kept]"),
        "{}",
        &r.details[r.details.len() - 100..]
    );
    assert_eq!(results[1].score, 1.0);
}

#[tokio::test]
async fn components_that_are_not_graders_are_refused() {
    let ws = hello_workspace("not-graders");
    let harness = Path::new(env!("CODER_EVAL_COMPONENTS_DIR")).join("claude_code_harness.wasm");
    let r = between_ordinary(component(&harness, json!({})), &ws).await;
    assert_eq!(r.error.as_ref().unwrap().kind, "wrong_world", "{r:?}");
    let r = between_ordinary(component(Path::new("no/such/grader.wasm"), json!({})), &ws).await;
    assert_eq!(r.error.as_ref().unwrap().kind, "read", "{r:?}");
    // A criterion is checked once, when it is made: one that leaves the workspace never
    // reaches grading.
    let bad = CriterionSpec::new("file_exists", json!({"path": "../outside"})).unwrap_err();
    assert!(bad.contains("leaves the workspace"), "{bad}");
}

#[tokio::test]
async fn the_rust_example_criterion_on_a_recorded_run() {
    let (record, trajectory) = hello_run();
    let ws = hello_workspace("example-rust");
    let example = Path::new(env!("CODER_EVAL_COMPONENTS_DIR")).join("example_criterion.wasm");
    let criterion = component(&example, json!({"readme": "README.md"}));

    // No README yet: the created file (hello.txt, from the Write call) is not mentioned.
    let results = grade(std::slice::from_ref(&criterion), &ws, &trajectory).await;
    assert_eq!(results[0].score, 0.0, "{:?}", results[0]);
    assert!(
        results[0].details.contains("hello.txt"),
        "{}",
        results[0].details
    );

    std::fs::write(ws.join("README.md"), "Files: hello.txt\n").unwrap();
    let results = grade(std::slice::from_ref(&criterion), &ws, &trajectory).await;
    assert_eq!(results[0].score, 1.0, "{:?}", results[0]);
    assert_eq!(results[0].details, "README.md mentions 1/1 created files");
    assert_eq!(
        task_status(record.final_status, passed(&results)),
        TaskStatus::Success
    );

    // A typo in its params is the criterion's error, reported as the grader's own.
    let typo = component(&example, json!({"readmee": "README.md"}));
    let results = grade(&[typo], &ws, &trajectory).await;
    let error = results[0].error.as_ref().unwrap();
    assert_eq!(error.kind, "grading_error");
    assert!(
        error.message.contains("unknown field `readmee`"),
        "{}",
        error.message
    );
}

/// An example criterion in another language: its folder under `examples/criteria`, the
/// files its build reads, and how to tell its toolchain is installed.
struct Example {
    lang: &'static str,
    inputs: Vec<PathBuf>,
    /// The toolchain's check command (program, args) and how to install it.
    toolchain: (PathBuf, &'static str, &'static str),
}

/// Builds an example with its build.sh (once; rebuilt when its sources or the WIT
/// change), or `None` when its toolchain is not installed (outside CI only: CI installs
/// it, so there a missing toolchain fails the test).
fn build_example(example: Example) -> Option<PathBuf> {
    let src = root().join("examples/criteria").join(example.lang);
    let out_dir = root().join("target/examples/criteria").join(example.lang);
    let out = out_dir.join("greeting.wasm");
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    let mut inputs = example.inputs;
    inputs.push(root().join("wit/events@0.1.0/events.wit"));
    inputs.push(root().join("wit/grader@0.1.0/grader.wit"));
    if out.exists() && inputs.iter().all(|i| modified(&out) >= modified(i)) {
        return Some(out);
    }
    let (program, arg, install) = example.toolchain;
    let found = std::process::Command::new(&program).arg(arg).output();
    if !found.is_ok_and(|o| o.status.success()) {
        assert!(
            std::env::var_os("CI").is_none(),
            "{} is missing in CI: scripts/setup.sh installs it",
            program.display()
        );
        println!(
            "SKIPPED: {} is not installed ({install}); the {} example criterion was not run",
            program.display(),
            example.lang
        );
        return None;
    }
    std::fs::create_dir_all(&out_dir).unwrap();
    let status = std::process::Command::new("bash")
        .arg(src.join("build.sh"))
        .arg(&out)
        .status()
        .unwrap();
    assert!(
        status.success(),
        "examples/criteria/{}/build.sh failed",
        example.lang
    );
    Some(out)
}

/// The Python example (componentize-py).
fn python_example() -> Option<PathBuf> {
    build_example(Example {
        lang: "python",
        inputs: vec![root().join("examples/criteria/python/app.py")],
        toolchain: (
            "componentize-py".into(),
            "--version",
            "pip install componentize-py==0.25.1",
        ),
    })
}

/// The JavaScript example (componentize-js, installed in its folder by `npm ci`).
fn javascript_example() -> Option<PathBuf> {
    let dir = root().join("examples/criteria/javascript");
    build_example(Example {
        lang: "javascript",
        inputs: vec![
            dir.join("src/app.js"),
            dir.join("wit/world.wit"),
            dir.join("package-lock.json"),
        ],
        toolchain: (
            dir.join("node_modules/.bin/componentize-js"),
            "--version",
            "npm ci in examples/criteria/javascript",
        ),
    })
}

/// What both example criteria (the same checks, in Python and in JavaScript) must give on
/// the recorded hello run: a pass with the file's words and the command, a fail on the
/// wrong ones, and bad params as the criterion's error.
async fn the_example_criterion_judges(wasm: &Path, name: &str) {
    let (_, trajectory) = hello_run();
    let ws = hello_workspace(name);
    let params = json!({"file": "hello.txt", "words": ["hello", "mock"], "command": "date"});
    let criteria = vec![
        component(wasm, params),
        component(
            wasm,
            json!({"file": "hello.txt", "words": ["goodbye"], "command": "rm"}),
        ),
        component(wasm, json!({"words": "not a list"})),
        component(wasm, json!({"file": "missing.txt"})),
        component(wasm, json!({"file": "../outside.txt"})),
    ];
    let results = grade(&criteria, &ws, &trajectory).await;
    assert_eq!(results[0].score, 1.0, "{:?}", results[0]);
    assert_eq!(
        results[0].details,
        "hello.txt has 2/2 words; ran 'date': yes"
    );
    assert_eq!(results[1].score, 0.0, "{:?}", results[1]);
    assert_eq!(results[1].details, "hello.txt has 0/1 words; ran 'rm': no");
    let error = results[2].error.as_ref().expect("bad params are an error");
    assert_eq!(error.kind, "grading_error", "{error:?}");
    assert!(
        error.message.contains("must be a list"),
        "{}",
        error.message
    );
    assert_eq!(results[3].score, 0.0, "{:?}", results[3]);
    assert!(
        results[3].details.starts_with("cannot read missing.txt"),
        "{:?}",
        results[3]
    );
    let error = results[4]
        .error
        .as_ref()
        .expect("a path outside is an error");
    assert!(error.message.contains("inside the workspace"), "{error:?}");
}

#[tokio::test]
async fn the_javascript_example_criterion_on_a_recorded_run() {
    let Some(wasm) = tokio::task::spawn_blocking(javascript_example)
        .await
        .unwrap()
    else {
        return;
    };
    the_example_criterion_judges(&wasm, "example-javascript").await;
}

#[tokio::test]
async fn the_python_example_criterion_on_a_recorded_run() {
    let Some(wasm) = tokio::task::spawn_blocking(python_example).await.unwrap() else {
        return;
    };
    the_example_criterion_judges(&wasm, "example-python").await;
}
