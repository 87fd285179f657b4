//! Golden replay of the Continue CLI recordings (`tests/corpus/live/continue`, `cn`
//! 1.5.47 against the scripted model). Stdout holds only the final reply; the run's model
//! calls, tool calls and usage are in each recording's `<scenario>.session.json` (the
//! session file), handed to the reducer as the launch plan's side file, as a live run
//! does after the CLI exits. Each capture with its session file replays without a reducer
//! error, its turn record is pinned by an insta snapshot, and the shared scenarios give
//! the same counts as on the other harnesses.

use crate::support::{captures, corpus, main_calls, tools};
use coder_eval::components::ComponentSource;
use coder_eval::results::{ToolOutcome, TurnRecord, TurnStatus};
use coder_eval::runtime::harness::Launcher;
use coder_eval::turn::replay::{ReplayOptions, replay};
use harness_kit::{AgentSettings, RunLimits};
use std::path::Path;

/// The side file the Continue launch plan names (its session file).
fn session_side_file() -> String {
    let loaded = ComponentSource::default().harness("continue").unwrap();
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
    plan.side_files[0].clone()
}

/// Replays a capture with its recorded session file (`None`: without one).
fn replay_with(path: &Path, session: Option<Vec<u8>>) -> TurnRecord {
    let options = ReplayOptions {
        side_files: vec![(session_side_file(), session)],
        ..ReplayOptions::new("continue")
    };
    replay(path, &options).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn session_of(path: &Path) -> Vec<u8> {
    let session = path.with_extension("session.json");
    std::fs::read(&session).unwrap_or_else(|e| panic!("{}: {e}", session.display()))
}

fn continue_(scenario: &str) -> TurnRecord {
    let path = corpus(&format!("live/continue/{scenario}.jsonl"));
    replay_with(&path, Some(session_of(&path)))
}

#[test]
fn every_continue_capture_replays_with_its_session_file_and_matches_its_snapshot() {
    let mut count = 0;
    for path in captures("live/continue") {
        count += 1;
        let record = replay_with(&path, Some(session_of(&path)));
        assert!(record.reducer_error.is_none(), "{}", path.display());
        assert!(record.diagnostics.is_empty(), "{:?}", record.diagnostics);
        let name = format!("continue__{}", path.file_stem().unwrap().to_str().unwrap());
        insta::assert_json_snapshot!(name, record);
    }
    assert_eq!(count, 4, "hello, parallel, tool_error, probe_hello");
}

#[test]
fn the_shared_scenarios() {
    let r = continue_("hello");
    assert_eq!((r.num_turns, main_calls(&r)), (3, 3));
    assert_eq!(
        tools(&r),
        [("Write", ToolOutcome::Ok), ("Bash", ToolOutcome::Ok)]
    );
    assert_eq!(r.commands, ["date"]);
    let usage = r.usage.expect("usage from the session file");
    assert_eq!((usage.input_tokens, usage.output_tokens), (6221, 33));
    assert!(r.unreported.is_empty(), "{:?}", r.unreported);
    assert_eq!(r.cost_usd, None, "Continue's totalCost is its own estimate");
    assert_eq!(r.cli_result.as_ref().unwrap().text.as_deref(), Some("done"));
    assert_eq!(r.final_status, TurnStatus::Completed);

    let r = continue_("parallel");
    assert_eq!((main_calls(&r), r.tool_calls.len()), (2, 2));
    assert!(r.tool_calls.iter().all(|t| t.status == ToolOutcome::Ok));

    let r = continue_("tool_error");
    assert_eq!(r.tool_calls[0].status, ToolOutcome::Error);
    assert_eq!(r.tool_calls[0].exit_code, Some(2));
    assert_eq!(r.final_status, TurnStatus::Completed);

    let r = continue_("probe_hello");
    assert_eq!((r.num_turns, r.tool_calls.len()), (3, 2));
}

/// Stdout alone says nothing of the run: without the session file the turn is a failure
/// with no calls and usage unknown, never an empty success.
#[test]
fn without_its_session_file_a_run_is_unknown() {
    let r = replay_with(&corpus("live/continue/hello.jsonl"), None);
    assert_eq!(r.usage, None);
    assert!(r.tool_calls.is_empty());
    assert_eq!(r.unreported.len(), 1, "{:?}", r.unreported);
    assert!(!r.cli_result.as_ref().unwrap().success);
}

/// Trial 14u finding 7: `coder-eval replay` of a plain Continue capture is handed its
/// session file with `--side-file PATH=FILE` (PATH as the launch plan names it) and gives
/// the completed turn, where stdout alone is a `cli_error` with no calls.
#[test]
fn replay_cli_takes_the_session_file_with_side_file() {
    let path = corpus("live/continue/hello.jsonl");
    let session = path.with_extension("session.json");
    let run = |extra: &[String]| {
        let out = std::process::Command::new(crate::support::bin())
            .arg("replay")
            .arg(&path)
            .args(["--harness", "continue", "--json"])
            .args(extra)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice::<TurnRecord>(&out.stdout).unwrap()
    };
    let alone = run(&[]);
    assert_eq!(alone.final_status, TurnStatus::CliError);
    let with = run(&[
        "--side-file".into(),
        format!("{}={}", session_side_file(), session.display()),
    ]);
    assert_eq!(
        with.final_status,
        TurnStatus::Completed,
        "{:?}",
        with.diagnostics
    );
    assert_eq!(with, continue_("hello"));
}
