//! Hot swap: a second build of the reducer, passed at run time with `--components` (or
//! `--component NAME=PATH`), changes the output of the same host binary.

use crate::support::{bin, corpus, scratch, test_component};
use std::process::Command;

fn replay_json(extra: &[&str]) -> String {
    let hello = corpus("live/claude/hello.jsonl");
    let out = Command::new(bin())
        .args([
            "replay",
            hello.to_str().unwrap(),
            "--harness",
            "claude-code",
            "--json",
        ])
        .args(extra)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn components_dir_replaces_the_builtin_reducer() {
    let builtin = replay_json(&[]);
    assert!(builtin.contains("\"name\": \"Write\""));
    assert!(builtin.contains("\"component\": \"builtin:claude-code\""));

    let dir = scratch("hot-swap");
    std::fs::copy(
        test_component("test_tagger.wasm"),
        dir.join("claude-code.wasm"),
    )
    .unwrap();
    let swapped = replay_json(&["--components", dir.to_str().unwrap()]);
    assert_ne!(builtin, swapped);
    assert!(swapped.contains("\"name\": \"tagged:Write\""), "{swapped}");
    assert!(swapped.contains("[tagged] done"));

    // A folder without the harness's file falls back to the built-in one.
    let empty = scratch("hot-swap-empty");
    assert_eq!(
        replay_json(&["--components", empty.to_str().unwrap()]),
        builtin
    );

    // The per-harness override works the same way.
    let tagger = test_component("test_tagger.wasm");
    let overridden = replay_json(&["--component", &format!("claude-code={}", tagger.display())]);
    assert!(overridden.contains("tagged:Bash"));
}

#[test]
fn replay_takes_the_harness_from_the_header_and_refuses_a_mismatch() {
    let dir = scratch("replay-harness");
    let recording = dir.join("r.jsonl");
    let capture = std::fs::read_to_string(corpus("live/claude/hello.jsonl")).unwrap();
    let mut text = String::from(
        "{\"format\":\"coder-eval-recording\",\"version\":1,\"harness\":\"claude-code\"}\n",
    );
    for (i, line) in capture.lines().enumerate() {
        text += &serde_json::json!({"t": "out", "us": i * 1000, "text": line}).to_string();
        text.push('\n');
    }
    std::fs::write(&recording, text).unwrap();
    let run = |args: &[&str]| {
        Command::new(bin())
            .arg("replay")
            .arg(&recording)
            .args(args)
            .output()
            .unwrap()
    };
    let ok = run(&["--json"]);
    assert!(ok.status.success());
    assert!(String::from_utf8_lossy(&ok.stdout).contains("\"harness\": \"claude-code\""));
    let wrong = run(&["--harness", "codex"]);
    assert_eq!(wrong.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&wrong.stderr).contains("recorded with the `claude-code` harness")
    );
    // A plain capture has no header: the harness must be named.
    let plain = Command::new(bin())
        .arg("replay")
        .arg(corpus("live/claude/hello.jsonl"))
        .output()
        .unwrap();
    assert_eq!(plain.status.code(), Some(2));
}

#[test]
fn same_binary_same_bytes() {
    assert_eq!(replay_json(&[]), replay_json(&[]));
}

#[test]
fn a_component_replaced_during_a_suite_is_picked_up_by_the_next_task() {
    use coder_eval::run::{RunOptions, prepare, run_one};
    use coder_eval::task::Task;
    let dir = scratch("hot-swap-suite");
    let components = dir.join("components");
    std::fs::create_dir_all(&components).unwrap();
    let tagger = test_component("test_tagger.wasm");
    let panicker = test_component("test_panicker.wasm");
    std::fs::copy(&tagger, components.join("claude-code.wasm")).unwrap();
    // A task whose CLI is a stand-in printing a recorded Claude Code stream.
    let cli = dir.join("fake-claude.sh");
    std::fs::write(
        &cli,
        format!(
            "#!/bin/sh\ncat {}\n",
            corpus("live/claude/hello.jsonl").display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&cli, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    std::fs::write(dir.join("one.yaml"), "task_id: one\ninitial_prompt: hi\n").unwrap();
    std::fs::write(dir.join("two.yaml"), "task_id: two\ninitial_prompt: hi\n").unwrap();
    let one = Task::load(&dir.join("one.yaml")).unwrap();
    let two = Task::load(&dir.join("two.yaml")).unwrap();
    let mut options = RunOptions::new(dir.join("out"));
    options.components.dir = Some(components.clone());
    options.cli_override = Some(cli);
    let harness = ["claude-code".to_string()];
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let (_tx, rx) = tokio::sync::watch::channel(false);

    // Both tasks are prepared (checked) up front, as in a suite.
    let mut prepared = prepare(vec![one, two], &harness, &options).unwrap();
    let second = prepared.pop().unwrap();
    let first = prepared.pop().unwrap();
    let r1 = runtime.block_on(run_one(first, &options, rx.clone()));
    assert!(r1.turn.unwrap().tool_calls[0].name.starts_with("tagged:"));
    // Between the tasks, the file is replaced by another build.
    std::fs::copy(&panicker, components.join("claude-code.wasm")).unwrap();
    let r2 = runtime.block_on(run_one(second, &options, rx));
    let turn = r2.turn.unwrap();
    assert!(
        turn.reducer_error
            .unwrap()
            .message
            .contains("reducer panicked on purpose")
    );
}
