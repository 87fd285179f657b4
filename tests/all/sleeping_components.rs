//! A component that sleeps (a WASI `subscribe-duration`, what `std::thread::sleep` does)
//! must not hold the host past its wall-clock limit (issue 17, TEST_AUDIT §5.1): sleeps
//! are virtual in the sandbox, whose clocks are frozen (`runtime::sandbox::link_wasi`).
//! Each test runs with a watchdog far below the hour the component asks to sleep.

use crate::support::{corpus, scratch, test_component};
use coder_eval::components::ComponentSource;
use coder_eval::grading::{CriterionSpec, GradeContext, grade_all};
use coder_eval::results::TurnStatus;
use coder_eval::turn::replay::{ReplayOptions, replay, replay_with_trajectory};
use serde_json::json;
use std::time::{Duration, Instant};

/// Runs `f` on a thread of its own; panics if it takes longer than `limit` (the thread
/// is left behind: on old code it sleeps for an hour).
fn within<T: Send + 'static>(limit: Duration, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(limit)
        .unwrap_or_else(|_| panic!("a sleeping component held the host for {limit:?} or more"))
}

/// A grader that asks to sleep an hour is graded at once (its frozen clock sees no time
/// pass), and the criteria around it are graded as usual.
#[test]
fn a_sleeping_grader_does_not_hold_the_host() {
    let sleeper = test_component("test_grader_sleeper.wasm");
    assert!(sleeper.exists(), "{} is missing", sleeper.display());
    let started = Instant::now();
    let results = within(Duration::from_secs(60), move || {
        let (_, trajectory) = replay_with_trajectory(
            &corpus("live/claude/hello.jsonl"),
            &ReplayOptions::new("claude-code"),
        )
        .unwrap();
        let ws = scratch("sleeping-grader").join("workspace");
        std::fs::create_dir_all(&ws).unwrap();
        std::fs::write(ws.join("hello.txt"), "hello\n").unwrap();
        let criteria = vec![
            CriterionSpec::new("file_exists", json!({"path": "hello.txt"})).unwrap(),
            CriterionSpec::new(
                "component",
                json!({"component": sleeper.to_str().unwrap(), "params": {}}),
            )
            .unwrap(),
            CriterionSpec::new("command_executed", json!({"command_pattern": "^date$"})).unwrap(),
        ];
        let ctx = GradeContext::new(&ws, &ws, &trajectory, "hi", None);
        tokio::runtime::Runtime::new()
            .unwrap()
            .block_on(grade_all(&criteria, &ctx))
    });
    assert!(started.elapsed() < Duration::from_secs(60));
    assert_eq!(results.len(), 3);
    for r in &results {
        assert!(r.passed && r.error.is_none(), "{r:?}");
    }
    assert_eq!(results[1].details, "slept; the clock saw 0 ms go by");
}

/// A reducer that sleeps an hour before every line reduces a whole recording at once,
/// with the same record as the reducer it wraps.
#[test]
fn a_sleeping_reducer_does_not_hold_the_host() {
    let sleeper = test_component("test_sleeper.wasm");
    assert!(sleeper.exists(), "{} is missing", sleeper.display());
    let (slept, plain) = within(Duration::from_secs(60), move || {
        let mut options = ReplayOptions::new("claude-code");
        options.components = ComponentSource {
            dir: None,
            overrides: [("claude-code".to_string(), sleeper)].into(),
        };
        let path = corpus("live/claude/hello.jsonl");
        (
            replay(&path, &options).unwrap(),
            replay(&path, &ReplayOptions::new("claude-code")).unwrap(),
        )
    });
    assert_eq!(slept.final_status, TurnStatus::Completed, "{slept:?}");
    assert!(slept.reducer_error.is_none());
    assert_eq!(slept.tool_calls.len(), plain.tool_calls.len());
    assert_eq!(slept.num_turns, plain.num_turns);
    assert_eq!(slept.commands, plain.commands);
}
