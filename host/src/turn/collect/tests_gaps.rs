//! Tests of the events@0.2.0 handling: retries, denied calls, unreported work, totals.

use super::*;
use crate::results::{ToolOutcome, TotalsStatus};
use crate::turn::finish::TurnEnd;
use harness_kit::{ToolStatus, TotalsScope, UnreportedKind, Usage};

fn at(stamp_ms: u64, event: Event) -> StampedEvent {
    StampedEvent {
        line: 0,
        stamp_us: stamp_ms * 1000,
        event,
    }
}

fn call(id: &str) -> Event {
    Event::ModelCallStarted {
        message_id: Some(id.into()),
        parent_call_id: None,
    }
}

fn message(id: &str, text: &str) -> Event {
    Event::AssistantMessage {
        message_id: id.into(),
        parent_call_id: None,
        text: text.into(),
        usage: Some(Usage {
            input_tokens: 5,
            output_tokens: 1,
            cache_read_tokens: 0,
            cache_write_tokens: Some(0),
        }),
        cost_usd: None,
    }
}

fn retried(id: &str) -> Event {
    Event::ModelCallRetried {
        call_started: true,
        abandoned_message_id: Some(id.into()),
        parent_call_id: None,
        attempt: Some(1),
        delay_ms: Some(2000),
        status: Some(429),
        error: Some("rate limited".into()),
        announced: true,
    }
}

fn result(cost: f64) -> Event {
    Event::FinalResult {
        success: true,
        error_kind: None,
        error_message: None,
        max_turns_reached: false,
        num_turns: Some(1),
        cost_usd: Some(cost),
        duration_ms: None,
        text: None,
        usage: None,
    }
}

fn end(ms: u64) -> TurnEnd {
    TurnEnd {
        end_us: ms * 1000,
        ..Default::default()
    }
}

#[test]
fn a_retried_call_is_no_turn_and_its_wait_no_generation() {
    // max_turns 1: the retried attempt does not use the one turn.
    let mut c = Collector::new(Caps {
        max_turns: Some(1),
        max_tool_calls: None,
    });
    let mut fired = None;
    for e in [
        at(100, call("a1")),
        at(150, message("a1", "I'll look at the")),
        at(200, retried("a1")),
        at(2200, call("a2")),
        at(2300, message("a2", "Done.")),
    ] {
        fired = fired.or(c.push(e));
    }
    assert_eq!(fired, None, "the retry did not count toward max_turns");
    let (r, _) = c.finish(end(2400));
    assert_eq!(r.num_turns, 1);
    assert_eq!(r.model_calls.len(), 1);
    assert_eq!(r.model_calls[0].main_index, Some(1));
    assert_eq!(r.messages.len(), 1);
    assert_eq!(r.messages[0].text, "Done.");
    // The abandoned attempt's tokens were spent: they stay in the totals.
    assert_eq!(r.usage.map(|u| u.input_tokens), Some(10));
    let retry = &r.retries[0];
    assert_eq!(
        (retry.attempt, retry.delay_ms, retry.status),
        (Some(1), Some(2000), Some(429))
    );
    let t = &r.timing;
    // 100 ms of head; the attempt and the wait (100 → 2200 ms) are retry time.
    assert_eq!(t.retry_wait_ms, Some(2100));
    assert_eq!(t.generation_duration_ms, Some(100));
    assert_eq!(r.model_calls[0].generation_ms, Some(100));
    let sum = t.harness_startup_ms.unwrap()
        + t.generation_duration_ms.unwrap()
        + t.tool_union_ms.unwrap()
        + t.retry_wait_ms.unwrap()
        + t.harness_teardown_ms.unwrap();
    assert_eq!(sum, t.turn_duration_ms);
}

#[test]
fn a_denied_call_is_not_a_command_and_unreported_work_is_partial() {
    let mut c = Collector::new(Caps::default());
    for e in [
        at(1, call("m1")),
        at(
            2,
            Event::ToolCallStarted {
                call_id: "t1".into(),
                name: "Bash".into(),
                input_json: r#"{"command":"rm -rf /"}"#.into(),
                parent_call_id: None,
            },
        ),
        at(
            3,
            Event::ToolCallFinished {
                call_id: "t1".into(),
                status: ToolStatus::Denied,
                output_excerpt: "declined".into(),
                exit_code: None,
                cli_duration_ms: None,
            },
        ),
        at(
            4,
            Event::Unreported {
                kind: UnreportedKind::SubagentWork,
                call_id: Some("t1".into()),
                reason: "the CLI drops sub-agent events".into(),
            },
        ),
    ] {
        c.push(e);
    }
    let (r, _) = c.finish(end(10));
    assert_eq!(r.tool_calls[0].status, ToolOutcome::Denied);
    assert!(r.commands.is_empty(), "{:?}", r.commands);
    assert_eq!(r.unreported.len(), 1);
    assert_eq!(r.totals, TotalsStatus::Partial);
}

fn resumed_run(launch: Launch) -> TurnRecord {
    let mut c = Collector::new(Caps::default());
    c.totals_basis(TotalsBasis {
        scope: TotalsScope::PerSession,
        usage_scope: TotalsScope::PerProcess,
        launch,
    });
    for e in [
        at(
            1,
            Event::SessionStarted {
                session_id: Some("sess-1".into()),
                cli_version: None,
                model: None,
                tools: Vec::new(),
            },
        ),
        at(2, call("m1")),
        at(3, message("m1", "ok")),
        at(4, result(0.386463)),
    ] {
        c.push(e);
    }
    c.finish(end(5)).0
}

use crate::results::TurnRecord;

#[test]
fn a_running_session_total_is_not_counted_twice() {
    // Known earlier spend: this process's share.
    let r = resumed_run(Launch::Resumed {
        earlier_cost_usd: Some(0.363044),
        earlier_usage: None,
    });
    assert_eq!(r.cost_usd, Some(0.023419));
    assert_eq!(r.totals, TotalsStatus::Complete);
    assert!(r.diagnostics.iter().any(|d| d.kind == "cumulative_total"));
    // Unknown earlier spend: no figure rather than the session's.
    let r = resumed_run(Launch::Resumed {
        earlier_cost_usd: None,
        earlier_usage: None,
    });
    assert_eq!(r.cost_usd, None);
    assert_eq!(r.totals, TotalsStatus::Ambiguous);
    // A fresh session, or a recording whose argv does not name the session: as reported.
    for launch in [
        Launch::Fresh,
        Launch::FromArgv(vec!["claude".into(), "-p".into()]),
    ] {
        let r = resumed_run(launch);
        assert_eq!(r.cost_usd, Some(0.386463));
        assert_eq!(r.totals, TotalsStatus::Complete);
    }
    // An older recording whose argv resumes the reported session: ambiguous.
    let r = resumed_run(Launch::FromArgv(vec!["--resume".into(), "sess-1".into()]));
    assert_eq!((r.cost_usd, r.totals), (None, TotalsStatus::Ambiguous));
}

/// A CLI whose reported usage is the thread's running total (Codex `turn.completed.usage`,
/// declared per session by `usage-totals`) and whose messages carry none: a resumed
/// process's usage is the total less what the session's earlier processes used; with that
/// unknown it is ambiguous (labelled, `null` in cost.json), never the session's total
/// presented as this run's.
#[test]
fn a_running_usage_total_is_read_through_its_own_scope() {
    let tokens = |input, output| Usage {
        input_tokens: input,
        output_tokens: output,
        cache_read_tokens: 0,
        cache_write_tokens: Some(0),
    };
    let run = |launch| {
        let mut c = Collector::new(Caps::default());
        c.totals_basis(TotalsBasis {
            scope: TotalsScope::PerSession,
            usage_scope: TotalsScope::PerSession,
            launch,
        });
        c.push(at(
            1,
            Event::SessionStarted {
                session_id: Some("thread-1".into()),
                cli_version: None,
                model: None,
                tools: Vec::new(),
            },
        ));
        c.push(at(2, call("m1")));
        c.push(at(
            3,
            Event::FinalResult {
                success: true,
                error_kind: None,
                error_message: None,
                max_turns_reached: false,
                num_turns: Some(1),
                cost_usd: None,
                duration_ms: None,
                text: None,
                usage: Some(tokens(900, 90)),
            },
        ));
        c.finish(end(4)).0
    };
    let r = run(Launch::Resumed {
        earlier_cost_usd: None,
        earlier_usage: Some(tokens(600, 60)),
    });
    assert_eq!(r.usage, Some(tokens(300, 30)));
    assert_eq!(r.usage_source, "cli_result_less_earlier");
    assert_eq!(r.totals, TotalsStatus::Complete);
    let r = run(Launch::Resumed {
        earlier_cost_usd: None,
        earlier_usage: None,
    });
    assert_eq!(r.usage_source, "cli_result_session_total");
    assert_eq!(r.totals, TotalsStatus::Ambiguous);
    let r = run(Launch::Fresh);
    assert_eq!(
        (r.usage, r.usage_source.as_str()),
        (Some(tokens(900, 90)), "cli_result")
    );
}

/// A stream that carries no usage at all (no per-message figures, no final result): the
/// record's usage is absent (`null`), never zeros presented as a measurement.
#[test]
fn usage_not_reported_is_null_not_zero() {
    let mut c = Collector::new(Caps::default());
    c.push(at(1, call("m1")));
    c.push(at(
        2,
        Event::AssistantMessage {
            message_id: "m1".into(),
            parent_call_id: None,
            text: "Done.".into(),
            usage: None,
            cost_usd: None,
        },
    ));
    let (r, _) = c.finish(end(3));
    assert_eq!(r.usage_source, "none");
    assert_eq!(r.usage, None);
    let json = serde_json::to_value(&r).unwrap();
    assert_eq!(json["usage"], serde_json::Value::Null, "{json:#}");
}

/// A harness whose events all come after the CLI exited (Continue, grok-cli): a budget
/// that is passed on the first reply gives the verdict, but the record keeps the tool
/// call and the second model call that followed (the CLI ran them), no stop is returned
/// to the live loop, and no "the host stopped the CLI" note is made.
#[test]
fn a_budget_decided_after_exit_gives_the_verdict_without_a_cut() {
    use crate::limits::budget::Budgets;
    let reply = |id: &str, output: u64| Event::AssistantMessage {
        message_id: id.into(),
        parent_call_id: None,
        text: String::new(),
        usage: Some(Usage {
            input_tokens: 10,
            output_tokens: output,
            cache_read_tokens: 0,
            cache_write_tokens: None,
        }),
        cost_usd: None,
    };
    let events = |after_exit: bool| {
        let mut c = Collector::new(Caps::default());
        if after_exit {
            c.events_after_exit();
        }
        c.watch(
            None,
            Budgets {
                max_output_tokens: Some(5),
                ..Default::default()
            },
        );
        let mut fired = None;
        for (i, e) in [
            Event::ModelCallStarted {
                message_id: Some("m1".into()),
                parent_call_id: None,
            },
            reply("m1", 50),
            Event::ToolCallStarted {
                call_id: "t1".into(),
                name: "Bash".into(),
                input_json: r#"{"command":"python3 app.py"}"#.into(),
                parent_call_id: None,
            },
            Event::ToolCallFinished {
                call_id: "t1".into(),
                status: harness_kit::ToolStatus::Ok,
                output_excerpt: String::new(),
                exit_code: Some(0),
                cli_duration_ms: None,
            },
            Event::ModelCallStarted {
                message_id: Some("m2".into()),
                parent_call_id: None,
            },
            reply("m2", 50),
        ]
        .into_iter()
        .enumerate()
        {
            let stamped = StampedEvent {
                line: 0,
                stamp_us: 1000 * (i as u64 + 1),
                event: e,
            };
            fired = fired.or(c.push(stamped));
        }
        (
            fired,
            c.finish(TurnEnd {
                end_us: 10_000,
                ..Default::default()
            }),
        )
    };
    // A live stream: the budget cuts at the first reply, and stops the CLI.
    let (fired, (live, _)) = events(false);
    assert_eq!(fired, Some(StopReason::MaxOutputTokens));
    assert!(live.tool_calls.is_empty());
    // Events after exit: the same verdict, the whole run.
    let (fired, (r, trajectory)) = events(true);
    assert_eq!(fired, None, "no stop for the live loop: the CLI had exited");
    assert_eq!(
        r.final_status,
        crate::results::TurnStatus::TokenBudgetExceeded
    );
    assert!(r.budget.is_some(), "the breach is still reported");
    assert_eq!(r.num_turns, 2);
    assert_eq!(r.commands, ["python3 app.py"]);
    assert!(
        trajectory.iter().any(
            |e| matches!(&e.event, Event::ToolCallFinished { call_id, .. } if call_id == "t1")
        ),
        "the criteria see the command that ran"
    );
    assert!(
        r.unreported
            .iter()
            .all(|u| !u.reason.contains("host stopped")),
        "{:?}",
        r.unreported
    );
    assert!(r.diagnostics.iter().any(|d| d.kind == "decided_after_exit"));
}
