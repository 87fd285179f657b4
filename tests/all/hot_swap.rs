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
fn same_binary_same_bytes() {
    assert_eq!(replay_json(&[]), replay_json(&[]));
}
