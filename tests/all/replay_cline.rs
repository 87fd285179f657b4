//! Golden replay of the Cline recordings (`tests/corpus/live/cline`, Cline 3.0.65 against
//! the scripted model): every capture replays without a reducer error, its turn record is
//! pinned by an insta snapshot, and the shared scenarios give the same counts as on the
//! other harnesses.

use crate::support::{captures, corpus, main_calls, tools};
use coder_eval::results::{ToolOutcome, TurnRecord, TurnStatus};
use coder_eval::turn::replay::{ReplayOptions, replay};

fn cline(scenario: &str) -> TurnRecord {
    let path = corpus(&format!("live/cline/{scenario}.jsonl"));
    replay(&path, &ReplayOptions::new("cline"))
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn every_cline_capture_replays_and_matches_its_snapshot() {
    let mut count = 0;
    for path in captures("live/cline") {
        count += 1;
        let record = replay(&path, &ReplayOptions::new("cline"))
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert!(record.reducer_error.is_none(), "{}", path.display());
        let name = format!("cline__{}", path.file_stem().unwrap().to_str().unwrap());
        insta::assert_json_snapshot!(name, record);
    }
    assert_eq!(count, 4, "hello, parallel, tool_error, probe_hello");
}

#[test]
fn the_shared_scenarios() {
    let r = cline("hello");
    assert_eq!((r.num_turns, main_calls(&r)), (3, 3));
    assert_eq!(
        tools(&r),
        [
            ("editor", ToolOutcome::Ok),
            ("run_commands", ToolOutcome::Ok)
        ]
    );
    assert_eq!(r.commands, ["date"]);
    assert_eq!(r.usage.unwrap().input_tokens, 5451 + 5573 + 5651);
    assert_eq!(r.usage.unwrap().output_tokens, 27 + 5 + 1);
    assert_eq!(r.cost_usd, Some(0.0));
    assert_eq!(r.cli_result.as_ref().unwrap().text.as_deref(), Some("done"));
    assert_eq!(r.final_status, TurnStatus::Completed);
    assert!(r.diagnostics.is_empty(), "{:?}", r.diagnostics);

    let r = cline("parallel");
    assert_eq!((main_calls(&r), r.tool_calls.len()), (2, 2));
    assert!(r.tool_calls.iter().all(|t| t.status == ToolOutcome::Ok));

    let r = cline("tool_error");
    assert_eq!(r.tool_calls[0].status, ToolOutcome::Error);
    assert_eq!(r.tool_calls[0].exit_code, Some(2));
    assert_eq!(r.final_status, TurnStatus::Completed);

    // The probe phoned home (feature flags) without changing the stream.
    let r = cline("probe_hello");
    assert_eq!((r.num_turns, r.tool_calls.len()), (3, 2));
}
