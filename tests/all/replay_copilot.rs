//! Golden replay of the GitHub Copilot CLI recordings (`tests/corpus/live/copilot`,
//! Copilot CLI 1.0.102 against the scripted model): every capture replays without a
//! reducer error, its turn record is pinned by an insta snapshot, and the shared scenarios
//! give the same counts as on the other harnesses. Tokens are only in each recording's
//! `<scenario>.usage.json` (the CLI's `--usage-output-file`), which a stdout replay does
//! not read: the usage is unreported, not zero.

use crate::support::{captures, corpus, main_calls, tools};
use coder_eval::results::{ToolOutcome, TurnRecord, TurnStatus};
use coder_eval::turn::replay::{ReplayOptions, replay};

fn copilot(scenario: &str) -> TurnRecord {
    let path = corpus(&format!("live/copilot/{scenario}.jsonl"));
    replay(&path, &ReplayOptions::new("copilot"))
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn every_copilot_capture_replays_and_matches_its_snapshot() {
    let mut count = 0;
    for path in captures("live/copilot") {
        count += 1;
        let record = replay(&path, &ReplayOptions::new("copilot"))
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert!(record.reducer_error.is_none(), "{}", path.display());
        let name = format!("copilot__{}", path.file_stem().unwrap().to_str().unwrap());
        insta::assert_json_snapshot!(name, record);
    }
    assert_eq!(count, 4, "hello, parallel, tool_error, probe_hello");
}

#[test]
fn the_shared_scenarios() {
    let r = copilot("hello");
    assert_eq!((r.num_turns, main_calls(&r)), (3, 3));
    assert_eq!(
        tools(&r),
        [("create", ToolOutcome::Ok), ("bash", ToolOutcome::Ok)]
    );
    assert_eq!(r.commands, ["date"]);
    assert_eq!(r.usage, None, "tokens are only in the usage file");
    assert_eq!(r.cost_usd, None);
    assert_eq!(r.cli_result.as_ref().unwrap().text.as_deref(), Some("done"));
    assert_eq!(r.final_status, TurnStatus::Completed);

    let r = copilot("parallel");
    assert_eq!((main_calls(&r), r.tool_calls.len()), (2, 2));
    assert!(r.tool_calls.iter().all(|t| t.status == ToolOutcome::Ok));

    // `success: true` with `shellExecution.exitCode: 2` is a failed command.
    let r = copilot("tool_error");
    assert_eq!(r.tool_calls[0].status, ToolOutcome::Error);
    assert_eq!(r.tool_calls[0].exit_code, Some(2));
    assert_eq!(r.final_status, TurnStatus::Completed);

    // Without the offline switch the probe phoned home (api.github.com) and the stream
    // did not change.
    let r = copilot("probe_hello");
    assert_eq!((r.num_turns, r.tool_calls.len()), (3, 2));
}

/// The usage file the launch plan names, handed to the reducer after the last line as a
/// live run would: the run's tokens come from it, and the totals are no longer partial.
#[test]
fn the_usage_side_file_gives_the_run_totals() {
    use coder_eval::components::ComponentSource;
    use coder_eval::runtime::harness::Launcher;
    use harness_kit::{AgentSettings, RunLimits};

    let loaded = ComponentSource::default().harness("copilot").unwrap();
    let settings = AgentSettings {
        model_base_url: Some("http://127.0.0.1:9".into()),
        ..Default::default()
    };
    let plan = Launcher::new(&loaded)
        .unwrap()
        .plan(&settings, &RunLimits::default())
        .unwrap()
        .unwrap();
    assert_eq!(plan.side_files.len(), 1, "{:?}", plan.side_files);
    let usage = std::fs::read(corpus("live/copilot/hello.usage.json")).unwrap();
    let path = corpus("live/copilot/hello.jsonl");
    let options = ReplayOptions {
        side_files: vec![(plan.side_files[0].clone(), Some(usage))],
        ..ReplayOptions::new("copilot")
    };
    let r = replay(&path, &options).unwrap();
    let usage = r.usage.expect("usage from the side file");
    assert_eq!((usage.input_tokens, usage.output_tokens), (36271, 41));
    assert!(r.unreported.is_empty(), "{:?}", r.unreported);
    assert!(r.diagnostics.is_empty(), "{:?}", r.diagnostics);

    // The CLI wrote no usage file: unknown, not zero.
    let options = ReplayOptions {
        side_files: vec![(plan.side_files[0].clone(), None)],
        ..ReplayOptions::new("copilot")
    };
    let r = replay(&path, &options).unwrap();
    assert_eq!(r.usage, None);
    assert_eq!(r.unreported.len(), 1);
}
