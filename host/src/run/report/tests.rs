//! The unit tests of `report.html`.

use super::*;

fn result(variant: Option<&str>, replicate: u32, status: TaskStatus) -> TaskResult {
    let mut r: TaskResult = serde_json::from_str(r#"{"result_version":1,"task_id":"t","harness":"claude-code","status":"SUCCESS","error":null,"description":null,"task_file":"/t.yaml","prompt":"p","requested_model":null,"cli":{"path":null,"version":null,"argv":[],"pgid":null,"caveats":[]},"run_limits":{"max_turns":null,"max_tool_calls":null,"turn_timeout_ms":null,"task_timeout_ms":null,"native":[]},"stop":null,"turn":null,"criteria":[],"weighted_score":null,"post_failure_criteria_results":[],"setup_ms":0,"grading_ms":0,"host_turn_work_us":0,"stderr_tail":"","scripted_model_requests":null,"paths":{"recording":"recording.jsonl","stderr":"stderr.log","workspace":"workspace"}}"#).unwrap();
    r.variant = variant.map(String::from);
    r.replicate = Some(replicate);
    r.status = status;
    r
}

/// 2 variants × 1 task × 3 replicates on one harness; variant a passes 2 of 3.
fn suite() -> Vec<TaskResult> {
    let mut rs = Vec::new();
    for (v, statuses) in [
        (
            "a",
            [
                TaskStatus::Success,
                TaskStatus::Failure,
                TaskStatus::Success,
            ],
        ),
        ("b", [TaskStatus::Failure; 3]),
    ] {
        for (i, s) in statuses.into_iter().enumerate() {
            rs.push(result(Some(v), i as u32, s));
        }
    }
    rs
}

#[test]
fn the_header_counts_harnesses_and_variants_and_the_matrix_counts_replicates() {
    let html = render(&suite(), &[], &[]);
    assert!(
        html.contains("6 runs: 1 task on 1 harness, 2 variants, up to 3 replicates each"),
        "{html}"
    );
    assert!(
        html.contains("2/3 passed") && html.contains("0/3 passed"),
        "{html}"
    );
}

#[test]
fn junit_cases_of_replicates_and_variants_differ() {
    let xml = crate::run::junit::report(&suite(), &[])
        .to_string()
        .unwrap();
    let mut cases: Vec<(String, String)> = xml
        .lines()
        .filter(|l| l.contains("<testcase"))
        .map(|l| {
            let attr = |a: &str| {
                let from = l.find(&format!("{a}=\"")).unwrap() + a.len() + 2;
                l[from..from + l[from..].find('"').unwrap()].to_string()
            };
            (attr("name"), attr("classname"))
        })
        .collect();
    assert_eq!(cases.len(), 6, "{xml}");
    assert!(cases.contains(&("t [r02]".into(), "coder-eval.b.claude-code".into())));
    cases.sort();
    cases.dedup();
    assert_eq!(cases.len(), 6, "{xml}");
}

/// A time-budget run's detail lists its sessions: one row each, with its start (from the
/// run's agent start), timeout, how it ended and its recording.
#[test]
fn a_time_budget_run_lists_its_sessions() {
    let mut r = result(None, 0, TaskStatus::Success);
    r.replicate = None;
    let session = |index: u32, started_ms: u64, stop: Option<crate::results::StopReason>| {
        crate::results::SessionRecord {
            index,
            session_id: Some("s".into()),
            stream_session_id: None,
            resumed: index > 1,
            started_ms,
            duration_ms: 4_000,
            timeout_ms: Some(45_000 - started_ms),
            stop_reason: stop,
            final_status: crate::results::TurnStatus::Completed,
            num_turns: 2,
            tool_calls: 1,
            usage: None,
            usage_source: "none".into(),
            cost_usd: None,
            argv: Vec::new(),
            prompt: "p".into(),
            recording: match index {
                1 => "recording.jsonl".into(),
                n => format!("recording.session-{n}.jsonl"),
            },
            stderr: "stderr.log".into(),
        }
    };
    r.time_budget = Some(crate::results::TimeBudgetRecord {
        budget_ms: 45_000,
        min_resume_ms: 1_000,
        max_sessions: 5,
        ended: crate::results::SessionsEnd::DeadlineReached,
        ended_note: None,
        sessions: vec![
            session(1, 0, None),
            session(2, 12_500, Some(crate::results::StopReason::TimeBudget)),
        ],
    });
    // The turn is the last session's (here, no call of its own): the per-run line shows
    // the run's totals (trial of 16, F7: it said 0 turns, 0 tool calls).
    let (mut last, _) = crate::turn::collect::Collector::new(Default::default())
        .finish(crate::turn::finish::TurnEnd::default());
    last.num_turns = 0;
    r.turn = Some(last);
    let html = render(&[r], &[], &[]);
    assert!(
        html.contains("4 turns · 2 tool calls · tokens not reported (all 2 sessions)"),
        "{html}"
    );
    assert!(html.contains("Time budget: "), "{html}");
    assert!(
        html.contains("2 sessions; ended: deadline_reached"),
        "{html}"
    );
    assert!(html.contains("recording.session-2.jsonl"), "{html}");
    assert!(html.contains("12.5 s") && html.contains("32.5 s"), "{html}");
    assert!(html.contains("(stopped: time_budget)"), "{html}");
}

/// The *Harnesses* table of a page.
fn harnesses_table(html: &str) -> &str {
    let from = html.find("<h2>Harnesses</h2>").expect(html);
    &html[from..from + html[from..].find("</table>").unwrap()]
}

/// Trial 16u S1 and M1: the *Harnesses* table sums each run's `cost.json` summary (a
/// time-budget run's sessions, not its last session's turn), and a figure the host's stop
/// cut off is partial, not "not reported".
#[test]
fn the_harness_totals_are_the_runs_cost_summaries_and_say_partial() {
    use crate::results::{CostSummary, TotalsStatus};
    let usage = |input: u64, output: u64| harness_kit::Usage {
        input_tokens: input,
        output_tokens: output,
        cache_read_tokens: 0,
        cache_write_tokens: None,
    };
    // A time-budget run: its last session's turn spent $0.19 and 19034 input tokens, its
    // three sessions $0.384245 and 76589.
    let (mut last, _) = crate::turn::collect::Collector::new(Default::default())
        .finish(crate::turn::finish::TurnEnd::default());
    last.usage = Some(usage(19034, 9));
    last.usage_source = "cli_result".into();
    last.cost_usd = Some(0.19);
    let mut time = result(None, 0, TaskStatus::Success);
    time.turn = Some(last);
    time.cost = Some(CostSummary {
        total_cost_usd: Some(0.384245),
        usage: Some(usage(76589, 27)),
        cost_status: TotalsStatus::Complete,
        usage_status: TotalsStatus::Complete,
        attempts: 3,
    });
    let html = render(std::slice::from_ref(&time), &[], &[]);
    let table = harnesses_table(&html);
    assert!(table.contains("76589 / 27"), "{table}");
    assert!(table.contains("0.3842"), "{table}");
    assert!(
        !table.contains("19034") && !table.contains("0.1900"),
        "{table}"
    );
    // Early-stopped before the final result: tokens a lower bound, cost cut off.
    let mut stopped = result(None, 0, TaskStatus::Success);
    stopped.cost = Some(CostSummary {
        total_cost_usd: None,
        usage: Some(usage(38185, 2)),
        cost_status: TotalsStatus::Partial,
        usage_status: TotalsStatus::Partial,
        attempts: 1,
    });
    let html = render(&[stopped.clone()], &[], &[]);
    assert!(html.contains("38185 / 2"), "{html}");
    assert!(html.contains("a lower bound: 1 of 1 partial"), "{html}");
    assert!(
        html.contains("unknown: cut off by the stop") && !html.contains("not reported"),
        "{html}"
    );
    // A CLI that reports no cost still says so.
    stopped.cost.as_mut().unwrap().cost_status = TotalsStatus::NotReported;
    let html = render(&[stopped], &[], &[]);
    assert!(html.contains("not reported"), "{html}");
}

/// Trial 16u M7, N2, N5: after a pass-stop gated on the armed subset, the criterion
/// outside it is marked advisory in task.json's criteria[] and the report's table; the
/// early-stop line says "Early stop:" once and names the deciding criterion's index.
#[test]
fn a_pass_stop_marks_the_unarmed_criteria_advisory_and_names_the_deciding_index() {
    let (mut turn, _) = crate::turn::collect::Collector::new(Default::default())
        .finish(crate::turn::finish::TurnEnd::default());
    turn.early_stop = Some(crate::results::EarlyStopOutcome {
        armed: Vec::new(),
        gate_threshold: 1.0,
        fired: Some(crate::results::EarlyStopRecord {
            reason: crate::results::EarlyStopReason::CriterionPassed,
            deciding_index: 1,
            deciding_criterion: "command_executed: ran app.py".into(),
            armed: vec!["command_executed: ran app.py".into()],
            model_call_index: 2,
            tool_call_index: 2,
            event_index: 9,
            elapsed_ms: 2300,
            turns_remaining: None,
            gate_threshold: 1.0,
        }),
        disarmed: None,
    });
    let criterion = |kind: &str, passed: bool| crate::results::CriterionResult {
        kind: kind.into(),
        description: format!("{kind} row"),
        weight: 1.0,
        pass_threshold: 1.0,
        score: if passed { 1.0 } else { 0.0 },
        passed,
        details: String::new(),
        duration_ms: 0,
        error: None,
        judge: None,
        advisory: false,
    };
    let gate = crate::results::ArmedGate {
        score: 1.0,
        threshold: 1.0,
        passed: true,
        armed: vec![1],
    };
    let criteria = crate::run::verdict::mark_advisory(
        vec![
            criterion("file_contains", false),
            criterion("command_executed", true),
        ],
        Some(&gate),
    );
    assert!(criteria[0].advisory && !criteria[1].advisory);
    let json = serde_json::to_value(&criteria).unwrap();
    assert_eq!(json[0]["advisory"], true);
    assert!(json[1].get("advisory").is_none(), "absent when it counted");
    let mut r = result(None, 0, TaskStatus::Success);
    r.turn = Some(turn);
    r.criteria = criteria;
    r.armed_gate = Some(gate);
    let html = render(&[r], &[], &[]);
    assert!(html.contains("(advisory: early stop)"), "{html}");
    assert_eq!(html.matches("(advisory: early stop)").count(), 1, "{html}");
    assert!(!html.contains("Early stop: </b>early stop:"), "{html}");
    assert!(
        html.contains("criterion_passed by success_criteria[1] `command_executed: ran app.py`"),
        "{html}"
    );
}

/// A gateway run's details show the gateway's figures (issue 12, M1): requests, main and
/// side, the median time to first byte and where the usage came from; `run.json`'s row
/// carries the same summary.
#[test]
fn a_gateway_run_shows_its_calls_and_ttft() {
    let mut r = result(None, 0, TaskStatus::Success);
    let (mut turn, _) = crate::turn::collect::Collector::new(Default::default())
        .finish(crate::turn::finish::TurnEnd::default());
    turn.num_turns = 2;
    let call = |seq: u64, kind: &str, turn: u32, ttft_ms: u64| -> crate::gateway::ModelCall {
        let us = seq * 1_000_000;
        serde_json::from_value(serde_json::json!({
            "seq": seq, "us": us, "first_byte_us": us + ttft_ms * 1000, "end_us": us + 2_000_000,
            "method": "POST", "path": "/v1/responses", "api": "responses", "kind": kind,
            "turn": turn, "stream": true, "model": "gpt-5.5", "status": 200,
            "usage": {"input_tokens": 10, "output_tokens": 2}, "response_bytes": 100
        }))
        .unwrap()
    };
    crate::gateway::apply_to_turn(
        &mut turn,
        &[
            call(1, "main", 0, 700),
            call(2, "side", 0, 50),
            call(3, "main", 1, 1500),
        ],
        &Default::default(),
    );
    r.turn = Some(turn);
    let html = render(std::slice::from_ref(&r), &[], &[]);
    assert!(
        html.contains(
            "Model gateway: 3 requests (2 main, 1 side) · time to first byte median 700 ms · usage from gateway"
        ),
        "{html}"
    );
    assert!(html.contains("model gpt-5.5"), "{html}");
    let summary = crate::run::suite::summary_of(vec![&r], 0, &None);
    let g = summary.rows[0]
        .gateway
        .as_ref()
        .expect("the row's gateway figures");
    assert_eq!(
        (g.calls, g.main_calls, g.side_calls, g.ttft_median_ms),
        (3, 2, 1, Some(700))
    );
}

/// Trial 14u finding 3: a harness none of whose runs reported usage shows "not reported"
/// (and no cache figures), never "0 / 0".
#[test]
fn a_harness_reporting_no_usage_shows_not_reported_not_zero() {
    use crate::results::{CostSummary, TotalsStatus};
    let mut r = result(None, 0, TaskStatus::Success);
    r.cost = Some(CostSummary {
        total_cost_usd: None,
        usage: None,
        cost_status: TotalsStatus::NotReported,
        usage_status: TotalsStatus::NotReported,
        attempts: 1,
    });
    let html = render(&[r], &[], &[]);
    let table = harnesses_table(&html);
    assert!(!table.contains("0 / 0"), "{table}");
    assert!(table.contains("not reported"), "{table}");
}

/// Trial 10u finding M6: the tool calls table and the trajectory show a call's shell
/// command as `TurnRecord.commands` reads it (`harness_kit::shell::shell_command`): an
/// argv under `cmd` joined with shell quoting, Cline's `commands` list as lines; an input
/// with no command shows as its JSON.
#[test]
fn the_report_shows_a_tool_calls_shell_command_as_the_turn_record_reads_it() {
    use crate::results::{ToolCallRecord, ToolOutcome, TurnRecord};
    let mut turn: TurnRecord = serde_json::from_value(serde_json::json!({
        "record_version": 1, "harness": "cline", "component": "builtin:cline",
        "session_id": null, "cli_version": null, "model": null,
        "final_status": "completed", "num_turns": 1, "cli_num_turns": null,
        "max_turns_exhausted": false, "max_tool_calls_exhausted": false,
        "model_calls": [], "messages": [], "tool_calls": [], "commands": [],
        "usage": {"input_tokens": 0, "output_tokens": 0, "cache_read_tokens": 0, "cache_write_tokens": 0},
        "usage_source": "none", "cost_usd": null, "cli_result": null,
        "timing": {"turn_duration_ms": 1000, "harness_startup_ms": 100,
                   "generation_duration_ms": 500, "tool_union_ms": 150,
                   "harness_teardown_ms": 50, "tool_sum_ms": 200},
        "exit": null, "diagnostics": [], "reducer_error": null,
        "stdout_lines": 0, "stdout_bytes": 0
    }))
    .unwrap();
    let call = |id: &str, input: serde_json::Value| ToolCallRecord {
        call_id: id.into(),
        name: "shell".into(),
        input,
        parent_call_id: None,
        status: ToolOutcome::Ok,
        exit_code: Some(0),
        output_excerpt: String::new(),
        started_ms: 200,
        finished_ms: Some(300),
        duration_ms: 100,
    };
    turn.tool_calls = vec![
        call("a", serde_json::json!({"cmd": ["bash", "-lc", "ls -a"]})),
        call(
            "b",
            serde_json::json!({"commands": ["npm test", "npm run lint"]}),
        ),
        call("c", serde_json::json!({"cmd": "pwd"})),
        call("d", serde_json::json!({"path": "notes.txt"})),
    ];
    turn.commands = vec![
        "bash -lc 'ls -a'".into(),
        "npm test\nnpm run lint".into(),
        "pwd".into(),
    ];
    let mut r = result(None, 0, TaskStatus::Success);
    r.turn = Some(turn.clone());
    let html = render(&[r], &[], &[]);
    // Each command shows twice: in the trajectory and in the tool calls table.
    for command in &turn.commands {
        let shown = maud::html! { pre { (command) } }.into_string();
        assert_eq!(html.matches(&shown).count(), 2, "{shown} in {html}");
    }
    let json = maud::html! { pre { (r#"{"path":"notes.txt"}"#) } }.into_string();
    assert_eq!(html.matches(&json).count(), 2, "{json} in {html}");
}
