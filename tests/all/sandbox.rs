//! The component sandbox: a reducer that loops (stopped by its deadline), one that allocates without bound, one that
//! panics, and one built against another WIT version each end as a clear typed error
//! naming the component, and the host keeps working afterwards.

use crate::support::{corpus, test_component};
use coder_eval::components::{ComponentSource, ResolveError};
use coder_eval::results::TurnStatus;
use coder_eval::runtime::ComponentError;
use coder_eval::turn::replay::{ReplayError, ReplayOptions, replay};

fn with_component(file: &str) -> ReplayOptions {
    let mut options = ReplayOptions::new("claude-code");
    options.components = ComponentSource {
        dir: None,
        overrides: [("claude-code".to_string(), test_component(file))].into(),
    };
    options
}

/// Replays hello.jsonl with a hostile reducer; returns (kind, message) of its failure.
fn hostile(file: &str) -> (String, String) {
    let record = replay(&corpus("live/claude/hello.jsonl"), &with_component(file)).unwrap();
    assert_eq!(record.final_status, TurnStatus::ReducerFailed);
    let err = record.reducer_error.expect("the reducer must fail");
    assert_eq!(err.line, Some(1), "it fails on the first line");
    assert!(
        err.message.contains(file),
        "the message names the component: {}",
        err.message
    );
    // The failure is also a diagnostic, and nothing after it was reduced.
    assert!(
        record
            .diagnostics
            .iter()
            .any(|d| d.kind == "reducer_failed")
    );
    assert_eq!(record.tool_calls.len(), 0);
    host_still_works();
    (err.kind, err.message)
}

fn host_still_works() {
    let ok = replay(
        &corpus("live/claude/hello.jsonl"),
        &ReplayOptions::new("claude-code"),
    )
    .unwrap();
    assert_eq!(ok.final_status, TurnStatus::Completed);
}

#[test]
fn infinite_loop_stops_at_the_deadline() {
    // A reducer's CPU is bounded by its call's deadline (harness components run without
    // fuel metering, see `runtime::CpuBound`): 2 s for a short line.
    let (kind, message) = hostile("test_looper.wasm");
    assert_eq!(kind, "deadline", "{message}");
    // 2 s, plus 1 s per MiB of the line (about 1 ms for this one).
    let ms: u64 = message
        .split("deadline of ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no deadline in: {message}"));
    assert!((2_000..2_100).contains(&ms), "{message}");
    assert!(message.contains("ms in `stream-reducer.feed`"), "{message}");
    // The odd figure (2001 ms, say) is explained once, as the rule's sum.
    assert!(
        message.ends_with("`stream-reducer.feed` (2 s + 1 s per MiB of input)"),
        "{message}"
    );
}

#[test]
fn unbounded_allocation_hits_the_memory_cap() {
    let (kind, message) = hostile("test_alloc_bomb.wasm");
    assert_eq!(kind, "out_of_memory", "{message}");
    assert!(message.contains("exceeded its memory cap"), "{message}");
}

#[test]
fn panic_is_a_trap_with_the_guest_message() {
    let (kind, message) = hostile("test_panicker.wasm");
    assert_eq!(kind, "trap", "{message}");
    assert!(message.contains("reducer panicked on purpose"), "{message}");
    // No out-of-bounds access: no stack-overflow hint.
    assert!(!message.contains("stack overflow"), "{message}");
}

/// Unbounded recursion runs a Rust guest's shadow stack off the bottom of its linear
/// memory: wasmtime reports an out-of-bounds access, and the message says that a stack
/// overflow reads the same; the kind stays `trap`.
#[test]
fn a_stack_overflow_is_an_out_of_bounds_trap_with_a_hint() {
    let (kind, message) = hostile("test_recurser.wasm");
    assert_eq!(kind, "trap", "{message}");
    assert!(message.contains("out of bounds memory access"), "{message}");
    assert!(
        message.contains("a stack overflow, e.g. unbounded recursion, reads the same"),
        "{message}"
    );
}

#[test]
fn wrong_wit_version_is_refused_before_instantiation() {
    let err = replay(
        &corpus("live/claude/hello.jsonl"),
        &with_component("test_wrong_version.wasm"),
    )
    .unwrap_err();
    match &err {
        ReplayError::Resolve(ResolveError::Component(ComponentError::UnsupportedVersion {
            component,
            found,
            supported,
            ..
        })) => {
            assert!(component.ends_with("test_wrong_version.wasm"));
            assert_eq!(found, "9.0.0");
            assert_eq!(supported, "0.1.0, 0.2.0");
        }
        other => panic!("expected UnsupportedVersion, got {other:?}"),
    }
    assert!(
        err.to_string().contains("coder-eval:harness@9.0.0"),
        "{err}"
    );
    host_still_works();
}

#[test]
fn not_a_component_is_invalid() {
    let dir = crate::support::scratch("invalid");
    let path = dir.join("junk.wasm");
    std::fs::write(&path, b"\0asm not really").unwrap();
    let mut options = ReplayOptions::new("claude-code");
    options
        .components
        .overrides
        .insert("claude-code".into(), path);
    let err = replay(&corpus("live/claude/hello.jsonl"), &options).unwrap_err();
    assert!(
        matches!(
            err,
            ReplayError::Resolve(ResolveError::Component(ComponentError::Invalid { .. }))
        ),
        "{err:?}"
    );
}

/// A `translate-action` that traps (the panicker panics on a shell command with `PANIC`)
/// makes the task an ERROR of kind `component` whose message names the call, on the real
/// Claude Code CLI against the scripted model; the later action is answered with the
/// first failure, never "cannot enter component instance". (The panicker's reducer fails
/// too: before the fix the task read `reducer_failed`.)
#[test]
fn a_failed_translation_is_a_component_error_of_the_task() {
    let dir = crate::support::scratch("translate-trap");
    let task_dir = dir.join("translate_trap");
    std::fs::create_dir_all(&task_dir).unwrap();
    std::fs::write(
        task_dir.join("task.yaml"),
        "task_id: translate_trap\ninitial_prompt: Run a command, then write ok.txt.\n\
         agent:\n  type: claude-code\n  scripted_model: script.yaml\n\
         run_limits:\n  max_turns: 5\n  turn_timeout: 120\n\
         success_criteria:\n  - type: file_exists\n    path: ok.txt\n",
    )
    .unwrap();
    std::fs::write(
        task_dir.join("script.yaml"),
        "name: translate_trap\nreplies:\n\
         \x20 - tool_calls:\n      - shell: {command: echo PANIC}\n\
         \x20 - tool_calls:\n      - write_file: {path: ok.txt, content: ok}\n\
         \x20 - text: Done.\n",
    )
    .unwrap();
    let component = format!(
        "claude-code={}",
        test_component("test_panicker.wasm").display()
    );
    let out = dir.join("out");
    let r = crate::live_claude::run_task(
        task_dir.join("task.yaml").to_str().unwrap(),
        "claude-code",
        &out,
        &["--component", &component],
    );
    assert_eq!(
        r.status,
        coder_eval::results::TaskStatus::Error,
        "{:?}",
        r.error
    );
    assert_eq!(r.error_kind.as_deref(), Some("component"), "{:?}", r.error);
    let error = r.error.unwrap_or_default();
    assert!(error.contains("trapped in `translate-action`"), "{error}");
    assert!(error.contains("panicked on purpose"), "{error}");
    // The turn ran and is kept.
    assert!(r.turn.is_some(), "{error}");
    // The second action was answered with the first failure, not a trap of its own.
    let recording =
        std::fs::read_to_string(out.join("translate_trap/claude-code/recording.jsonl")).unwrap();
    assert!(
        recording.contains("an earlier translation failed"),
        "{recording}"
    );
    assert!(!recording.contains("cannot enter"), "{recording}");
}

/// Replays `recording` (its text) through the recurser with `side_files`; returns the
/// reducer's failure as `replay --json` writes it.
fn recurser_failure(
    name: &str,
    recording: &[u8],
    side_files: Vec<(String, Option<Vec<u8>>)>,
) -> serde_json::Value {
    let dir = crate::support::scratch(name);
    let path = dir.join("recording.jsonl");
    std::fs::write(&path, recording).unwrap();
    let mut options = with_component("test_recurser.wasm");
    options.side_files = side_files;
    let record = replay(&path, &options).unwrap();
    assert_eq!(record.final_status, TurnStatus::ReducerFailed);
    let json = serde_json::to_value(&record).unwrap();
    json["reducer_error"].clone()
}

/// A reducer that fails in `finish` after the last line has no line: `line` is null (not
/// 0) and the message says where.
#[test]
fn a_reducer_failure_in_finish_has_no_line_and_names_finish() {
    let err = recurser_failure("finish-fails", b"", Vec::new());
    assert_eq!(err["line"], serde_json::Value::Null, "{err}");
    let message = err["message"].as_str().unwrap();
    assert!(message.contains("`stream-reducer.finish`"), "{message}");
    assert!(
        message.ends_with("(in `finish`, after the last line of stdout)"),
        "{message}"
    );
}

/// A last line without a newline is a line, though `finish` reduces it: its number stays.
#[test]
fn a_reducer_failure_on_a_last_line_without_newline_keeps_its_line() {
    let err = recurser_failure("finish-partial", b"{\"type\":", Vec::new());
    assert_eq!(err["line"], 1, "{err}");
    let message = err["message"].as_str().unwrap();
    assert!(!message.contains("after the last line"), "{message}");
}

/// A reducer that fails on a side file has no line either; the message names the file.
#[test]
fn a_reducer_failure_on_a_side_file_has_no_line_and_names_the_file() {
    let err = recurser_failure(
        "side-file-fails",
        b"",
        vec![("usage.json".to_string(), Some(b"{}".to_vec()))],
    );
    assert_eq!(err["line"], serde_json::Value::Null, "{err}");
    let message = err["message"].as_str().unwrap();
    assert!(
        message.ends_with("(on the side file `usage.json`, after the CLI exited)"),
        "{message}"
    );
}
