//! A call to a tool the CLI does not have never ran (tasks/scenarios/unknown_tool), on
//! all 9 built-in harnesses' real CLIs against the scripted model: it is `denied` (Codex
//! does not show it at all), not in `turn.commands`, and `command_executed` does not count
//! it; a replay of each recording gives the same record. Each CLI says so its own way:
//! Claude Code "No such tool available", Qwen Code "not found in registry", OpenCode its
//! `invalid` tool, Kilo and Cline the AI SDK's "Model tried to call unavailable tool"
//! (Cline: "… was rejected before execution"), Pi and Gemini CLI their own texts.

use crate::live_claude::{assert_replay_matches, run_on_harnesses};
use crate::support::scratch;
use coder_eval::results::{TaskStatus, ToolOutcome};

const HARNESSES: [&str; 9] = [
    "claude-code",
    "codex",
    "pi",
    "opencode",
    "gemini-cli",
    "qwen-code",
    "kilo",
    "cline",
    "copilot",
];

#[test]
fn a_call_to_a_tool_that_does_not_exist_is_no_command_on_every_harness() {
    let out = scratch("live-unknown-tool");
    let results = run_on_harnesses(
        &["tasks/scenarios/unknown_tool/task.yaml"],
        &HARNESSES,
        &out,
        3,
    );
    for (row, r) in &results {
        let what = &row.harness;
        let t = r
            .turn
            .as_ref()
            .unwrap_or_else(|| panic!("{what}: {:?}", r.error));
        assert_replay_matches(&out, r);
        // The call the model made to `no_such_tool` (OpenCode answers it with its own
        // `invalid` tool, naming it; Kilo, its fork, shows the call itself, errored):
        // denied wherever the stream shows it.
        let ghost: Vec<_> = t
            .tool_calls
            .iter()
            .filter(|c| c.name == "no_such_tool" || c.input.to_string().contains("no_such_tool"))
            .collect();
        if what != "codex" {
            assert_eq!(ghost.len(), 1, "{what}: {:#?}", t.tool_calls);
        }
        for c in ghost {
            assert_eq!(c.status, ToolOutcome::Denied, "{what}: {c:#?}");
        }
        assert!(
            !t.commands.iter().any(|c| c.contains("echo ghost")),
            "{what}: {:?}",
            t.commands
        );
        assert!(
            t.commands.iter().any(|c| c.contains("echo real")),
            "{what}: {:?}",
            t.commands
        );
        assert_eq!(r.status, TaskStatus::Success, "{what}: {:#?}", r.criteria);
    }
}
