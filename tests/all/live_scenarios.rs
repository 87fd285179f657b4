//! The shared neutral scenarios (tasks/scenarios/*) on every harness's real CLI against
//! the scripted model, and the parity test: the same script gives the same num_turns, the
//! same tool calls with the same statuses, the same max_turns_exhausted and the same
//! final status on every harness. One `coder-eval run` runs the whole matrix.

use crate::live_claude::{
    assert_buckets_tile, assert_model_saw_every_request, assert_replay_matches_in, netns_available,
};
use crate::support::{bin, root, scratch};
use coder_eval::results::ToolOutcome;
use coder_eval::results::{RunSummary, TaskResult, TaskStatus};
use harness_kit::Caveat;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

const HARNESSES: [&str; 12] = [
    "claude-code",
    "codex",
    "pi",
    "opencode",
    "gemini-cli",
    "qwen-code",
    "kilo",
    "cline",
    "copilot",
    "letta",
    "grok-cli",
    "continue",
];

/// The harnesses whose events reach the host only once the CLI exited (grok-cli prints its
/// transcript at the end, Continue's calls are in its session file, written at the end;
/// `harnesses --parity` says so in its stop_early row). A run the host stops (max_turns:
/// the scripted model holds call N+1 and the host ends the CLI) reports no call at all, and
/// no tool has a duration (every event comes at the same instant). Their workspace and
/// num_turns (the model's count) still agree.
pub(crate) const EVENTS_AFTER_EXIT: [&str; 2] = ["grok-cli", "continue"];
pub(crate) const SCENARIOS: [&str; 5] =
    ["hello", "parallel", "max_turns", "tool_error", "long_shell"];

/// Runs every scenario on every harness, `jobs` at a time; returns results by
/// (scenario, harness).
fn run_matrix(out: &Path, jobs: usize) -> BTreeMap<(String, String), TaskResult> {
    run_matrix_of(out, jobs, &HARNESSES, &[])
}

/// Runs every scenario on `harnesses` (with `extra` arguments to `run`), `jobs` at a time;
/// returns results by (scenario, harness).
pub(crate) fn run_matrix_of(
    out: &Path,
    jobs: usize,
    harnesses: &[&str],
    extra: &[&std::ffi::OsStr],
) -> BTreeMap<(String, String), TaskResult> {
    let mut cmd = Command::new(bin());
    cmd.arg("run");
    for s in SCENARIOS {
        cmd.arg(root().join(format!("tasks/scenarios/{s}/task.yaml")));
    }
    for h in harnesses {
        cmd.args(["--harness", h]);
    }
    cmd.args(extra);
    cmd.arg("--out")
        .arg(out)
        .args(["--jobs", &jobs.to_string()]);
    if netns_available() {
        cmd.arg("--isolate-network");
    }
    let output = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    eprintln!("{stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    let summary: RunSummary =
        serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).unwrap()).unwrap();
    assert_eq!(summary.rows.len(), SCENARIOS.len() * harnesses.len());
    let mut results = BTreeMap::new();
    for row in summary.rows {
        let r: TaskResult =
            serde_json::from_str(&std::fs::read_to_string(out.join(&row.result)).unwrap()).unwrap();
        // Every process group is gone once its task has ended.
        if let Some(pgid) = r.cli.pgid {
            assert!(
                !coder_eval::process::group_alive(pgid),
                "{} {}: group {pgid} alive",
                r.task_id,
                r.harness
            );
        }
        results.insert((row.task_id, row.harness), r);
    }
    results
}

/// What must agree across harnesses for one scenario, with the differences a harness
/// declares (its launch plan's caveats) taken out: a caveat excuses exactly its own
/// effect, nothing else.
pub(crate) fn parity_view(scenario: &str, r: &TaskResult) -> String {
    let t = r.turn.as_ref().expect("the CLI ran");
    let mut num_turns = t.num_turns;
    let mut statuses: Vec<ToolOutcome> = t.tool_calls.iter().map(|c| c.status).collect();
    let declares = |c: Caveat| r.cli.caveats.contains(&c);
    if scenario == "parallel" && declares(Caveat::ParallelCallsSerialized) {
        // One model call per tool of the parallel reply, instead of one for the reply.
        assert_eq!(num_turns as usize, statuses.len() + 1, "{}", r.harness);
        num_turns -= statuses.len() as u32 - 1;
    }
    if scenario == "tool_error" && declares(Caveat::ShellFailuresUnreported) {
        assert_eq!(statuses, [ToolOutcome::Ok], "{}", r.harness);
        statuses = vec![ToolOutcome::Error];
    }
    let mut status = r.status;
    if results_unreported(&r.harness) {
        // No tool results in the stream (declared: `TOOL_RESULTS_UNREPORTED`): a call ends
        // unknown when the next model call shows. Past max_turns the next call is held
        // before any output, so the last allowed call's tool never shows its end: it is
        // interrupted, and not a command, so `command_executed` on it fails (it ran:
        // assert_scenario reads steps.txt). The view keeps the number of calls and reads
        // each as the scenario's outcome.
        let last_cut = scenario == "max_turns";
        assert!(
            statuses
                .iter()
                .enumerate()
                .all(|(i, s)| *s == ToolOutcome::Unknown
                    || (last_cut && i + 1 == statuses.len() && *s == ToolOutcome::Interrupted)),
            "{}: {statuses:?}",
            r.harness
        );
        if last_cut && statuses.last() == Some(&ToolOutcome::Interrupted) {
            assert_eq!(status, TaskStatus::MaxTurnsExhausted, "{}", r.harness);
            status = TaskStatus::Success;
        }
        let outcome = if scenario == "tool_error" {
            ToolOutcome::Error
        } else {
            ToolOutcome::Ok
        };
        statuses = vec![outcome; statuses.len()];
    } else if scenario == "max_turns" && EVENTS_AFTER_EXIT.contains(&r.harness.as_str()) {
        // Stopped by the host: the CLI printed (or saved) none of its calls, so the
        // `command_executed` criterion finds no command and the verdict is the cap's.
        assert_eq!(statuses, [], "{}", r.harness);
        assert_eq!(status, TaskStatus::MaxTurnsExhausted, "{}", r.harness);
        statuses = vec![ToolOutcome::Ok, ToolOutcome::Ok];
        status = TaskStatus::Success;
    }
    if scenario == "long_shell" && declares(Caveat::BlockingShellRefused) {
        // `sleep 3 && echo slept` is refused unrun ("Blocked: …"): `denied` (it was
        // `error` until refusals that never ran were told apart, issue 16) instead of the
        // 3 s run. A call that never ran is no command, so `command_executed` on `sleep 3`
        // rightly fails: FAILURE instead of SUCCESS, the same caveat's effect.
        assert_eq!(statuses, [ToolOutcome::Denied], "{}", r.harness);
        assert_eq!(status, TaskStatus::Failure, "{}", r.harness);
        statuses = vec![ToolOutcome::Ok];
        status = TaskStatus::Success;
    }
    format!(
        "num_turns={num_turns} tools={statuses:?} max_turns_exhausted={} status={status:?}",
        t.max_turns_exhausted
    )
}

#[test]
fn scenarios_on_every_harness_and_parity() {
    let out = scratch("live-scenarios");
    let results = run_matrix(&out, 2);
    let mut failures = Vec::new();
    for s in SCENARIOS {
        let views: Vec<(String, String)> = HARNESSES
            .iter()
            .map(|h| {
                (
                    h.to_string(),
                    parity_view(s, &results[&(s.to_string(), h.to_string())]),
                )
            })
            .collect();
        let first = &views[0].1;
        if views.iter().any(|(_, v)| v != first) {
            failures.push(format!(
                "{s}:\n{}",
                views
                    .iter()
                    .map(|(h, v)| format!("  {h:<12} {v}"))
                    .collect::<Vec<_>>()
                    .join("\n")
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "parity broken:\n{}",
        failures.join("\n")
    );

    for ((scenario, harness), r) in &results {
        assert_scenario(&out, scenario, harness, r, None);
    }
}

/// The matrix on Copilot CLI alone beside Cline (a quicker check than the whole matrix
/// when only the Copilot harness changed): every scenario holds and their parity views
/// agree.
#[test]
fn copilot_scenarios_and_parity_with_cline() {
    let out = scratch("live-scenarios-copilot");
    let results = run_matrix_of(&out, 2, &["cline", "copilot"], &[]);
    for s in SCENARIOS {
        let view = |h: &str| parity_view(s, &results[&(s.to_string(), h.to_string())]);
        assert_eq!(view("copilot"), view("cline"), "{s}");
    }
    // Copilot's tokens are only in its usage file (the plan's side file), read after exit.
    let hello = results[&("hello".to_string(), "copilot".to_string())]
        .turn
        .as_ref()
        .unwrap();
    let usage = hello.usage.expect("tokens from the usage file");
    assert!(
        usage.input_tokens > 0 && usage.output_tokens > 0,
        "{usage:?}"
    );
    assert!(hello.unreported.is_empty(), "{:?}", hello.unreported);
    for ((scenario, harness), r) in &results {
        assert_scenario(&out, scenario, harness, r, None);
    }
}

/// Whether `harness`'s stream carries no tool results (its calls all end unknown).
fn results_unreported(harness: &str) -> bool {
    coder_eval::components::TOOL_RESULTS_UNREPORTED
        .iter()
        .any(|(h, _)| *h == harness)
}

/// A tool call's outcome as a scenario expects `ok`: `unknown` on a harness whose stream
/// has no tool results (or `interrupted` where its end cannot show, `cut`: the last
/// allowed call's tool past max_turns).
fn ok_or_unreported(harness: &str, status: ToolOutcome, cut: bool) -> bool {
    status == ToolOutcome::Ok
        || (results_unreported(harness)
            && (status == ToolOutcome::Unknown || (cut && status == ToolOutcome::Interrupted)))
}

/// The matrix on Letta Code alone beside Cline: every scenario holds and their parity
/// views agree, Letta Code's unknown tool outcomes read as declared.
#[test]
fn letta_scenarios_and_parity_with_cline() {
    let out = scratch("live-scenarios-letta");
    let results = run_matrix_of(&out, 2, &["cline", "letta"], &[]);
    for s in SCENARIOS {
        let view = |h: &str| parity_view(s, &results[&(s.to_string(), h.to_string())]);
        assert_eq!(view("letta"), view("cline"), "{s}");
    }
    // Usage from each request's usage_statistics; the outcome of a tool is never `ok`.
    let hello = results[&("hello".to_string(), "letta".to_string())]
        .turn
        .as_ref()
        .unwrap();
    let usage = hello.usage.expect("usage_statistics");
    assert!(
        usage.input_tokens > 0 && usage.output_tokens > 0,
        "{usage:?}"
    );
    assert!(
        hello
            .tool_calls
            .iter()
            .all(|c| c.status == ToolOutcome::Unknown),
        "{:?}",
        hello.tool_calls
    );
    for ((scenario, harness), r) in &results {
        assert_scenario(&out, scenario, harness, r, None);
    }
}

/// The matrix on grok-cli and Continue beside Cline (a quicker check than the whole matrix
/// when only these harnesses changed): every scenario holds and their parity views agree
/// with Cline's, max_turns taken as [`EVENTS_AFTER_EXIT`] says. grok reports no tokens
/// (unknown, never 0); Continue's come from its session file, the plan's side file.
#[test]
fn grok_and_continue_scenarios_and_parity_with_cline() {
    let out = scratch("live-scenarios-grok-continue");
    let results = run_matrix_of(&out, 2, &["cline", "grok-cli", "continue"], &[]);
    for s in SCENARIOS {
        let view = |h: &str| parity_view(s, &results[&(s.to_string(), h.to_string())]);
        assert_eq!(view("grok-cli"), view("cline"), "{s}");
        assert_eq!(view("continue"), view("cline"), "{s}");
    }
    let hello = |h: &str| {
        results[&("hello".to_string(), h.to_string())]
            .turn
            .clone()
            .unwrap()
    };
    let grok = hello("grok-cli");
    assert_eq!(grok.usage, None, "grok reports no tokens");
    assert_eq!(grok.unreported.len(), 1, "{:?}", grok.unreported);
    let cont = hello("continue");
    let usage = cont.usage.expect("tokens from the session file");
    assert!(
        usage.input_tokens > 0 && usage.output_tokens > 0,
        "{usage:?}"
    );
    assert!(cont.unreported.is_empty(), "{:?}", cont.unreported);
    for ((scenario, harness), r) in &results {
        assert_scenario(&out, scenario, harness, r, None);
    }
}

/// The matrix on the installed Claude Code beside Codex (a quicker check than the whole
/// matrix when the Claude Code pin moves): every scenario holds, their parity views agree,
/// and each run says which version it saw: `task.json`'s `cli.version` (`--version`) is
/// the one the stream's `system/init` names, noted as `unchecked_cli_version` exactly when
/// it is newer than the harness's `CHECKED_VERSIONS`.
#[test]
fn claude_code_scenarios_and_parity_with_codex() {
    use claude_code_harness::ClaudeCode;
    use harness_kit::Harness;
    use harness_kit::version::{parse_version, unchecked_note};
    let out = scratch("live-scenarios-claude");
    let results = run_matrix_of(&out, 2, &["codex", "claude-code"], &[]);
    for s in SCENARIOS {
        let view = |h: &str| parity_view(s, &results[&(s.to_string(), h.to_string())]);
        assert_eq!(view("claude-code"), view("codex"), "{s}");
        let r = &results[&(s.to_string(), "claude-code".to_string())];
        let seen = r.turn.as_ref().unwrap().cli_version.clone().expect("init");
        let cli = r.cli.version.as_deref().expect("--version");
        assert_eq!(
            parse_version(cli),
            parse_version(&seen),
            "{s}: {cli} vs {seen}"
        );
        let noted = r.turn.as_ref().unwrap().diagnostics.iter();
        let noted = noted.filter(|d| d.kind == "unchecked_cli_version").count();
        let newer = unchecked_note(&seen, ClaudeCode::CHECKED_VERSIONS, b"").is_some();
        assert_eq!(noted, usize::from(newer), "{s}: {seen}");
    }
    for ((scenario, harness), r) in &results {
        assert_scenario(&out, scenario, harness, r, None);
    }
}

/// What each scenario's run must show on any harness, its declared caveats taken into
/// account.
pub(crate) fn assert_scenario(
    out: &Path,
    scenario: &str,
    harness: &str,
    r: &TaskResult,
    components: Option<&Path>,
) {
    {
        let t = r.turn.as_ref().unwrap();
        let what = format!("{scenario} on {harness}");
        assert_buckets_tile(t);
        assert_model_saw_every_request(r);
        assert_replay_matches_in(out, r, components);
        match scenario {
            "hello" => {
                assert_eq!(r.status, TaskStatus::Success, "{what}: {:?}", r.error);
                assert_eq!(t.num_turns, 3, "{what}");
                assert_eq!(t.tool_calls.len(), 2, "{what}");
            }
            "parallel" => {
                assert_eq!(t.tool_calls.len(), 2, "{what}");
                assert!(
                    t.tool_calls
                        .iter()
                        .all(|c| ok_or_unreported(harness, c.status, false)),
                    "{what}"
                );
                if !r.cli.caveats.contains(&Caveat::ParallelCallsSerialized) {
                    assert_eq!(t.num_turns, 2, "{what}");
                }
            }
            "max_turns" => {
                assert_eq!(t.num_turns, 3, "{what}");
                assert!(t.max_turns_exhausted, "{what}");
                // Call 3's command never ran, whether the CLI or the host capped the run
                // (the scripted model holds call 3 where it begins).
                let steps = std::fs::read_to_string(
                    out.join("max_turns")
                        .join(harness)
                        .join("workspace/steps.txt"),
                )
                .unwrap_or_default();
                assert_eq!(steps, "step 1\nstep 2\n", "{what}");
                if EVENTS_AFTER_EXIT.contains(&harness) {
                    // The run was stopped before the CLI reported anything.
                    assert!(t.tool_calls.is_empty(), "{what}");
                    return;
                }
                assert_eq!(
                    t.tool_calls.len(),
                    2,
                    "{what}: the two allowed calls' tools ran"
                );
                assert!(
                    t.tool_calls
                        .iter()
                        .all(|c| ok_or_unreported(harness, c.status, true)),
                    "{what}"
                );
            }
            "tool_error" if results_unreported(harness) => {
                assert_eq!(t.tool_calls.len(), 1, "{what}");
                assert_eq!(t.tool_calls[0].status, ToolOutcome::Unknown, "{what}");
                assert_eq!(t.tool_calls[0].exit_code, None, "{what}");
            }
            "tool_error" => {
                assert_eq!(t.tool_calls.len(), 1, "{what}");
                if !r.cli.caveats.contains(&Caveat::ShellFailuresUnreported) {
                    assert_eq!(t.tool_calls[0].status, ToolOutcome::Error, "{what}");
                    assert_eq!(t.tool_calls[0].exit_code.unwrap_or(2), 2, "{what}");
                }
            }
            "long_shell" if r.cli.caveats.contains(&Caveat::BlockingShellRefused) => {
                let c = &t.tool_calls[0];
                // Refused before it ran: denied (an error before issue 16), so not a
                // command, and the run fails its `command_executed` criterion.
                assert_eq!(c.status, ToolOutcome::Denied, "{what}");
                assert!(c.output_excerpt.starts_with("Blocked: "), "{what}");
                assert!(c.duration_ms < 3000, "{what}: it never ran");
                assert!(t.commands.is_empty(), "{what}: {:?}", t.commands);
                assert_eq!(r.status, TaskStatus::Failure, "{what}");
            }
            "long_shell" if EVENTS_AFTER_EXIT.contains(&harness) => {
                // Every event comes once the CLI exited: the call has no duration to check.
                assert_eq!(t.tool_calls.len(), 1, "{what}");
                assert_eq!(t.tool_calls[0].status, ToolOutcome::Ok, "{what}");
                assert_eq!(t.commands, ["sleep 3 && echo slept"], "{what}");
                assert_eq!(r.status, TaskStatus::Success, "{what}");
            }
            "long_shell" => {
                let c = &t.tool_calls[0];
                // A declared reporting lag shortens the interval by a fraction of a second.
                let least = if r.cli.caveats.contains(&Caveat::ToolStartReportedLate) {
                    2500
                } else {
                    3000
                };
                assert!(c.duration_ms >= least, "{what}: {} ms", c.duration_ms);
                assert!(
                    c.finished_ms.unwrap() <= t.timing.turn_duration_ms,
                    "{what}"
                );
                assert!(t.timing.tool_union_ms.unwrap() >= least, "{what}");
            }
            _ => unreachable!(),
        }
    }
}

#[test]
fn five_clis_at_once_leave_no_process_behind() {
    let out = scratch("live-concurrent");
    let mut cmd = Command::new(bin());
    cmd.arg("run")
        .arg(root().join("tasks/scenarios/long_shell/task.yaml"));
    for h in HARNESSES {
        cmd.args(["--harness", h]);
    }
    cmd.arg("--out").arg(&out).args(["--jobs", "5"]);
    if netns_available() {
        cmd.arg("--isolate-network");
    }
    let output = cmd.output().unwrap();
    // Every task ran: the run exits 0, or 1 (a task failed) only for the reason checked
    // below, never with an error.
    assert!(
        matches!(
            output.status.code(),
            Some(coder_eval::exit_codes::OK | coder_eval::exit_codes::FAILED)
        ),
        "{}",
        String::from_utf8_lossy(&output.stdout)
    );
    let summary: RunSummary =
        serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).unwrap()).unwrap();
    assert_eq!(summary.rows.len(), HARNESSES.len());
    for row in &summary.rows {
        let r: TaskResult =
            serde_json::from_str(&std::fs::read_to_string(out.join(&row.result)).unwrap()).unwrap();
        // A CLI that refuses `sleep 3 && …` unrun (Qwen Code's declared caveat): that call
        // is denied, no command, so the task fails its `command_executed` criterion (it
        // passed while the refusal was recorded as an error; issue 16). Every other passes.
        let expected = if r.cli.caveats.contains(&Caveat::BlockingShellRefused) {
            TaskStatus::Failure
        } else {
            TaskStatus::Success
        };
        assert_eq!(r.status, expected, "{}", r.harness);
        let pgid = r.cli.pgid.expect("the CLI started");
        assert!(
            coder_eval::process::group_members(pgid).is_empty(),
            "{}: group {pgid} alive",
            r.harness
        );
    }
}
