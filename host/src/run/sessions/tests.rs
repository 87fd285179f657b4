//! Tests of the parent module.

use super::*;

fn ended(status: TurnStatus, stop: Option<StopReason>) -> LiveTurn {
    let (mut record, _) = crate::turn::collect::Collector::new(Default::default())
        .finish(crate::turn::finish::TurnEnd::default());
    record.final_status = status;
    LiveTurn {
        record,
        trajectory: Vec::new(),
        stop,
        stop_at_ms: None,
        stderr_tail: String::new(),
        pgid: None,
        mark: String::new(),
        leftover_processes: 0,
        host_work_us: 0,
        containment: None,
        started: std::time::Instant::now(),
    }
}

#[test]
fn a_session_is_resumed_only_when_it_ended_early_with_time_and_sessions_left() {
    let s = Duration::from_secs;
    let budget = TimeBudget {
        budget: s(100),
        min_resume: s(10),
        max_sessions: 3,
    };
    let done = ended(TurnStatus::Completed, None);
    assert_eq!(why_not_go_on(&budget, &done, 1, s(50)), None);
    assert_eq!(why_not_go_on(&budget, &done, 2, s(10)), None);
    assert_eq!(
        why_not_go_on(&budget, &done, 2, s(9)),
        Some(SessionsEnd::BelowMinResume)
    );
    assert_eq!(
        why_not_go_on(&budget, &done, 3, s(50)),
        Some(SessionsEnd::MaxSessions)
    );
    let at_deadline = ended(TurnStatus::TimeBudgetReached, Some(StopReason::TimeBudget));
    assert_eq!(
        why_not_go_on(&budget, &at_deadline, 2, s(0)),
        Some(SessionsEnd::DeadlineReached)
    );
    for (status, stop) in [
        (TurnStatus::Timeout, Some(StopReason::TaskTimeout)),
        (TurnStatus::CliError, None),
        (TurnStatus::MaxTurnsExhausted, Some(StopReason::MaxTurns)),
        (TurnStatus::EarlyStopped, Some(StopReason::EarlyStop)),
        (TurnStatus::Incomplete, Some(StopReason::Interrupted)),
    ] {
        assert_eq!(
            why_not_go_on(&budget, &ended(status, stop), 1, s(90)),
            Some(SessionsEnd::SessionStopped),
            "{status:?}"
        );
    }
}

/// A resumed session that ends on a held call counts its own calls (trial of 16, F2:
/// the held call's index counted the replayed history's, `main_index` [1, 4] and
/// `num_turns` 4 for 2 calls).
#[test]
fn a_held_call_in_a_resumed_session_counts_only_its_own_calls() {
    use crate::results::StampedEvent;
    use crate::turn::collect::Collector;
    use harness_kit::Event;
    let session = |earlier: Option<u32>| {
        let mut c = Collector::new(crate::limits::Caps {
            max_turns: Some(1),
            max_tool_calls: None,
        });
        if let Some(n) = earlier {
            c.resumed_after(n);
        }
        // One call the stream shows, then the model holds the next: its index counts
        // the 2 assistant turns of the replayed history and this session's one.
        c.push(StampedEvent {
            line: 1,
            stamp_us: 10,
            event: Event::ModelCallStarted {
                message_id: Some("m1".into()),
                parent_call_id: None,
            },
        });
        c.held_call(20, 3, StopReason::MaxTurns);
        let (record, _) = c.finish(crate::turn::finish::TurnEnd::default());
        let index: Vec<Option<u32>> = record.model_calls.iter().map(|m| m.main_index).collect();
        (record.num_turns, index)
    };
    assert_eq!(session(Some(2)), (2, vec![Some(1), Some(2)]));
    // Without what came before, the history's calls were taken as this session's.
    assert_eq!(session(None), (4, vec![Some(1), Some(4)]));
}

#[test]
fn the_caps_count_every_session() {
    let caps = crate::limits::Caps {
        max_turns: Some(3),
        max_tool_calls: Some(1),
    };
    let after = |turns, tools| SessionHeader {
        resumed: true,
        earlier_turns: Some(turns),
        earlier_tool_calls: Some(tools),
        ..SessionHeader::default()
    };
    // A continuation's (native and host) caps are what the earlier launches left.
    assert_eq!(
        after(2, 0).remaining(caps),
        crate::limits::Caps {
            max_turns: Some(1),
            max_tool_calls: Some(1),
        }
    );
    assert_eq!(SessionHeader::default().remaining(caps), caps);
    let none = crate::limits::Caps::default();
    assert_eq!(after(2, 1).remaining(none), none);
    // A spent cap: no session follows, and the note names it.
    let limits = crate::limits::RunLimitsSpec {
        max_turns: Some(3),
        max_tool_calls: Some(1),
        ..Default::default()
    };
    assert_eq!(cap_spent(&limits, 2, 0), None);
    let note = cap_spent(&limits, 3, 0).unwrap();
    assert!(note.contains("run_limits.max_turns (3)"), "{note}");
    let note = cap_spent(&limits, 2, 1).unwrap();
    assert!(note.contains("run_limits.max_tool_calls (1)"), "{note}");
}

#[test]
fn session_ids_are_uuids() {
    let (a, b) = (new_session_id(), new_session_id());
    assert_ne!(a, b);
    let parts: Vec<usize> = a.split('-').map(str::len).collect();
    assert_eq!(parts, [8, 4, 4, 4, 12], "{a}");
    assert_eq!(&a[14..15], "4", "{a}");
}
