//! `max_tool_calls` holds tool call N+1 on every harness's real CLI against the scripted
//! model (tasks/scenarios/max_tool_calls{,_straddle}): the scripted model never sends the
//! reply that would take the tool calls handed out past the cap, so tool N+1 never runs
//! (its marker file does not exist), the turn stops with `max_tool_calls`, and a replay of
//! the recording reaches the same record (the held call is recorded with its reason).

use crate::live_claude::{assert_replay_matches, netns_available, run_task};
use crate::support::{bin, root, scratch};
use coder_eval::results::{RunSummary, StopReason, TaskResult, TotalsStatus, TurnStatus};
use std::path::Path;
use std::process::Command;

const HARNESSES: [&str; 5] = ["claude-code", "codex", "pi", "opencode", "gemini-cli"];
const SCENARIOS: [&str; 2] = ["max_tool_calls", "max_tool_calls_straddle"];

fn workspace_file(out: &Path, scenario: &str, harness: &str, file: &str) -> Option<String> {
    std::fs::read_to_string(
        out.join(scenario)
            .join(harness)
            .join("workspace")
            .join(file),
    )
    .ok()
}

#[test]
fn max_tool_calls_holds_tool_n_plus_one_on_every_harness() {
    let out = scratch("live-max-tool-calls");
    let mut cmd = Command::new(bin());
    cmd.arg("run");
    for s in SCENARIOS {
        cmd.arg(root().join(format!("tasks/scenarios/{s}/task.yaml")));
    }
    for h in HARNESSES {
        cmd.args(["--harness", h]);
    }
    cmd.arg("--out").arg(&out).args(["--jobs", "2"]);
    if netns_available() {
        cmd.arg("--isolate-network");
    }
    let output = cmd.output().unwrap();
    eprintln!(
        "{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let summary: RunSummary =
        serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).unwrap()).unwrap();
    assert_eq!(summary.rows.len(), SCENARIOS.len() * HARNESSES.len());
    for row in summary.rows {
        let r: TaskResult =
            serde_json::from_str(&std::fs::read_to_string(out.join(&row.result)).unwrap()).unwrap();
        let what = format!("{} on {}", row.task_id, row.harness);
        let t = r
            .turn
            .as_ref()
            .unwrap_or_else(|| panic!("{what}: {:?}", r.error));
        // Tool N+1 never ran: the file it would have written does not exist.
        assert_eq!(
            workspace_file(&out, &row.task_id, &row.harness, "marker.txt"),
            None,
            "{what}: the held tool call ran"
        );
        assert_eq!(
            r.stop.as_ref().map(|s| s.reason),
            Some(StopReason::MaxToolCalls),
            "{what}"
        );
        assert!(t.max_tool_calls_exhausted, "{what}");
        assert!(!t.max_turns_exhausted, "{what}");
        assert_eq!(t.final_status, TurnStatus::MaxToolCallsExhausted, "{what}");
        let requests = r.scripted_model_requests.as_ref().expect("scripted");
        let held: Vec<_> = requests.iter().filter(|q| q["status"] == 503).collect();
        assert!(
            held.iter().all(|q| q["error"]
                .as_str()
                .is_some_and(|e| e.contains("max_tool_calls"))),
            "{what}: {held:?}"
        );
        let steps = workspace_file(&out, &row.task_id, &row.harness, "steps.txt");
        if row.task_id == "max_tool_calls" {
            // Exactly N: both allowed tools ran, the held request is call 3.
            assert_eq!(t.tool_calls.len(), 2, "{what}");
            assert_eq!(steps.as_deref(), Some("step 1\nstep 2\n"), "{what}");
            assert_eq!(t.num_turns, 3, "{what}");
        } else {
            // The straddling reply is held whole: one tool ran, not two.
            assert_eq!(t.tool_calls.len(), 1, "{what}");
            assert_eq!(steps.as_deref(), Some("step 1\n"), "{what}");
            assert_eq!(t.num_turns, 2, "{what}");
        }
        assert_replay_matches(&out, &r);
        let recording = std::fs::read_to_string(
            out.join(&row.task_id)
                .join(&row.harness)
                .join("recording.jsonl"),
        )
        .unwrap();
        assert!(
            recording.contains(r#""reason":"max_tool_calls""#),
            "{what}: the held call is recorded with its reason"
        );
    }
}

/// `max_tool_calls` counts every thread of the run, on Claude Code's real CLI, with and
/// without the gateway in front (tasks/run_limits/max_tool_calls_subagent, cap 2): the
/// main thread runs `echo ran` (call 1) and starts a sub-agent (call 2); the sub-agent's
/// history restarts the script at reply 0, whose `echo ran` would be call 3, so the
/// scripted model holds it. One line in steps.txt, stop reason `max_tool_calls`. Before
/// the count was kept over the run, the sub-agent (and the sub-agents it started) ran
/// the command again: six lines. The sub-agent was stopped mid-work, so the totals are
/// `partial`.
#[test]
fn max_tool_calls_counts_a_claude_code_sub_agents_tool_calls() {
    for gateway in [false, true] {
        let out = scratch(&format!("live-max-tool-calls-subagent-{gateway}"));
        let extra: &[&str] = if gateway { &["--gateway"] } else { &[] };
        let r = run_task(
            "tasks/run_limits/max_tool_calls_subagent/task.yaml",
            "claude-code",
            &out,
            extra,
        );
        let what = format!("gateway {gateway}");
        let t = r
            .turn
            .as_ref()
            .unwrap_or_else(|| panic!("{what}: {:?}", r.error));
        assert_eq!(
            workspace_file(&out, &r.task_id, "claude-code", "steps.txt").as_deref(),
            Some("ran\n"),
            "{what}: a tool call past the cap ran"
        );
        assert_eq!(
            r.stop.as_ref().map(|s| s.reason),
            Some(StopReason::MaxToolCalls),
            "{what}"
        );
        assert!(t.max_tool_calls_exhausted, "{what}");
        assert!(t.tool_calls.len() <= 2, "{what}: {:?}", t.tool_calls);
        let requests = r.scripted_model_requests.as_ref().expect("scripted");
        let held: Vec<_> = requests.iter().filter(|q| q["status"] == 503).collect();
        assert_eq!(held.len(), 1, "{what}: {requests:?}");
        assert!(
            held[0]["error"]
                .as_str()
                .is_some_and(|e| e.contains("max_tool_calls")),
            "{what}: {held:?}"
        );
        // The held request is the sub-agent's first (its own history, turn index 0).
        assert_eq!(held[0]["turn"], 0, "{what}: {held:?}");
        let cost: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(out.join(&r.task_id).join("claude-code/cost.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(cost["usage_status"], "partial", "{what}: {cost}");
        assert_ne!(t.totals, TotalsStatus::Complete, "{what}");
        assert_replay_matches(&out, &r);
    }
}

/// A run whose sub-agents' tokens Claude Code leaves out of its figures is `partial`, not
/// complete, even when it ends with its result (the same script without a cap: the
/// sub-agent and the sub-agents it starts each run `echo ran`; Claude Code 2.1.197's
/// result `usage` is the main thread's only, and the nested sub-agents print no lines).
/// Before, cost.json said `complete` for both.
#[test]
fn a_claude_code_runs_sub_agent_work_makes_its_totals_partial() {
    let out = scratch("live-subagent-partial");
    let script = root().join("tasks/run_limits/max_tool_calls_subagent/script.yaml");
    let task = out.join("subagent_partial.yaml");
    std::fs::write(
        &task,
        format!(
            "task_id: subagent_partial\ninitial_prompt: Run echo ran, then start a sub-agent.\n\
             agent: {{type: claude-code, scripted_model: {}}}\nrun_limits: {{turn_timeout: 120}}\n",
            script.display()
        ),
    )
    .unwrap();
    let output = Command::new(bin())
        .arg("run")
        .arg(&task)
        .args(["--harness", "claude-code", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    let dir = out.join("subagent_partial/claude-code");
    let text = std::fs::read_to_string(dir.join("task.json")).unwrap_or_else(|e| {
        panic!("{e}: {}", String::from_utf8_lossy(&output.stderr));
    });
    let r: TaskResult = serde_json::from_str(&text).unwrap();
    let t = r.turn.as_ref().expect("a turn");
    assert!(r.stop.is_none(), "the CLI ended by itself: {:?}", r.stop);
    let steps = std::fs::read_to_string(dir.join("workspace/steps.txt")).unwrap();
    assert!(steps.lines().count() >= 2, "a sub-agent ran: {steps:?}");
    let agent = t
        .tool_calls
        .iter()
        .find(|c| c.name == "Agent")
        .expect("the Agent call");
    assert!(
        t.unreported
            .iter()
            .any(|u| u.call_id.as_deref() == Some(agent.call_id.as_str())),
        "{:?}",
        t.unreported
    );
    assert_eq!(t.totals, TotalsStatus::Partial);
    let cost: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("cost.json")).unwrap()).unwrap();
    assert_eq!(cost["usage_status"], "partial", "{cost}");
    assert_eq!(cost["cost_status"], "partial", "{cost}");
    assert_replay_matches(&out, &r);
}

/// Identical twin sub-agents count apart (tasks/run_limits/max_tool_calls_twins, cap 4):
/// the main thread runs `echo ran` (call 1) and starts two sub-agents with the same
/// prompt (calls 2 and 3). Their first requests are the same history; the first twin's
/// `echo ran` is call 4, the other's would be call 5, so it is held: at most two lines
/// in steps.txt, the held request a twin's first (turn index 0). Before, the second twin's
/// request was taken for a retry of the first: answered, not counted, three lines.
#[test]
fn max_tool_calls_counts_identical_twin_sub_agents_apart() {
    let out = scratch("live-max-tool-calls-twins");
    let r = run_task(
        "tasks/run_limits/max_tool_calls_twins/task.yaml",
        "claude-code",
        &out,
        &[],
    );
    let t = r.turn.as_ref().unwrap_or_else(|| panic!("{:?}", r.error));
    let steps = workspace_file(&out, &r.task_id, "claude-code", "steps.txt").unwrap_or_default();
    assert!(
        steps.lines().count() <= 2,
        "a twin's tool call past the cap ran: {steps:?}"
    );
    assert_eq!(
        r.stop.as_ref().map(|s| s.reason),
        Some(StopReason::MaxToolCalls)
    );
    assert!(t.max_tool_calls_exhausted);
    let requests = r.scripted_model_requests.as_ref().expect("scripted");
    let held: Vec<_> = requests
        .iter()
        .filter(|q| {
            q["status"] == 503
                && q["error"]
                    .as_str()
                    .is_some_and(|e| e.contains("max_tool_calls"))
        })
        .collect();
    assert!(!held.is_empty(), "{requests:#?}");
    assert_eq!(held[0]["turn"], 0, "{held:?}");
    assert!(
        held[0]["error"]
            .as_str()
            .is_some_and(|e| e.contains("(4 handed out before it)")),
        "{held:?}"
    );
}
