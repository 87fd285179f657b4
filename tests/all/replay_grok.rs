//! Golden replay of the grok-cli recordings (`tests/corpus/live/grok`, grok-cli 0.0.34
//! against the scripted model): every capture replays without a reducer error, its turn
//! record is pinned by an insta snapshot, and the shared scenarios give the same counts as
//! on the other harnesses. grok reports no tokens: the usage is unknown (`None`, with an
//! unreported-usage note), never zero.

use crate::support::{captures, corpus, main_calls, tools};
use coder_eval::results::{ToolOutcome, TurnRecord, TurnStatus};
use coder_eval::turn::replay::{ReplayOptions, replay};

fn grok(scenario: &str) -> TurnRecord {
    let path = corpus(&format!("live/grok/{scenario}.jsonl"));
    replay(&path, &ReplayOptions::new("grok-cli"))
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn every_grok_capture_replays_and_matches_its_snapshot() {
    let mut count = 0;
    for path in captures("live/grok") {
        count += 1;
        let record = replay(&path, &ReplayOptions::new("grok-cli"))
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert!(record.reducer_error.is_none(), "{}", path.display());
        let name = format!("grok__{}", path.file_stem().unwrap().to_str().unwrap());
        insta::assert_json_snapshot!(name, record);
    }
    assert_eq!(count, 4, "hello, parallel, tool_error, probe_hello");
}

#[test]
fn the_shared_scenarios() {
    let r = grok("hello");
    assert_eq!((r.num_turns, main_calls(&r)), (3, 3));
    assert_eq!(
        tools(&r),
        [("create_file", ToolOutcome::Ok), ("bash", ToolOutcome::Ok)]
    );
    assert_eq!(r.commands, ["date"]);
    assert_eq!(r.usage, None, "grok reports no tokens: unknown, not zero");
    assert_eq!(r.unreported.len(), 1, "{:?}", r.unreported);
    assert_eq!(r.cost_usd, None);
    assert_eq!(r.cli_result.as_ref().unwrap().text.as_deref(), Some("done"));
    assert_eq!(r.final_status, TurnStatus::Completed);

    let r = grok("parallel");
    assert_eq!((main_calls(&r), r.tool_calls.len()), (2, 2));
    assert!(r.tool_calls.iter().all(|t| t.status == ToolOutcome::Ok));

    // `Command failed: …` is the failed command (no exit code in the transcript).
    let r = grok("tool_error");
    assert_eq!(r.tool_calls[0].status, ToolOutcome::Error);
    assert_eq!(r.tool_calls[0].exit_code, None);
    assert_eq!(r.final_status, TurnStatus::Completed);

    let r = grok("probe_hello");
    assert_eq!((r.num_turns, r.tool_calls.len()), (3, 2));
}
