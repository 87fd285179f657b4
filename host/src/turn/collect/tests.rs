//! Tests of the parent module.

use super::*;
use crate::results::{ToolOutcome, TurnStatus};
use crate::turn::finish::TurnEnd;
use crate::turn::recording::ExitStatus;
use harness_kit::ToolStatus;

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

fn tool(id: &str) -> Event {
    Event::ToolCallStarted {
        call_id: id.into(),
        name: "Bash".into(),
        input_json: r#"{"command":"sleep 1"}"#.into(),
        parent_call_id: None,
    }
}

fn done(id: &str) -> Event {
    Event::ToolCallFinished {
        call_id: id.into(),
        status: ToolStatus::Ok,
        output_excerpt: String::new(),
        exit_code: None,
        cli_duration_ms: None,
    }
}

#[test]
fn overlapping_tools_count_once_and_buckets_tile() {
    let mut c = Collector::new(Caps::default());
    for e in [
        at(100, call("m1")),
        at(110, tool("a")),
        at(120, tool("b")),
        at(300, done("a")),
        at(400, done("b")),
        at(450, call("m2")),
    ] {
        c.push(e);
    }
    let (r, _) = c.finish(TurnEnd {
        end_us: 500_000,
        ..Default::default()
    });
    let t = &r.timing;
    assert_eq!(t.tool_union_ms, Some(290));
    assert_eq!(t.tool_sum_ms, 470);
    assert_eq!(t.harness_startup_ms, Some(100));
    assert_eq!(t.harness_teardown_ms, Some(50));
    assert_eq!(t.generation_duration_ms, Some(60));
    let sum = [
        t.harness_startup_ms,
        t.generation_duration_ms,
        t.tool_union_ms,
        t.harness_teardown_ms,
    ]
    .iter()
    .map(|b| b.unwrap())
    .sum::<u64>();
    assert_eq!(sum, t.turn_duration_ms);
    assert_eq!(r.model_calls[0].generation_ms, Some(60));
    assert_eq!(r.commands, ["sleep 1", "sleep 1"]);
}

#[test]
fn odd_tool_inputs_keep_their_command_or_say_why_not() {
    let mut c = Collector::new(Caps::default());
    let input = |id: &str, json: &str| Event::ToolCallStarted {
        call_id: id.into(),
        name: "Bash".into(),
        input_json: json.into(),
        parent_call_id: None,
    };
    c.push(at(100, call("m1")));
    // Half an emoji (JavaScript writes lone surrogates; serde_json refuses them).
    c.push(at(110, input("a", r#"{"command":"echo \ud83d"}"#)));
    // A number serde_json cannot hold.
    c.push(at(120, input("b", r#"{"command":"echo hi","n":1e400}"#)));
    for (ms, id) in [(130, "a"), (140, "b")] {
        c.push(at(
            ms,
            Event::ToolCallFinished {
                call_id: id.into(),
                status: ToolStatus::Ok,
                output_excerpt: String::new(),
                exit_code: None,
                cli_duration_ms: None,
            },
        ));
    }
    let (r, _) = c.finish(TurnEnd {
        end_us: 500_000,
        ..Default::default()
    });
    assert_eq!(r.commands, ["echo \u{fffd}"]);
    assert!(r.tool_calls[1].input.is_string());
    let kinds: Vec<&str> = r.diagnostics.iter().map(|d| d.kind.as_str()).collect();
    assert_eq!(kinds, ["tool_input_not_json"]);
    assert!(r.diagnostics[0].message.contains("`b`"));
}

#[test]
fn a_held_call_counts_and_fires_the_cap_even_if_the_stream_is_behind() {
    let caps = Caps {
        max_turns: Some(2),
        max_tool_calls: None,
    };
    // The stream showed both allowed calls: the held one is call 3.
    let mut c = Collector::new(caps);
    c.push(at(1, call("m1")));
    c.push(at(2, call("m2")));
    assert_eq!(
        c.held_call(3_000, 2, StopReason::MaxTurns),
        Some(StopReason::MaxTurns)
    );
    let (r, _) = c.finish(TurnEnd {
        end_us: 4_000,
        ..Default::default()
    });
    assert_eq!(r.num_turns, 3);
    assert!(r.max_turns_exhausted);
    assert_eq!(r.model_calls[2].message_id, None);
    // The stream is one call behind: the cap still fires (no answer will come), and the
    // held call is still call 3: the model answered two before it, whatever the stream
    // has shown so far. Its late `m2` line comes after the cut: not counted, and not in
    // the trajectory either (the criteria read what the record counts): `m1` and the
    // held call.
    let mut c = Collector::new(caps);
    c.push(at(1, call("m1")));
    assert_eq!(
        c.held_call(3_000, 2, StopReason::MaxTurns),
        Some(StopReason::MaxTurns)
    );
    c.push(at(4, call("m2")));
    let (r, trajectory) = c.finish(TurnEnd {
        end_us: 5_000,
        ..Default::default()
    });
    assert!(r.max_turns_exhausted);
    assert_eq!(r.num_turns, 3);
    assert_eq!(trajectory.len(), 2);
    assert!(matches!(
        trajectory[1].event,
        Event::ModelCallStarted {
            message_id: None,
            ..
        }
    ));
}

/// After a stop (here `max_tool_calls`), the trajectory (what the criteria read) holds
/// exactly what the record counts: the tool start that fired the cap (call N+1, not in the
/// record) and everything the CLI printed later are left out, but for a diagnostic, which
/// the record keeps too.
#[test]
fn the_trajectory_ends_at_the_cut_but_for_later_diagnostics() {
    let caps = Caps {
        max_turns: None,
        max_tool_calls: Some(1),
    };
    let mut c = Collector::new(caps);
    c.push(at(1, call("m1")));
    c.push(at(2, tool("t1")));
    c.push(at(3, done("t1")));
    assert_eq!(c.push(at(4, tool("t2"))), Some(StopReason::MaxToolCalls));
    c.push(at(5, done("t2")));
    c.push(at(6, call("m2")));
    c.push(at(
        7,
        Event::diagnostic("late", "printed while stopped", b""),
    ));
    let (r, trajectory) = c.finish(TurnEnd {
        end_us: 9_000,
        stop: Some(StopReason::MaxToolCalls),
        ..Default::default()
    });
    assert_eq!(r.tool_calls.len(), 1);
    assert_eq!(r.num_turns, 1);
    // Tool call 2 is not counted, but its start and its end (it ran) are said.
    let kinds: Vec<&str> = r.diagnostics.iter().map(|d| d.kind.as_str()).collect();
    assert_eq!(kinds, ["tool_past_cap", "tool_ran_past_cap", "late"]);
    let stamps: Vec<u64> = trajectory.iter().map(|e| e.stamp_us / 1000).collect();
    assert_eq!(stamps, [1, 2, 3, 4, 5, 7]);
    // The same after a stop the host decides (a timeout, Ctrl-C).
    let mut c = Collector::new(Caps::default());
    c.push(at(1, call("m1")));
    c.freeze();
    c.push(at(2, tool("t1")));
    let (_, trajectory) = c.finish(TurnEnd {
        end_us: 3_000,
        ..Default::default()
    });
    assert_eq!(trajectory.len(), 1);
}

/// A stream-based `max_tool_calls` stop (no scripted model to hold the reply: a real
/// upstream, with or without the gateway) comes as tool N+1 starts; the CLI may run it
/// before it is stopped. The record holds N tools and says which tool began past the cap
/// and, when its end comes, that it ran (or that the CLI refused it).
#[test]
fn a_tool_that_ran_past_max_tool_calls_is_said_not_silently_dropped() {
    let caps = Caps {
        max_turns: None,
        max_tool_calls: Some(2),
    };
    let mut c = Collector::new(caps);
    c.push(at(1, call("m1")));
    c.push(at(2, tool("t1")));
    c.push(at(3, done("t1")));
    c.push(at(4, tool("t2")));
    c.push(at(5, done("t2")));
    assert_eq!(c.push(at(6, tool("t3"))), Some(StopReason::MaxToolCalls));
    c.push(at(
        7,
        Event::ToolCallFinished {
            call_id: "t3".into(),
            status: ToolStatus::Ok,
            output_excerpt: String::new(),
            exit_code: Some(0),
            cli_duration_ms: None,
        },
    ));
    // A repeated end is said once.
    c.push(at(8, done("t3")));
    let (r, _) = c.finish(TurnEnd {
        end_us: 9_000,
        stop: Some(StopReason::MaxToolCalls),
        ..Default::default()
    });
    assert_eq!(r.tool_calls.len(), 2);
    let past: Vec<(&str, u64)> = r
        .diagnostics
        .iter()
        .map(|d| (d.kind.as_str(), d.at_ms))
        .collect();
    assert_eq!(past, [("tool_past_cap", 6), ("tool_ran_past_cap", 7)]);
    assert!(
        r.diagnostics[1].message.contains("`t3`"),
        "{:?}",
        r.diagnostics
    );
    assert!(r.diagnostics[1].message.contains("exit code 0"));
    // Refused by the CLI: it never ran.
    let mut c = Collector::new(caps);
    c.push(at(1, tool("t1")));
    c.push(at(2, tool("t2")));
    c.push(at(3, tool("t3")));
    c.push(at(
        4,
        Event::ToolCallFinished {
            call_id: "t3".into(),
            status: ToolStatus::Denied,
            output_excerpt: String::new(),
            exit_code: None,
            cli_duration_ms: None,
        },
    ));
    let (r, _) = c.finish(TurnEnd::default());
    let kinds: Vec<&str> = r.diagnostics.iter().map(|d| d.kind.as_str()).collect();
    assert_eq!(kinds, ["tool_past_cap", "tool_denied_past_cap"]);
}

/// A `max_tool_calls` hold: the reply with tool call N+1 was never sent, so the stream
/// shows N tools; the held request is call `calls_before + 1` and the cap is
/// `max_tool_calls`, not `max_turns`.
#[test]
fn a_call_held_for_max_tool_calls_fires_that_cap_with_n_tools() {
    let caps = Caps {
        max_turns: Some(10),
        max_tool_calls: Some(2),
    };
    let mut c = Collector::new(caps);
    c.push(at(1, call("m1")));
    c.push(at(2, tool("t1")));
    c.push(at(3, done("t1")));
    c.push(at(4, call("m2")));
    c.push(at(5, tool("t2")));
    c.push(at(6, done("t2")));
    assert_eq!(
        c.held_call(7_000, 2, StopReason::MaxToolCalls),
        Some(StopReason::MaxToolCalls)
    );
    // What a CLI might still print while it is stopped is not counted.
    c.push(at(8, call("m3")));
    let (r, _) = c.finish(TurnEnd {
        end_us: 9_000,
        stop: Some(StopReason::MaxToolCalls),
        ..Default::default()
    });
    assert_eq!(r.tool_calls.len(), 2);
    assert_eq!(r.num_turns, 3);
    assert!(r.max_tool_calls_exhausted);
    assert!(!r.max_turns_exhausted);
    assert_eq!(r.final_status, TurnStatus::MaxToolCallsExhausted);
    // A stream that shows call 3 begin before its request is held (Pi) counts it once.
    let mut c = Collector::new(caps);
    for (i, id) in ["m1", "m2", "m3"].into_iter().enumerate() {
        c.push(at(i as u64 + 1, call(id)));
    }
    assert_eq!(
        c.held_call(7_000, 2, StopReason::MaxToolCalls),
        Some(StopReason::MaxToolCalls)
    );
    let (r, _) = c.finish(TurnEnd {
        end_us: 9_000,
        stop: Some(StopReason::MaxToolCalls),
        ..Default::default()
    });
    assert_eq!(r.num_turns, 3);
    assert!(r.max_tool_calls_exhausted);
}

#[test]
fn an_exit_code_documented_as_the_turn_limit_is_the_clis_own_cap() {
    let caps = Caps {
        max_turns: Some(2),
        max_tool_calls: None,
    };
    let end = |turn_limit| TurnEnd {
        end_us: 4_000,
        exit: Some(ExitStatus {
            stamp_us: 4_000,
            code: Some(53),
            signal: None,
            turn_limit,
        }),
        ..Default::default()
    };
    for turn_limit in [true, false] {
        let mut c = Collector::new(caps);
        c.push(at(1, call("m1")));
        c.push(at(2, call("m2")));
        let (r, _) = c.finish(end(turn_limit));
        assert_eq!(r.max_turns_exhausted, turn_limit);
        assert_eq!(r.num_turns, if turn_limit { 3 } else { 2 });
        assert_eq!(
            r.final_status,
            if turn_limit {
                TurnStatus::MaxTurnsExhausted
            } else {
                TurnStatus::Incomplete
            }
        );
    }
}

#[test]
fn max_turns_fires_on_call_n_plus_one_and_freezes_counts() {
    let mut c = Collector::new(Caps {
        max_turns: Some(2),
        max_tool_calls: None,
    });
    assert_eq!(c.push(at(1, call("m1"))), None);
    assert_eq!(c.push(at(2, tool("a"))), None);
    assert_eq!(c.push(at(3, done("a"))), None);
    assert_eq!(c.push(at(4, call("m2"))), None);
    assert_eq!(c.push(at(5, call("m3"))), Some(StopReason::MaxTurns));
    assert_eq!(c.push(at(6, call("m4"))), None);
    let (r, _) = c.finish(TurnEnd {
        end_us: 7000,
        ..Default::default()
    });
    assert_eq!(r.num_turns, 3);
    assert!(r.max_turns_exhausted);
    assert_eq!(r.final_status, TurnStatus::MaxTurnsExhausted);
}

#[test]
fn interrupted_tool_runs_to_turn_end() {
    let mut c = Collector::new(Caps {
        max_turns: None,
        max_tool_calls: Some(1),
    });
    c.push(at(1, call("m1")));
    c.push(at(2, tool("a")));
    assert_eq!(c.push(at(3, tool("b"))), Some(StopReason::MaxToolCalls));
    let (r, _) = c.finish(TurnEnd {
        end_us: 10_000,
        stop: Some(StopReason::TurnTimeout),
        ..Default::default()
    });
    assert_eq!(r.tool_calls.len(), 1);
    assert_eq!(r.tool_calls[0].status, ToolOutcome::Interrupted);
    assert_eq!(r.tool_calls[0].duration_ms, 8);
    assert_eq!(r.final_status, TurnStatus::Timeout);
    assert_eq!(r.timing.harness_teardown_ms, Some(0));
}

#[test]
fn a_tool_printed_only_when_finished_is_placed_by_its_cli_duration() {
    let mut c = Collector::new(Caps::default());
    c.push(at(100, call("m1")));
    // Start and end on one line at 5000 ms; the CLI says it ran 3000 ms.
    c.push(at(5000, tool("a")));
    c.push(at(
        5000,
        Event::ToolCallFinished {
            call_id: "a".into(),
            status: ToolStatus::Ok,
            output_excerpt: String::new(),
            exit_code: None,
            cli_duration_ms: Some(3000),
        },
    ));
    // A duration longer than the call so far is clipped to the call's start.
    c.push(at(6000, call("m2")));
    c.push(at(6500, tool("b")));
    c.push(at(
        6500,
        Event::ToolCallFinished {
            call_id: "b".into(),
            status: ToolStatus::Ok,
            output_excerpt: String::new(),
            exit_code: None,
            cli_duration_ms: Some(10_000),
        },
    ));
    let (r, _) = c.finish(TurnEnd {
        end_us: 7_000_000,
        ..Default::default()
    });
    assert_eq!(
        (r.tool_calls[0].started_ms, r.tool_calls[0].duration_ms),
        (2000, 3000)
    );
    assert_eq!(
        (r.tool_calls[1].started_ms, r.tool_calls[1].duration_ms),
        (6000, 500)
    );
    assert_eq!(r.timing.tool_union_ms, Some(3500));
    // The clipped one is said, the one that fits is not.
    let clipped: Vec<_> = r
        .diagnostics
        .iter()
        .filter(|d| d.kind == "tool_duration_clipped")
        .collect();
    assert_eq!(clipped.len(), 1, "{:?}", r.diagnostics);
    assert!(
        clipped[0].message.contains("`b` ran 10000 ms") && clipped[0].message.contains("500 ms"),
        "{}",
        clipped[0].message
    );
}

#[test]
fn no_output_is_all_head() {
    let (r, _) = Collector::new(Caps::default()).finish(TurnEnd {
        end_us: 5000,
        ..Default::default()
    });
    assert_eq!(r.timing.harness_startup_ms, Some(5));
    assert_eq!(r.final_status, TurnStatus::Incomplete);
}

/// A message printed again (a later line of the same reply) keeps when it was first seen
/// and takes the later text, usage and thread; and a collector that keeps no trajectory
/// (replay, whose handlers take the events' own strings) builds the same record as one
/// that keeps it (the live run, whose handlers copy them).
#[test]
fn a_repeated_message_keeps_its_first_stamp_and_the_record_is_the_same_without_a_trajectory() {
    let message = |text: &str, output_tokens| Event::AssistantMessage {
        message_id: "m1".into(),
        parent_call_id: None,
        text: text.into(),
        usage: Some(harness_kit::Usage {
            output_tokens,
            ..Default::default()
        }),
        cost_usd: None,
    };
    let events = [
        at(
            5,
            Event::SessionStarted {
                session_id: Some("s".into()),
                cli_version: Some("1".into()),
                model: Some("m".into()),
                tools: vec!["Bash".into()],
            },
        ),
        at(10, call("m1")),
        at(20, message("I'll ", 1)),
        at(30, tool("a")),
        at(40, message("I'll run it.", 7)),
        at(
            50,
            Event::Diagnostic {
                kind: "odd".into(),
                message: "an odd line".into(),
                raw: "{}".into(),
            },
        ),
        at(60, done("a")),
    ];
    let record = |keep: bool| {
        let mut c = Collector::new(Caps::default());
        if !keep {
            c = c.without_trajectory();
        }
        for e in events.clone() {
            c.push(e);
        }
        let (r, trajectory) = c.finish(TurnEnd {
            end_us: 100_000,
            ..Default::default()
        });
        assert_eq!(trajectory.len(), if keep { events.len() } else { 0 });
        r
    };
    let (live, replayed) = (record(true), record(false));
    assert_eq!(live.messages.len(), 1);
    let m = &live.messages[0];
    assert_eq!((m.first_ms, m.text.as_str()), (20, "I'll run it."));
    assert_eq!(m.usage.map(|u| u.output_tokens), Some(7));
    assert_eq!(live.tool_calls[0].input["command"], "sleep 1");
    assert_eq!(live.diagnostics[0].raw, "{}");
    assert_eq!(
        serde_json::to_string(&live).unwrap(),
        serde_json::to_string(&replayed).unwrap()
    );
}
