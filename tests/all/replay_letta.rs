//! Golden replay of the Letta Code recordings (`tests/corpus/live/letta`, Letta Code
//! 0.25.9 on its local backend against the scripted model): every capture replays without
//! a reducer error, its turn record is pinned by an insta snapshot, and the shared
//! scenarios give the same counts as on the other harnesses. The stream has no tool
//! results: every tool call's outcome is unknown (never ok), with no output or exit code.

use crate::support::{captures, corpus, main_calls, tools};
use coder_eval::results::{ToolOutcome, TurnRecord, TurnStatus};
use coder_eval::turn::replay::{ReplayOptions, replay};

fn letta(scenario: &str) -> TurnRecord {
    let path = corpus(&format!("live/letta/{scenario}.jsonl"));
    replay(&path, &ReplayOptions::new("letta"))
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn every_letta_capture_replays_and_matches_its_snapshot() {
    let mut count = 0;
    for path in captures("live/letta") {
        count += 1;
        let record = replay(&path, &ReplayOptions::new("letta"))
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert!(record.reducer_error.is_none(), "{}", path.display());
        assert!(
            record.diagnostics.is_empty(),
            "{}: {:?}",
            path.display(),
            record.diagnostics
        );
        let name = format!("letta__{}", path.file_stem().unwrap().to_str().unwrap());
        insta::assert_json_snapshot!(name, record);
    }
    assert_eq!(count, 4, "hello, parallel, tool_error, probe_hello");
}

#[test]
fn the_shared_scenarios() {
    let r = letta("hello");
    // The result line's `num_turns` is 0: the count is the stream's model calls.
    assert_eq!((r.num_turns, main_calls(&r)), (3, 3));
    assert_eq!(
        tools(&r),
        [
            ("Write", ToolOutcome::Unknown),
            ("Bash", ToolOutcome::Unknown)
        ]
    );
    assert!(r.tool_calls.iter().all(|t| t.exit_code.is_none()));
    let usage = r
        .usage
        .expect("usage_statistics per call, totals in the result");
    assert_eq!((usage.input_tokens, usage.output_tokens), (45994, 42));
    assert_eq!(r.cost_usd, None);
    assert_eq!(r.cli_result.as_ref().unwrap().text.as_deref(), Some("done"));
    assert_eq!(r.final_status, TurnStatus::Completed);

    let r = letta("parallel");
    assert_eq!((main_calls(&r), r.tool_calls.len()), (2, 2));
    assert!(
        r.tool_calls
            .iter()
            .all(|t| t.status == ToolOutcome::Unknown)
    );

    // `ls does-not-exist` failed, and the stream cannot say so: unknown, not ok.
    let r = letta("tool_error");
    assert_eq!(tools(&r), [("Bash", ToolOutcome::Unknown)]);
    assert_eq!(r.tool_calls[0].exit_code, None);
    assert_eq!(r.final_status, TurnStatus::Completed);

    // The opt-outs off changed nothing: Letta Code phoned nowhere.
    let r = letta("probe_hello");
    assert_eq!((r.num_turns, r.tool_calls.len()), (3, 2));
}
