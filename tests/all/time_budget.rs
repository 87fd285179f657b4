//! Time-budget mode (`agent.budget_mode: time`) on every harness's real CLI against the
//! scripted model (tasks/scenarios/time_budget): the agent ends two sessions early, the
//! host resumes the same session each time with a shrinking timeout, and the third
//! session is stopped at the deadline, which is a clean stop (graded SUCCESS). Plus the
//! load errors: bad values, and time mode on a harness that cannot resume.

use crate::live_claude::run_on_harnesses_with;
use crate::support::{bin, scratch, test_component};
use coder_eval::results::{SessionsEnd, StopReason, TaskResult, TaskStatus, TurnStatus};
use coder_eval::turn::replay::{ReplayOptions, replay, replay_sessions};
use std::process::Command;

const HARNESSES: [&str; 5] = ["claude-code", "codex", "pi", "opencode", "gemini-cli"];

#[test]
fn sessions_are_resumed_until_the_deadline_on_every_harness() {
    let out = scratch("time-budget");
    let task = "tasks/scenarios/time_budget/task.yaml";
    let run = run_on_harnesses_with(&[task], &HARNESSES, &out, 3, |_| {});
    for (row, r) in run.rows {
        let what = &row.harness;
        let dir = out.join("time_budget").join(&row.harness);
        let tb = r
            .time_budget
            .as_ref()
            .unwrap_or_else(|| panic!("{what}: no time_budget: {:?}", r.error));
        let s = &tb.sessions;
        assert_eq!(tb.budget_ms, 45_000, "{what}");
        assert_eq!(tb.ended, SessionsEnd::DeadlineReached, "{what}: {tb:?}");
        assert_eq!(s.len(), 3, "{what}: {s:#?}");
        // The first two ended on their own; the third ran into the deadline.
        assert_eq!(s[0].final_status, TurnStatus::Completed, "{what}");
        assert_eq!(s[1].final_status, TurnStatus::Completed, "{what}");
        assert_eq!(s[2].final_status, TurnStatus::TimeBudgetReached, "{what}");
        assert_eq!(s[2].stop_reason, Some(StopReason::TimeBudget), "{what}");
        assert!(!s[0].resumed && s[1].resumed && s[2].resumed, "{what}");
        // run.json's row (and the summary line, junit, report) shows the whole task, not
        // the last session: every session's model calls and tool calls, first start to
        // last end.
        let calls: u32 = s.iter().map(|x| x.num_turns).sum();
        let tools: usize = s.iter().map(|x| x.tool_calls).sum();
        assert_eq!(row.num_turns, Some(calls), "{what}");
        assert_eq!(row.tool_calls, Some(tools), "{what}");
        assert_eq!(
            row.duration_ms,
            Some(s[2].started_ms + s[2].duration_ms),
            "{what}"
        );
        assert!(row.duration_ms > Some(s[2].duration_ms), "{what}");
        let line = format!("turns {calls:<3} tools {tools:<3}");
        assert!(
            run.stdout
                .lines()
                .any(|l| l.contains(&format!("{what} ")) && l.contains(&line)),
            "{what}: `{line}` not in the summary lines"
        );
        // The same session throughout: the id resumed is in each continuation's argv, and
        // each stream that names its session names the first one's.
        let id = s[0].session_id.clone().expect("a session id");
        for later in &s[1..] {
            assert_eq!(later.session_id.as_deref(), Some(id.as_str()), "{what}");
            assert!(
                later.argv.iter().any(|a| a.contains(&id)),
                "{what}: {id} not in {:?}",
                later.argv
            );
            assert!(later.prompt.contains("time remains"), "{what}");
            if let (Some(a), Some(b)) = (&s[0].stream_session_id, &later.stream_session_id) {
                assert_eq!(a, b, "{what}: a new session, not the same one resumed");
            }
        }
        // Each continuation's timeout is the time left: it shrinks, and the sessions fit
        // in the budget.
        let t: Vec<u64> = s.iter().map(|x| x.timeout_ms.unwrap()).collect();
        assert!(
            t[0] == 45_000 && t[1] < t[0] && t[2] < t[1],
            "{what}: {t:?}"
        );
        assert!(s[1].started_ms >= s[0].duration_ms, "{what}");
        assert!(
            s[2].started_ms + s[2].timeout_ms.unwrap() <= 45_100,
            "{what}: {s:#?}"
        );
        // Stopped at the deadline is not a failure: graded on every session's work (its
        // files, and its events: criterion 2 saw session 2's command).
        assert_eq!(r.status, TaskStatus::Success, "{what}: {:?}", r.criteria);
        assert_eq!(r.criteria[1].score, 1.0, "{what}: {:?}", r.criteria[1]);
        assert_eq!(
            r.stop.as_ref().map(|s| s.reason),
            Some(StopReason::TimeBudget)
        );
        // One base for every time of the run, the run's agent start: the stop at the
        // deadline counts from it, as the sessions' starts do (it was counted from the
        // last session's start).
        let at_ms = r.stop.as_ref().and_then(|x| x.at_ms).expect("stop.at_ms");
        assert!(
            at_ms + 1 >= tb.budget_ms,
            "{what}: stopped at {at_ms} ms, the deadline is at {} ms",
            tb.budget_ms
        );
        assert!(
            at_ms >= s[2].started_ms && at_ms <= s[2].started_ms + s[2].duration_ms,
            "{what}: stopped at {at_ms} ms, outside session 3: {:#?}",
            s[2]
        );
        // The stop at the deadline reached the scripted model: the reply still in its
        // scripted delay then was never answered (503 at shutdown, and logged so).
        let requests = r
            .scripted_model_requests
            .as_ref()
            .expect("a scripted model");
        let waiting: Vec<_> = requests
            .iter()
            .filter(|q| q["kind"] == "main" && q["turn"] == 4)
            .collect();
        assert!(!waiting.is_empty(), "{what}: {requests:#?}");
        for q in waiting {
            assert_eq!(q["status"], 503, "{what}: answered after the deadline: {q}");
            assert_eq!(
                q["error"].as_str(),
                Some(coder_eval_scripted_model::STOPPED_ERROR),
                "{what}"
            );
        }
        // report.html lists the sessions.
        let html = std::fs::read_to_string(out.join("report.html")).unwrap();
        for x in s {
            assert!(
                html.contains(&x.recording),
                "{what}: {} not in report.html",
                x.recording
            );
        }
        let steps = std::fs::read_to_string(dir.join("workspace/steps.txt")).unwrap();
        assert_eq!(steps, "session 1\nsession 2\n", "{what}");
        // cost.json: one attempt per session, in order; the cost is counted once: the
        // total is the sum of the sessions' own shares (never a running total added again).
        let cost: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("cost.json")).unwrap()).unwrap();
        let attempts = cost["attempts"].as_array().unwrap();
        assert_eq!(attempts.len(), 3, "{what}: {cost:#}");
        for (i, a) in attempts.iter().enumerate() {
            assert_eq!(a["attempt"].as_u64(), Some(i as u64 + 1), "{what}");
            assert_eq!(a["resumed"].as_bool(), Some(i > 0), "{what}");
            // Each session's own timeout (it was null).
            assert_eq!(
                a["settings"]["timeout_ms"].as_u64(),
                s[i].timeout_ms,
                "{what}: {a:#}"
            );
        }
        // Every attempt carries its raw provider reports and its model, as an
        // iterations-mode attempt does (trial of 16, F3: the sessions that completed had
        // `provider_reports` empty and `model` null): each as its session's recording
        // replays.
        let (replayed, _) = replay_sessions(
            &dir.join("recording.jsonl"),
            &ReplayOptions::new(&row.harness),
            false,
        )
        .unwrap();
        assert_eq!(replayed.len(), attempts.len(), "{what}");
        for (a, got) in attempts.iter().zip(&replayed) {
            let t = &got.turn;
            assert_eq!(
                a["settings"]["model"].as_str(),
                t.model.as_deref(),
                "{what}: {a:#}"
            );
            let reports = &a["provider_reports"];
            assert_eq!(
                reports["cli_result"].is_null(),
                t.cli_result.is_none(),
                "{what}: {a:#}"
            );
            let with_figures = t
                .messages
                .iter()
                .filter(|m| m.usage.is_some() || m.cost_usd.is_some())
                .count();
            assert_eq!(
                reports["messages"].as_array().map(Vec::len),
                Some(with_figures),
                "{what}: {a:#}"
            );
        }
        // (The session stopped at the deadline may have reported nothing: then the total
        // is partial, the sum of what was reported.)
        let known: f64 = s.iter().filter_map(|x| x.cost_usd).sum();
        let all_known = s.iter().all(|x| x.cost_usd.is_some());
        match cost["total_cost_usd"].as_f64() {
            Some(total) => {
                assert!((total - known).abs() < 1e-9, "{what}: {cost:#}");
                let status = if all_known { "complete" } else { "partial" };
                assert_eq!(cost["cost_status"], status, "{what}: {cost:#}");
            }
            None => assert_ne!(cost["cost_status"], "complete", "{what}: {cost:#}"),
        }
        if let (Some(a), Some(b)) = (s[0].cost_usd, s[1].cost_usd) {
            // Two sessions of the same work each cost about the same: a running total taken
            // as the second one's share would be at least the first's plus its own.
            assert!(b < a * 1.5 + 1e-9, "{what}: {a} then {b}: counted twice?");
        }
        // Tokens likewise, each read through the harness's usage scope (Codex's usage is
        // the thread's running total, Claude Code's the process's own): two sessions of
        // the same work use about as many tokens each, neither a running total taken as
        // the second one's share nor a difference that lost most of it.
        let tokens = |x: &coder_eval::results::SessionRecord| {
            assert_eq!(
                x.usage.is_none(),
                x.usage_source == "none",
                "{what}: absent, not 0"
            );
            x.usage.map(|u| (u.input_tokens + u.output_tokens) as f64)
        };
        if let (Some(a), Some(b)) = (tokens(&s[0]), tokens(&s[1])) {
            assert!(
                b < a * 1.5 && b > a * 0.5,
                "{what}: {a} then {b} tokens ({}): counted twice, or subtracted wrongly?",
                s[1].usage_source
            );
        }
        // Every session left its recording; the last one replays to the task's turn.
        for x in s {
            assert!(dir.join(&x.recording).is_file(), "{what}: {}", x.recording);
        }
        let replayed = replay(
            &dir.join(&s[2].recording),
            &ReplayOptions::new(&row.harness),
        )
        .unwrap();
        assert_eq!(
            serde_json::to_value(&replayed).unwrap(),
            serde_json::to_value(r.turn.as_ref().unwrap()).unwrap(),
            "{what}"
        );
        assert_whole_run_replays(&dir, &r, what);
    }
}

/// `run_limits.max_turns` counts every session (the scripted model holds the call past
/// it over the resumed history), and each session reports its own calls: a resumed
/// session that ends at the cap counts its calls, not the history's (trial of 16, F2:
/// `main_index` [1, 4], `num_turns` 4 for 2 calls), and is started with what is left of
/// the cap as its native `--max-turns`.
#[test]
fn a_resumed_session_at_max_turns_counts_its_own_calls() {
    let out = scratch("time-budget-max-turns");
    let task = "tasks/scenarios/time_budget/task.yaml";
    let run = run_on_harnesses_with(&[task], &["claude-code"], &out, 1, |cmd| {
        cmd.args([
            "-D",
            "agent.timeout_seconds=20",
            "-D",
            "run_limits.max_turns=3",
        ]);
    });
    let (row, r) = &run.rows[0];
    let tb = r.time_budget.as_ref().expect("time_budget");
    let s = &tb.sessions;
    assert_eq!(s.len(), 2, "{s:#?}");
    assert_eq!(s[0].num_turns, 2, "{s:#?}");
    assert_eq!(s[0].final_status, TurnStatus::Completed, "{s:#?}");
    // Session 2 made 1 call of its own (answered), then call 2 was stopped, by the CLI's
    // native cap (counted as the call it stopped, as in iterations mode) or the model's
    // hold: 2, never the history's 2 counted again.
    assert_eq!(s[1].num_turns, 2, "{s:#?}");
    assert_eq!(s[1].final_status, TurnStatus::MaxTurnsExhausted, "{s:#?}");
    assert_eq!(tb.ended, SessionsEnd::SessionStopped, "{tb:#?}");
    let turn = r.turn.as_ref().unwrap();
    assert_eq!(turn.num_turns, s[1].num_turns);
    let index: Vec<Option<u32>> = turn
        .model_calls
        .iter()
        .filter(|m| m.parent_call_id.is_none())
        .map(|m| m.main_index)
        .collect();
    // The calls the stream shows (and a held one) are numbered from this session's 1.
    let own: Vec<Option<u32>> = (1..=index.len() as u32).map(Some).collect();
    assert_eq!(index, own, "{:#?}", turn.model_calls);
    assert!(
        !index.is_empty() && index.len() <= 2,
        "{:#?}",
        turn.model_calls
    );
    // The totals are the sessions' sum.
    assert_eq!(row.num_turns, Some(s[0].num_turns + s[1].num_turns));
    // Natively, each session gets what is left: 3, then 3 - 2.
    let cap = |argv: &[String]| {
        argv.windows(2)
            .find(|w| w[0] == "--max-turns")
            .map(|w| w[1].clone())
    };
    assert_eq!(cap(&s[0].argv).as_deref(), Some("3"), "{:?}", s[0].argv);
    assert_eq!(cap(&s[1].argv).as_deref(), Some("1"), "{:?}", s[1].argv);
    let dir = out.join("time_budget/claude-code");
    assert_whole_run_replays(&dir, r, "claude-code");
}

/// The run replays whole from its first recording, every session as the live run had
/// it; `coder-eval replay` prints them all, and a re-grade judges every session's
/// events, as the live grade did.
fn assert_whole_run_replays(dir: &std::path::Path, r: &TaskResult, what: &str) {
    let s = &r.time_budget.as_ref().unwrap().sessions;
    let first = dir.join("recording.jsonl");
    let (replayed, _) = replay_sessions(&first, &ReplayOptions::new(&r.harness), false).unwrap();
    assert_eq!(replayed.len(), s.len(), "{what}");
    for (x, got) in s.iter().zip(&replayed) {
        let t = &got.turn;
        assert_eq!(got.index, x.index, "{what}");
        assert!(got.recording.ends_with(&x.recording), "{what}");
        assert_eq!(
            (
                t.final_status,
                t.num_turns,
                t.tool_calls.len(),
                t.usage,
                t.usage_source.as_str(),
                t.cost_usd,
                t.session_id.as_ref()
            ),
            (
                x.final_status,
                x.num_turns,
                x.tool_calls,
                x.usage,
                x.usage_source.as_str(),
                x.cost_usd,
                x.stream_session_id.as_ref()
            ),
            "{what}: session {}",
            x.index
        );
    }
    let live_turn = serde_json::to_value(r.turn.as_ref().unwrap()).unwrap();
    let last = &replayed.last().unwrap().turn;
    assert_eq!(serde_json::to_value(last).unwrap(), live_turn, "{what}");
    let out = Command::new(bin())
        .arg("replay")
        .arg(&first)
        .arg("--json")
        .output()
        .unwrap();
    assert!(out.status.success(), "{what}: {out:?}");
    let printed: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let printed = printed["sessions"].as_array().unwrap();
    assert_eq!(printed.len(), s.len(), "{what}");
    assert_eq!(printed[s.len() - 1]["turn"], live_turn, "{what}");
    // Criterion 2 (`echo session 2` ran) is judged on session 2's events.
    let out = Command::new(bin())
        .arg("grade")
        .arg(dir)
        .arg("--json")
        .output()
        .unwrap();
    let regraded: TaskResult = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{what}: {e}: {}", String::from_utf8_lossy(&out.stderr)));
    let scores = |t: &TaskResult| t.criteria.iter().map(|c| c.score).collect::<Vec<_>>();
    assert_eq!(
        scores(&regraded),
        scores(r),
        "{what}: {:#?}",
        regraded.criteria
    );
    assert_eq!(regraded.status, r.status, "{what}");
}

/// `coder-eval run` on a task with `agent` as given (flow style); exit code and stderr.
fn load(name: &str, agent: &str, extra: &[&str]) -> (i32, String) {
    let dir = scratch(&format!("time-budget-load-{name}"));
    let task = dir.join("task.yaml");
    std::fs::write(
        &task,
        format!(
            "task_id: {name}\ninitial_prompt: hi\nagent: {{type: claude-code, {agent}}}\nsuccess_criteria:\n  - type: file_exists\n    path: x\n"
        ),
    )
    .unwrap();
    let out = Command::new(bin())
        .arg("run")
        .arg(&task)
        .arg("--out")
        .arg(dir.join("out"))
        .args(extra)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn bad_time_budgets_are_refused_at_load_naming_the_field() {
    for (name, agent, field) in [
        (
            "min0",
            "budget_mode: time, timeout_seconds: 60, min_resume_seconds: 0",
            "agent.min_resume_seconds",
        ),
        (
            "minneg",
            "budget_mode: time, timeout_seconds: 60, min_resume_seconds: -3",
            "agent.min_resume_seconds",
        ),
        (
            "max0",
            "budget_mode: time, timeout_seconds: 60, max_sessions: 0",
            "agent.max_sessions",
        ),
        (
            "maxneg",
            "budget_mode: time, timeout_seconds: 60, max_sessions: -2",
            "agent.max_sessions",
        ),
        (
            "t0",
            "budget_mode: time, timeout_seconds: 0",
            "agent.timeout_seconds",
        ),
        ("nobudget", "budget_mode: time", "agent.timeout_seconds"),
        ("stray", "max_sessions: 3", "agent.max_sessions"),
        (
            "straytimeout",
            "timeout_seconds: 30",
            "agent.timeout_seconds",
        ),
    ] {
        let (code, stderr) = load(name, agent, &[]);
        assert_eq!(code, 2, "{name}: {stderr}");
        assert!(stderr.contains(field), "{name}: `{field}` not in: {stderr}");
    }
}

#[test]
fn time_mode_on_a_harness_without_resume_is_refused_at_load() {
    // A harness@0.1.0 component cannot resume a session.
    let old = format!(
        "claude-code={}",
        test_component("test_tagger.wasm").display()
    );
    let (code, stderr) = load(
        "noresume",
        "budget_mode: time, timeout_seconds: 60",
        &["--component", &old],
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("agent.budget_mode") && stderr.contains("resume"),
        "{stderr}"
    );
    assert!(stderr.contains("harness@0.1.0"), "{stderr}");
    // A harness@0.2.0 component that declares no resume form (Qwen Code) says that, not
    // that its contract version is the reason.
    let (code, stderr) = load(
        "noresume2",
        "budget_mode: time, timeout_seconds: 60",
        &["--harness", "qwen-code"],
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("harness@0.2.0, and declares no resume form"),
        "{stderr}"
    );
}
