//! report.html and `coder-eval view` in a real browser: Debian's chromium, headless,
//! driven by playwright-core (tests/browser/report.mjs; both installed by
//! scripts/setup.sh). Real runs against the scripted model, one of them with a prompt and
//! model text that try to inject markup.

use crate::support::{bin, root, scratch};
use coder_eval::results::{RunSummary, TaskResult, TaskStatus};
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const INJECT: &str =
    "<script>window.__injected=true</script><img src=x onerror=\"window.__injected=true\">";

/// What tests/browser/report.mjs saw at `url`.
fn look(url: &str) -> Value {
    let dir = root().join("tests/browser");
    assert!(
        dir.join("node_modules/playwright-core").is_dir()
            && Path::new("/usr/bin/chromium").exists(),
        "playwright-core or chromium missing: run scripts/setup.sh"
    );
    let out = Command::new("node")
        .arg(dir.join("report.mjs"))
        .arg(url)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// A task whose prompt and model text carry markup, and the parallel scenario, on two
/// harnesses; returns the run folder and its results in report order.
fn run(out: &Path) -> Vec<TaskResult> {
    let dir = scratch(&format!(
        "{}-tasks",
        out.file_name().unwrap().to_string_lossy()
    ));
    let quoted = serde_json::to_string(INJECT).unwrap();
    std::fs::write(
        dir.join("script.yaml"),
        format!("name: inject\nreplies:\n  - text: {quoted}\n    tool_calls:\n      - shell: {{command: echo hi}}\n  - text: done\n"),
    )
    .unwrap();
    std::fs::write(
        dir.join("task.yaml"),
        format!(
            "task_id: inject\ndescription: markup in the prompt\ninitial_prompt: {quoted}\n\
             agent: {{scripted_model: script.yaml}}\nsuccess_criteria:\n  - type: command_executed\n    command_pattern: echo\n"
        ),
    )
    .unwrap();
    let status = Command::new(bin())
        .arg("run")
        .arg(dir.join("task.yaml"))
        .arg(root().join("tasks/scenarios/parallel/task.yaml"))
        .args(["--harness", "claude-code", "--harness", "pi", "--out"])
        .arg(out)
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(status.code().is_some());
    let summary: RunSummary =
        serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).unwrap()).unwrap();
    let results: Vec<TaskResult> = summary
        .rows
        .iter()
        .map(|r| {
            serde_json::from_str(&std::fs::read_to_string(out.join(&r.result)).unwrap()).unwrap()
        })
        .collect();
    // The report's order: tasks as first seen, each task's runs in run order.
    let mut tasks: Vec<&str> = Vec::new();
    for r in &results {
        if !tasks.contains(&r.task_id.as_str()) {
            tasks.push(&r.task_id);
        }
    }
    tasks
        .iter()
        .flat_map(|t| results.iter().filter(move |r| r.task_id == *t))
        .cloned()
        .collect()
}

fn check(seen: &Value, results: &[TaskResult]) {
    assert_eq!(seen["errors"], serde_json::json!([]), "console errors");
    assert_eq!(seen["before"], false, "a trajectory starts collapsed");
    assert_eq!(seen["opened"], true, "a click opens it");
    assert_eq!(seen["entriesVisible"], true);
    let first = results[0].turn.as_ref().unwrap();
    // Prompt, each model call, each message, each main-thread tool call, diagnostics, end.
    let expected = 2
        + first
            .model_calls
            .iter()
            .filter(|c| c.parent_call_id.is_none())
            .count()
        + first
            .messages
            .iter()
            .filter(|m| m.parent_call_id.is_none())
            .count()
        + first
            .tool_calls
            .iter()
            .filter(|c| c.parent_call_id.is_none())
            .count()
        + first.diagnostics.len();
    assert_eq!(seen["entries"], expected);
    let bars: Vec<usize> = results
        .iter()
        .map(|r| r.turn.as_ref().map_or(0, |t| t.tool_calls.len()))
        .collect();
    // A run of a few tasks shows each timeline twice: at a glance, then in its section.
    let twice: Vec<usize> = bars.iter().chain(&bars).copied().collect();
    assert_eq!(seen["toolBars"], serde_json::json!(twice));
    assert_eq!(seen["injectedRan"], false, "markup from a run ran as code");
    // Filters: a task shows under a status when one of its cells has it; tags as the
    // task file gives them (the parallel scenario is tagged `scenario`).
    let with_status = |status: TaskStatus| -> Vec<String> {
        let mut tasks: Vec<String> = Vec::new();
        for r in results.iter().filter(|r| r.status == status) {
            if !tasks.contains(&r.task_id) {
                tasks.push(r.task_id.clone());
            }
        }
        tasks
    };
    let order: Vec<&str> = {
        let mut tasks: Vec<&str> = Vec::new();
        for r in results {
            if !tasks.contains(&r.task_id.as_str()) {
                tasks.push(&r.task_id);
            }
        }
        tasks
    };
    let sorted = |mut v: Vec<String>| {
        v.sort_by_key(|t| order.iter().position(|o| o == t));
        v
    };
    let f = &seen["filters"];
    assert_eq!(
        f["f-status=FAILURE"],
        serde_json::json!(sorted(with_status(TaskStatus::Failure)))
    );
    assert_eq!(
        f["f-status=SUCCESS"],
        serde_json::json!(sorted(with_status(TaskStatus::Success)))
    );
    assert_eq!(f["f-tag=scenario"], serde_json::json!(["parallel"]));
    assert_eq!(
        f["visibleHeaders"],
        serde_json::json!(["task", results[0].harness.as_str()])
    );
    assert!(
        seen["bodyText"].as_str().unwrap().contains(INJECT),
        "the markup shows as text"
    );
}

#[test]
fn the_report_opens_clean_shows_trajectories_and_timelines_and_escapes_everything() {
    let out = scratch("browser-run");
    let results = run(&out);
    assert_eq!(results.len(), 4);
    let seen = look(&format!("file://{}", out.join("report.html").display()));
    check(&seen, &results);

    // The same page served by `coder-eval view`, with the files it links.
    let mut view = Command::new(bin())
        .args(["view", "--no-open"])
        .arg(&out)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(view.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line.trim().strip_prefix("URL ").expect(&line).to_string();
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");
    let seen = look(&url);
    check(&seen, &results);
    let linked = Command::new("curl")
        .args(["-s", "-o", "/dev/null", "-w", "%{http_code}"])
        .arg(format!("{url}inject/pi/task.json"))
        .output()
        .unwrap();
    let code = |path: &str| {
        let out = Command::new("curl")
            .args([
                "-s",
                "-o",
                "/dev/null",
                "-w",
                "%{http_code} %{content_type}",
                "--path-as-is",
            ])
            .arg(format!("{url}{path}"))
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    // An agent can leave a symlink out of its workspace: it is not followed.
    std::os::unix::fs::symlink("/etc", out.join("inject/pi/workspace/etc-link")).unwrap();
    let outside = code("../../etc/passwd");
    let encoded = code("%2e%2e/%2e%2e/etc/passwd");
    let through_link = code("inject/pi/workspace/etc-link/passwd");
    let folder = code("inject/pi/workspace/");
    let recording = code("inject/pi/recording.jsonl");
    let rebound = Command::new("curl")
        .args([
            "-s",
            "-o",
            "/dev/null",
            "-w",
            "%{http_code}",
            "-H",
            "Host: attacker.example",
        ])
        .arg(&url)
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&rebound.stdout), "421");
    unsafe { libc::kill(view.id() as i32, libc::SIGINT) };
    let status = view.wait().unwrap();
    assert_eq!(String::from_utf8_lossy(&linked.stdout), "200");
    assert!(outside.starts_with("404"), "{outside}");
    assert!(encoded.starts_with("404"), "{encoded}");
    assert!(through_link.starts_with("404"), "{through_link}");
    assert!(folder.starts_with("200 text/html"), "{folder}");
    assert_eq!(recording, "200 text/plain; charset=utf-8");
    assert_eq!(status.code(), Some(0), "view ends cleanly on Ctrl-C");
}

/// Prints the page size and load time of a 5-run and a 500-run report (figures, not
/// asserted: the closing note records them); asserts only that both open clean.
#[test]
fn a_500_run_report_opens_clean() {
    let out = scratch("browser-500");
    let results = run(&out);
    for n in [5usize, 500] {
        let many: Vec<TaskResult> = (0..n)
            .map(|i| {
                let mut r = results[i % results.len()].clone();
                r.task_id = format!("{}-{i:03}", r.task_id);
                r
            })
            .collect();
        let page = coder_eval::run::report::render(&many, &[], &[]);
        let file: PathBuf = out.join(format!("report-{n}.html"));
        std::fs::write(&file, &page).unwrap();
        let seen = look(&format!("file://{}", file.display()));
        assert_eq!(seen["errors"], serde_json::json!([]));
        let glance = if n <= 12 { n } else { 0 };
        assert_eq!(seen["toolBars"].as_array().unwrap().len(), n + glance);
        eprintln!(
            "report of {n} runs: {} KiB, loaded in {} ms",
            page.len() / 1024,
            seen["loadMs"]
        );
    }
}
