//! Tests of the live loop's timing helpers.

use super::*;

#[test]
fn the_earliest_pending_stop_wakes_the_loop() {
    let t0 = Instant::now();
    let s = Duration::from_secs;
    let deadlines = |deadline| Deadlines {
        deadline,
        policy: StopPolicy::DEFAULT,
    };
    assert_eq!(next_wake(&deadlines(None), Pending::default()), None);
    let timeout = Some((t0 + s(60), StopReason::TurnTimeout));
    assert_eq!(next_wake(&deadlines(timeout), Pending::default()), timeout);
    // A result at 1 s: its grace ends first.
    let pending = Pending {
        result_seen_at: Some(t0 + s(1)),
        ..Default::default()
    };
    assert_eq!(
        next_wake(&deadlines(timeout), pending),
        Some((
            t0 + s(1) + StopPolicy::DEFAULT.result_grace,
            StopReason::ResultGrace
        ))
    );
    // Then the CLI exits: the leak grace is shorter.
    let pending = Pending {
        exited_at: Some(t0 + s(2)),
        ..pending
    };
    assert_eq!(
        next_wake(&deadlines(timeout), pending),
        Some((
            t0 + s(2) + StopPolicy::DEFAULT.leak_grace,
            StopReason::LeakedPipes
        ))
    );
    // A held call settles within a moment and fires max_turns.
    let pending = Pending {
        held: Some((t0 + s(2), StopReason::MaxTurns)),
        ..pending
    };
    assert_eq!(
        next_wake(&deadlines(timeout), pending).map(|w| w.1),
        Some(StopReason::MaxTurns)
    );
}
