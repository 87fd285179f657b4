//! The live run's stdout framing end to end (`host/src/turn/framer.rs`): a CLI that
//! writes a line without end holds at most the line cap (64 MiB) of the host's memory;
//! the line is cut there and reported, and the turn reads on.

use crate::support::{corpus, scratch};
use coder_eval::run::{RunOptions, prepare, run_one};
use coder_eval::task::Task;
use coder_eval::turn::replay::{ReplayOptions, replay};

#[test]
fn a_line_without_end_is_cut_at_the_cap_and_the_turn_reads_on() {
    let dir = scratch("endless-line");
    // A stand-in CLI: 70 MB without a newline, then the recorded Claude Code hello stream.
    let cli = dir.join("fake-claude.sh");
    std::fs::write(
        &cli,
        format!(
            "#!/bin/sh\n[ \"$1\" = --version ] && echo 2.1.197 && exit 0\n\
             head -c 70000000 /dev/zero | tr '\\0' x\necho\ncat {}\n",
            corpus("live/claude/hello.jsonl").display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&cli, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    std::fs::write(dir.join("t.yaml"), "task_id: endless\ninitial_prompt: hi\n").unwrap();
    let task = Task::load(&dir.join("t.yaml")).unwrap();
    let mut options = RunOptions::new(dir.join("out"));
    options.cli_override = Some(cli);
    let prepared = prepare(vec![task], &["claude-code".to_string()], &options)
        .unwrap()
        .pop()
        .unwrap();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let (_tx, rx) = tokio::sync::watch::channel(false);
    let result = runtime.block_on(run_one(prepared, &options, rx));
    let turn = result
        .turn
        .unwrap_or_else(|| panic!("the turn ran: {:?} {:?}", result.status, result.error));
    assert!(turn.reducer_error.is_none(), "{:?}", turn.reducer_error);
    let kinds: Vec<&str> = turn.diagnostics.iter().map(|d| d.kind.as_str()).collect();
    // The first 64 MiB + 1 byte: cut and not reduced; the rest of it (2.9 MB of `x`) is a
    // line of its own that is not JSON.
    assert_eq!(
        kinds,
        ["line_too_large", "not_json"],
        "{:?}",
        turn.diagnostics
    );
    let cut = &turn.diagnostics[0];
    assert!(
        cut.message.contains("line of 67108865 bytes")
            && cut.message.contains("a line without a newline is cut"),
        "{}",
        cut.message
    );
    assert_eq!(turn.diagnostics[1].line, 2);
    // The stream after it reduced as it does alone.
    let hello = replay(
        &corpus("live/claude/hello.jsonl"),
        &ReplayOptions::new("claude-code"),
    )
    .unwrap();
    assert_eq!(
        turn.tool_calls.len(),
        hello.tool_calls.len(),
        "{:?} {:?} lines {}",
        turn.final_status,
        result.stop,
        turn.stdout_lines
    );
    assert_eq!(turn.final_status, hello.final_status);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_huge_version_line_is_cut_and_the_task_runs() {
    // A `--version` that prints a 1 MB line: it was handed whole to the harness's `totals`
    // call, which ran out of fuel and made the task an ERROR.
    let dir = scratch("huge-version");
    let cli = dir.join("fake-claude.sh");
    std::fs::write(
        &cli,
        format!(
            "#!/bin/sh\n[ \"$1\" = --version ] && head -c 1000000 /dev/zero | tr '\\0' 7 && exit 0\n\
             cat {}\n",
            corpus("live/claude/hello.jsonl").display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&cli, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    std::fs::write(
        dir.join("t.yaml"),
        "task_id: huge_version\ninitial_prompt: hi\n",
    )
    .unwrap();
    let task = Task::load(&dir.join("t.yaml")).unwrap();
    let mut options = RunOptions::new(dir.join("out"));
    options.cli_override = Some(cli);
    let prepared = prepare(vec![task], &["claude-code".to_string()], &options)
        .unwrap()
        .pop()
        .unwrap();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let (_tx, rx) = tokio::sync::watch::channel(false);
    let result = runtime.block_on(run_one(prepared, &options, rx));
    assert!(result.error.is_none(), "{:?}", result.error);
    let turn = result.turn.as_ref().expect("the turn ran");
    assert!(turn.reducer_error.is_none(), "{:?}", turn.reducer_error);
    let json = serde_json::to_string(&result).unwrap();
    assert!(
        json.contains(&"7".repeat(200)) && !json.contains(&"7".repeat(201)),
        "the version is cut at 200 characters"
    );
}
