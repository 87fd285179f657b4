//! The model gateway on the five real CLIs (`run --gateway`), with the scripted model as
//! its upstream (CLI → gateway → scripted model): the shared scenarios give the results
//! they give direct, with exact call counts and no parity caveat for Codex's parallel
//! calls; call N+1 is held at the gateway; every call is a `model_call` record with its
//! time to first token; a 429 reaches the CLI, which retries; a stalled upstream is still
//! stopped by the turn timeout; an unreachable upstream is a clear diagnostic.

use crate::live_claude::{
    assert_buckets_tile, assert_replay_matches, run_on_harnesses_with, run_task,
};
use crate::support::scratch;
use coder_eval::gateway::{CallKind, ModelCall};
use coder_eval::results::{StopReason, TaskResult, TaskStatus, ToolOutcome};
use std::collections::BTreeMap;
use std::path::Path;

const HARNESSES: [&str; 5] = ["claude-code", "codex", "pi", "opencode", "gemini-cli"];
const SCENARIOS: [&str; 4] = ["hello", "parallel", "max_turns", "tool_error"];

/// The `model_call` records of a task's recording, in order.
fn model_calls(out: &Path, r: &TaskResult) -> Vec<ModelCall> {
    let path = out
        .join(&r.task_id)
        .join(&r.harness)
        .join("recording.jsonl");
    let text = std::fs::read_to_string(&path).unwrap();
    let header: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(header["gateway"], true, "{}", path.display());
    text.lines()
        .filter(|l| l.starts_with(r#"{"t":"model_call""#))
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Every request the gateway forwarded reached the scripted model, and only those (not a
/// held call, nor one refused after the host's stop): the
/// scripted model's own log (phone-home attempts go to it directly, not through the
/// gateway) has exactly the gateway's forwarded requests, main and side alike.
fn assert_exact_counts(r: &TaskResult, calls: &[ModelCall]) {
    let requests = r
        .scripted_model_requests
        .as_ref()
        .expect("a scripted model");
    let kind = |k: &str| requests.iter().filter(|q| q["kind"] == k).count();
    // Held calls and those the host's stop refused on arrival were never forwarded (one
    // the stop cut under way was).
    let forwarded = |k: CallKind| {
        calls
            .iter()
            .filter(|c| c.kind == k && c.forwarded())
            .count()
    };
    let what = format!("{} on {}", r.task_id, r.harness);
    assert_eq!(
        forwarded(CallKind::Main),
        kind("main"),
        "{what}: {calls:#?}"
    );
    assert_eq!(forwarded(CallKind::Side), kind("side"), "{what}");
    assert!(
        requests.iter().all(|q| q["kind"] != "unknown"),
        "{what}: {requests:#?}"
    );
    // No call held by the scripted model itself: the gateway holds.
    assert!(requests.iter().all(|q| q["status"] != 503), "{what}");
}

#[test]
fn scenarios_through_the_gateway_on_every_harness() {
    let out = scratch("live-gateway");
    let tasks: Vec<String> = SCENARIOS
        .iter()
        .map(|s| format!("tasks/scenarios/{s}/task.yaml"))
        .collect();
    let tasks: Vec<&str> = tasks.iter().map(String::as_str).collect();
    let run = run_on_harnesses_with(&tasks, &HARNESSES, &out, 2, |cmd| {
        cmd.arg("--gateway");
    });
    let mut views: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
    for (_, r) in run.rows {
        let t = r.turn.as_ref().expect("the CLI ran");
        let what = format!("{} on {}", r.task_id, r.harness);
        let g = t.gateway.as_ref().expect("the gateway's view");
        let calls = model_calls(&out, &r);
        assert_exact_counts(&r, &calls);
        assert_buckets_tile(t);
        // Replay reads the calls back and gives the live record, byte for byte.
        assert_replay_matches(&out, &r);
        // The gateway's count is the turn's; the stream agrees with it, except where a
        // CLI shows one reply's parallel calls as separate replies (Codex): then the
        // cross-check says so.
        assert_eq!(t.num_turns, g.num_turns, "{what}");
        let disagree = t
            .diagnostics
            .iter()
            .filter(|d| d.kind == "gateway_turns_disagree")
            .count();
        if r.harness == "codex" && r.task_id == "parallel" {
            assert_eq!(g.reducer_num_turns, 3, "{what}: the stream's count");
            assert_eq!(disagree, 1, "{what}: {:?}", t.diagnostics);
        } else {
            assert_eq!(
                g.reducer_num_turns, g.num_turns,
                "{what}: {:?}",
                t.diagnostics
            );
            assert_eq!(disagree, 0, "{what}");
        }
        assert!(
            !t.diagnostics
                .iter()
                .any(|d| d.kind == "gateway_upstream_error"),
            "{what}: {:?}",
            t.diagnostics
        );
        // Every answered main call has its time to first token (a held call, or one the
        // host's stop refused, was not answered).
        let answered = calls
            .iter()
            .filter(|c| c.kind == CallKind::Main && !c.held && !c.stopped)
            .count();
        assert_eq!(g.ttft_ms.len(), answered, "{what}");
        for c in calls.iter().filter(|c| !c.held && !c.stopped) {
            assert!(c.first_byte_us >= Some(c.us), "{what}: {c:?}");
            assert!(c.end_us >= c.first_byte_us, "{what}: {c:?}");
            assert!(c.request_body.is_none(), "bodies are off by default");
        }
        // The scripted model reports usage on every answer: the turn's usage is the APIs'.
        assert_eq!(t.usage_source, "gateway", "{what}");
        assert!(t.usage.unwrap().input_tokens > 0, "{what}");
        // No parity caveat is needed: the same view on every harness, Codex included.
        let statuses: Vec<ToolOutcome> = t.tool_calls.iter().map(|c| c.status).collect();
        let view = format!(
            "num_turns={} tools={} max_turns_exhausted={} status={:?}",
            t.num_turns,
            statuses.len(),
            t.max_turns_exhausted,
            r.status
        );
        views
            .entry(r.task_id.clone())
            .or_default()
            .push((r.harness.clone(), view));
        match r.task_id.as_str() {
            "hello" => {
                assert_eq!(r.status, TaskStatus::Success, "{what}: {:?}", r.error);
                assert_eq!((t.num_turns, t.tool_calls.len()), (3, 2), "{what}");
            }
            "parallel" => {
                // One reply holding two tool calls is one model call on every CLI.
                assert_eq!((t.num_turns, t.tool_calls.len()), (2, 2), "{what}");
                assert_eq!(g.num_turns, 2, "{what}");
            }
            "max_turns" => {
                assert_eq!(t.num_turns, 3, "{what}");
                assert!(t.max_turns_exhausted, "{what}");
                let steps = std::fs::read_to_string(
                    out.join("max_turns")
                        .join(&r.harness)
                        .join("workspace/steps.txt"),
                )
                .unwrap_or_default();
                assert_eq!(
                    steps, "step 1\nstep 2\n",
                    "{what}: call 3's command never ran"
                );
                // Call 3 was never forwarded: held at the gateway, or refused because the
                // host had already decided the stop (`stopped`), unless the CLI's own cap
                // stopped it before it asked.
                let not_forwarded = |c: &ModelCall| c.held || c.stopped;
                if r.stop
                    .as_ref()
                    .is_some_and(|s| s.reason == StopReason::MaxTurns)
                {
                    assert!(g.held || calls.iter().any(|c| c.stopped), "{what}");
                    assert!(
                        calls.iter().any(|c| not_forwarded(c) && c.turn == Some(2)),
                        "{what}"
                    );
                }
                assert!(
                    calls.iter().all(|c| not_forwarded(c) || c.turn < Some(2)),
                    "{what}"
                );
            }
            "tool_error" => assert_eq!(t.tool_calls.len(), 1, "{what}"),
            _ => unreachable!(),
        }
    }
    let mut broken = Vec::new();
    for (scenario, list) in &views {
        if list.iter().any(|(_, v)| v != &list[0].1) {
            broken.push(format!("{scenario}: {list:#?}"));
        }
    }
    assert!(broken.is_empty(), "parity broken:\n{}", broken.join("\n"));
}

/// A script: `first` as reply 1, then hello's two replies.
fn script(dir: &Path, first: &str) -> String {
    let path = dir.join("script.yaml");
    std::fs::write(
        &path,
        format!(
            "name: gw\nreplies:\n  - {first}\n  - tool_calls: [{{shell: {{command: date}}}}]\n  - text: done\n"
        ),
    )
    .unwrap();
    path.display().to_string()
}

#[test]
fn an_upstream_429_reaches_the_cli_which_retries() {
    let out = scratch("live-gateway-429");
    let script = script(
        &out,
        "{http_error: {status: 429, message: slow down, times: 1}, text: ok, tool_calls: [{write_file: {path: hello.txt, content: \"hi\\n\"}}]}",
    );
    let r = run_task(
        "tasks/scenarios/hello/task.yaml",
        "claude-code",
        &out,
        &["--gateway", "--scripted-model", &script],
    );
    assert_eq!(r.status, TaskStatus::Success, "{:?}", r.error);
    let calls = model_calls(&out, &r);
    let main: Vec<_> = calls.iter().filter(|c| c.kind == CallKind::Main).collect();
    assert_eq!(main[0].status, Some(429), "{calls:#?}");
    assert_eq!(main[1].status, Some(200), "{calls:#?}");
    assert_eq!(main[0].turn, main[1].turn, "the retry is the same call");
    let t = r.turn.as_ref().unwrap();
    // The retry is not a turn: three calls, as without the error.
    assert_eq!(t.num_turns, 3);
    assert_eq!(t.gateway.as_ref().unwrap().error_responses, 1);
    assert_replay_matches(&out, &r);
}

#[test]
fn a_stalled_upstream_is_stopped_by_the_turn_timeout() {
    let out = scratch("live-gateway-stall");
    let script = script(&out, "{delay_ms: 600000, text: never}");
    let started = std::time::Instant::now();
    let r = run_task(
        "tasks/scenarios/hello/task.yaml",
        "claude-code",
        &out,
        &[
            "--gateway",
            "--scripted-model",
            &script,
            "-D",
            "run_limits.turn_timeout=8",
        ],
    );
    assert!(started.elapsed().as_secs() < 60);
    assert_eq!(
        r.stop.as_ref().map(|s| s.reason),
        Some(StopReason::TurnTimeout),
        "{r:#?}"
    );
    let calls = model_calls(&out, &r);
    let stalled = calls
        .iter()
        .find(|c| c.kind == CallKind::Main)
        .expect("the first call");
    // Never answered: no first byte, no status from upstream, and the record says why
    // (the gateway closed, or the stopped CLI's connection went first).
    assert_eq!(stalled.first_byte_us, None, "{stalled:?}");
    assert_ne!(stalled.status, Some(200), "{stalled:?}");
    assert!(stalled.error.is_some(), "{stalled:?}");
}

#[test]
fn an_unreachable_upstream_is_a_clear_diagnostic() {
    let out = scratch("live-gateway-refused");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let upstream = format!("http://127.0.0.1:{port}");
    let r = run_upstream(
        &crate::support::root().join("tasks/scenarios/hello/task.yaml"),
        "hello",
        "claude-code",
        &out,
        &["--upstream", &upstream, "-D", "run_limits.turn_timeout=20"],
    );
    assert_ne!(r.status, TaskStatus::Success);
    let t = r.turn.as_ref().expect("the CLI ran");
    let d = t
        .diagnostics
        .iter()
        .find(|d| d.kind == "gateway_upstream_error")
        .unwrap_or_else(|| panic!("{:#?}", t.diagnostics));
    assert!(d.message.contains(&upstream), "{}", d.message);
    assert!(
        d.message.to_lowercase().contains("refused"),
        "{}",
        d.message
    );
    let calls = model_calls(&out, &r);
    assert!(calls.iter().all(|c| c.status == Some(502)), "{calls:#?}");
    assert!(
        r.scripted_model_requests.is_none(),
        "no scripted model with --upstream"
    );
}

/// With the gateway on, `max_turns` is the gateway's count of main-thread calls: a reply
/// holding two tool calls, which Codex's stream shows as two replies, is one call, so
/// `max_turns: 1` lets both tools run and holds call 2 at the gateway. The host's
/// stream-based cap no longer fires inside the reply and leaves a tool that ran out of
/// the record (issue 12, S1).
#[test]
fn max_turns_under_the_gateway_never_fires_inside_a_parallel_reply() {
    let out = scratch("live-gateway-par-mt1");
    for harness in ["codex", "claude-code"] {
        let r = run_task(
            "tasks/scenarios/parallel/task.yaml",
            harness,
            &out,
            // The gateway enforces it (not Claude Code's own `--max-turns`).
            &[
                "--gateway",
                "--no-native-limits",
                "-D",
                "run_limits.max_turns=1",
            ],
        );
        let what = format!("parallel on {harness}");
        let t = r.turn.as_ref().expect("the CLI ran");
        let g = t.gateway.as_ref().expect("the gateway's view");
        assert_eq!(
            r.stop.as_ref().map(|s| s.reason),
            Some(StopReason::MaxTurns),
            "{what}: {r:#?}"
        );
        assert!(g.held, "{what}: call 2 is held at the gateway");
        assert_eq!(t.tool_calls.len(), 2, "{what}: both tools of reply 1 ran");
        assert_eq!(t.num_turns, 2, "{what}");
        assert!(t.max_turns_exhausted, "{what}");
        assert_eq!(
            r.cap_note().as_deref(),
            Some("stopped by max_turns 1 (held at the gateway)"),
            "{what}"
        );
        let calls = model_calls(&out, &r);
        assert!(
            calls.iter().any(|c| c.held && c.turn == Some(1)),
            "{what}: {calls:#?}"
        );
        assert_replay_matches(&out, &r);
    }
}

/// Token budgets on the gateway's figures (tasks/scenarios/token_budget: about 9 output
/// tokens per step, `max_output_tokens: 20`): on Claude Code and on Codex (whose stream
/// reports usage only at the end of its turn, so without the gateway all five steps run
/// and the budget is found over at the end), the call after the one that went over is
/// held at the gateway, never forwarded, and the turn stops with `max_output_tokens`
/// between model calls: step 5 never runs. The breach says `figures: gateway`, its figure
/// is the APIs' own output count up to that call, every model call after it was held,
/// and replay gives the live record.
#[test]
fn token_budgets_hold_the_next_call_at_the_gateway_on_claude_code_and_codex() {
    use coder_eval::results::{BudgetFigures, BudgetKind, TurnStatus};
    let out = scratch("live-gateway-budget");
    let run = run_on_harnesses_with(
        &["tasks/scenarios/token_budget/task.yaml"],
        &["claude-code", "codex"],
        &out,
        2,
        |cmd| {
            cmd.arg("--gateway");
        },
    );
    assert_eq!(run.rows.len(), 2);
    for (_, r) in run.rows {
        let what = format!("{} on {}", r.task_id, r.harness);
        let t = r
            .turn
            .as_ref()
            .unwrap_or_else(|| panic!("{what}: {:?}", r.error));
        let calls = model_calls(&out, &r);
        assert_exact_counts(&r, &calls);
        let breach = t.budget.unwrap_or_else(|| panic!("{what}: no breach"));
        assert_eq!(breach.budget, BudgetKind::MaxOutputTokens, "{what}");
        assert_eq!(breach.figures, Some(BudgetFigures::Gateway), "{what}");
        assert_eq!(
            r.stop.as_ref().map(|s| s.reason),
            Some(StopReason::MaxOutputTokens),
            "{what}: {:?}",
            r.stop
        );
        assert_eq!(t.final_status, TurnStatus::TokenBudgetExceeded, "{what}");
        assert_eq!(r.status, TaskStatus::TokenBudgetExceeded, "{what}");
        // The figure is the APIs' own count up to the call that took it over.
        let over = calls
            .iter()
            .find(|c| c.seq == breach.event_index)
            .unwrap_or_else(|| panic!("{what}: {calls:#?}"));
        let before: u64 = calls
            .iter()
            .filter(|c| c.kind != CallKind::Other && c.end_us <= over.end_us)
            .filter_map(|c| c.usage.and_then(|u| u.output_tokens))
            .sum();
        assert_eq!(breach.actual, before as f64, "{what}: {calls:#?}");
        assert!(breach.actual > 20.0, "{what}");
        // Every model call that arrived after it was held, never forwarded, and at least
        // one did (the CLI went on to its next call).
        let after: Vec<&ModelCall> = calls
            .iter()
            .filter(|c| c.api.is_some() && Some(c.us) > over.end_us)
            .collect();
        assert!(!after.is_empty(), "{what}: {calls:#?}");
        for c in after {
            assert!(
                c.held && !c.forwarded() && c.over_budget == Some(BudgetKind::MaxOutputTokens),
                "{what}: {c:?}"
            );
        }
        let steps = std::fs::read_to_string(
            out.join(&r.task_id)
                .join(&r.harness)
                .join("workspace/steps.txt"),
        )
        .unwrap_or_default();
        assert!(!steps.contains("step 5"), "{what}: {steps}");
        assert!(
            r.budget_note()
                .is_some_and(|n| n.contains("the gateway's figures")),
            "{what}: {:?}",
            r.budget_note()
        );
        assert_replay_matches(&out, &r);
    }
}

/// A `coder-eval scripted-model` on loopback standing in for a real API (it knows
/// nothing of the task's limits): killed when dropped.
struct Upstream {
    child: std::process::Child,
    port: u16,
}

impl Upstream {
    fn start(script: &Path, harness: &str) -> Upstream {
        use std::io::BufRead;
        let mut child = std::process::Command::new(crate::support::bin())
            .arg("scripted-model")
            .arg("--script")
            .arg(script)
            .args(["--port", "0", "--harness", harness])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("the scripted model starts");
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line
            .trim()
            .strip_prefix("PORT ")
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("no port in {line:?}"));
        Upstream { child, port }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
}

impl Drop for Upstream {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs `task` (its folder named `task_id`) with `--gateway` and `extra` (the
/// `--upstream`), without `--isolate-network` (refused with `--upstream`: the upstream
/// lives on the host's loopback), and returns its result.
fn run_upstream(
    task: &Path,
    task_id: &str,
    harness: &str,
    out: &Path,
    extra: &[&str],
) -> TaskResult {
    let output = std::process::Command::new(crate::support::bin())
        .arg("run")
        .arg(task)
        .args(["--harness", harness, "--out"])
        .arg(out)
        .args(["--jobs", "1", "--infra-retries", "0", "--gateway"])
        .args(extra)
        .output()
        .expect("coder-eval runs");
    let text = std::fs::read_to_string(out.join(task_id).join(harness).join("task.json"))
        .unwrap_or_else(|e| {
            panic!(
                "{e}\nstdout: {}\nstderr: {}",
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            )
        });
    serde_json::from_str(&text).unwrap()
}

/// `max_tool_calls` against a real upstream: nothing holds the reply that hands out tool
/// N+1 (the gateway does not read tool calls out of answers), so the host stops the CLI
/// as tool N+1 starts, and a fast tool may have run by then. The record keeps N tools
/// and says so: `tool_past_cap`, and `tool_ran_past_cap` once the CLI reports the tool
/// ended (issue 12, S4: never silently short).
#[test]
fn max_tool_calls_against_a_real_upstream_records_the_tool_past_the_cap() {
    let out = scratch("live-gateway-up-mtc");
    let dir = out.join("tasks").join("upstream");
    std::fs::create_dir_all(&dir).unwrap();
    let script = dir.join("upstream-script.yaml");
    std::fs::write(
        &script,
        "name: up\nreplies:\n  - tool_calls: [{shell: {command: echo step 1 >> steps.txt}}]\n  \
         - tool_calls: [{shell: {command: echo step 2 >> steps.txt}}]\n  \
         - tool_calls: [{shell: {command: echo tool 3 ran > marker.txt}}]\n  - text: done\n",
    )
    .unwrap();
    let task = dir.join("task.yaml");
    std::fs::write(
        &task,
        "task_id: upstream\ninitial_prompt: Run the steps.\nagent: {type: codex}\n\
         run_limits: {max_tool_calls: 2, turn_timeout: 120}\n\
         success_criteria: [{type: file_exists, path: steps.txt}]\n",
    )
    .unwrap();
    let upstream = Upstream::start(&script, "codex");
    let r = run_upstream(
        &task,
        "upstream",
        "codex",
        &out.join("runs"),
        &["--upstream", &upstream.url()],
    );
    let t = r.turn.as_ref().expect("the CLI ran");
    assert_eq!(
        r.stop.as_ref().map(|s| s.reason),
        Some(StopReason::MaxToolCalls),
        "{r:#?}"
    );
    assert_eq!(
        t.tool_calls.len(),
        2,
        "the record holds the N tools allowed"
    );
    let kinds: Vec<&str> = t.diagnostics.iter().map(|d| d.kind.as_str()).collect();
    assert!(kinds.contains(&"tool_past_cap"), "{:#?}", t.diagnostics);
    let ran = out
        .join("runs/upstream/codex/workspace/marker.txt")
        .exists();
    // `tool_past_cap` says tool 3 may have run; `tool_ran_past_cap` comes only when the CLI
    // reported it finished before the stop reached it, and then its file is there. (The
    // converse does not hold: the tool can run and the CLI be stopped before it reports.)
    if kinds.contains(&"tool_ran_past_cap") {
        assert!(ran, "tool_ran_past_cap without the tool's file");
    }
    assert_replay_matches(&out.join("runs"), &r);
}

/// With `--gateway`, a `--pass-env` key never reaches the agent: neither one the gateway
/// uses (here with the scripted model as upstream, which needs none) nor another
/// secret-looking name; a plain variable still passes, and the run says what it held
/// back (issue 12, S2).
#[test]
fn pass_env_secrets_never_reach_the_agent_under_the_gateway() {
    let out = scratch("live-gateway-pass-env");
    let script = out.join("script.yaml");
    std::fs::write(
        &script,
        "name: envdump\nreplies:\n  - tool_calls: [{shell: {command: env > env.txt}}]\n  - text: done\n",
    )
    .unwrap();
    let output = std::process::Command::new(crate::support::bin())
        .arg("run")
        .arg(crate::support::root().join("tasks/scenarios/hello/task.yaml"))
        .args(["--harness", "claude-code", "--out"])
        .arg(&out)
        .arg("--scripted-model")
        .arg(&script)
        .args(["--gateway", "--infra-retries", "0"])
        .args(["--pass-env", "ANTHROPIC_API_KEY"])
        .args(["--pass-env", "OPENROUTER_API_KEY"])
        .args(["--pass-env", "CE_TEST_PLAIN"])
        .env("ANTHROPIC_API_KEY", "sk-ant-SECRETVALUE123")
        .env("OPENROUTER_API_KEY", "sk-or-SECRETVALUE789")
        .env("CE_TEST_PLAIN", "plain-value-42")
        .output()
        .expect("coder-eval runs");
    let err = String::from_utf8_lossy(&output.stderr);
    let env = std::fs::read_to_string(out.join("hello/claude-code/workspace/env.txt"))
        .unwrap_or_else(|e| panic!("{e}: {err}"));
    assert!(!env.contains("SECRETVALUE"), "{env}");
    assert!(env.contains("CE_TEST_PLAIN=plain-value-42"), "{env}");
    for name in ["ANTHROPIC_API_KEY", "OPENROUTER_API_KEY"] {
        assert!(
            err.lines()
                .any(|l| l.contains(&format!("--pass-env {name} is held back"))),
            "{name}: {err}"
        );
    }
    let recording = std::fs::read_to_string(out.join("hello/claude-code/recording.jsonl")).unwrap();
    assert!(!recording.contains("SECRETVALUE"));
}
