//! The trigger maths, with scripted watchers: each decides at a fixed event.

use super::*;

/// Decides `verdict` on the event with index `at` (0-based), errs when `error` is set.
struct Scripted {
    seen: usize,
    at: Option<usize>,
    verdict: LiveVerdict,
    calls: usize,
}

impl LiveWatcher for Scripted {
    fn observe(&mut self, _event: &StampedEvent) -> Result<LiveVerdict, String> {
        let i = self.seen;
        self.seen += 1;
        self.calls += 1;
        if let LiveVerdict::Failed(why) = &self.verdict
            && why == "trap"
            && Some(i) == self.at
        {
            return Err("wasm trap: unreachable".into());
        }
        Ok(if Some(i) == self.at {
            self.verdict.clone()
        } else {
            LiveVerdict::Undecided
        })
    }
}

fn never() -> Scripted {
    Scripted {
        seen: 0,
        at: None,
        verdict: LiveVerdict::Undecided,
        calls: 0,
    }
}
fn pass_at(at: usize) -> Scripted {
    Scripted {
        seen: 0,
        at: Some(at),
        verdict: LiveVerdict::Passed(1.0),
        calls: 0,
    }
}
fn fail_at(at: usize) -> Scripted {
    Scripted {
        seen: 0,
        at: Some(at),
        verdict: LiveVerdict::Failed("misfire".into()),
        calls: 0,
    }
}

const PASS: Decidability = Decidability {
    can_pass: true,
    can_fail: false,
};
const FAIL: Decidability = Decidability {
    can_pass: false,
    can_fail: true,
};

fn arm(
    index: usize,
    weight: f64,
    on_pass_stop: bool,
    decide_within: Option<u32>,
    d: Decidability,
) -> Arming {
    Arming {
        index,
        label: format!("c{index}"),
        weight,
        on_pass_stop,
        decide_within,
        decidability: d,
    }
}

/// A run of `n` tool calls, each a start and an end (events 2k and 2k+1), 1 ms apart.
fn calls(n: usize) -> Vec<StampedEvent> {
    let mut t = Vec::new();
    for k in 0..n {
        for (j, event) in [
            Event::ToolCallStarted {
                call_id: format!("t{k}"),
                name: "Bash".into(),
                input_json: "{}".into(),
                parent_call_id: None,
            },
            Event::ToolCallFinished {
                call_id: format!("t{k}"),
                status: harness_kit::ToolStatus::Ok,
                output_excerpt: String::new(),
                exit_code: Some(0),
                cli_duration_ms: None,
            },
        ]
        .into_iter()
        .enumerate()
        {
            let i = (2 * k + j) as u64;
            t.push(StampedEvent {
                line: i + 1,
                stamp_us: (i + 1) * 1000,
                event,
            });
        }
    }
    t
}

/// Runs the events through; the record that fired, if any.
fn run(
    arming: Vec<Arming>,
    watchers: Vec<Scripted>,
    threshold: f64,
    events: &[StampedEvent],
) -> (Option<EarlyStopRecord>, EarlyStop<Scripted>) {
    let mut stop = EarlyStop::new(arming, watchers, threshold, Some(10));
    let mut fired = None;
    for e in events {
        if let Some(r) = stop.observe(e) {
            assert!(fired.is_none(), "fires once");
            fired = Some(r.clone());
        }
    }
    (fired, stop)
}

#[test]
fn a_pass_stop_fires_when_the_on_pass_subset_has_passed() {
    let (r, _) = run(
        vec![arm(0, 1.0, true, None, PASS)],
        vec![pass_at(4)],
        1.0,
        &calls(5),
    );
    let r = r.unwrap();
    assert_eq!(r.reason, EarlyStopReason::CriterionPassed);
    assert_eq!(r.event_index, 4);
    assert_eq!(
        r.tool_call_index, 3,
        "two finished calls, the third in flight"
    );
    assert_eq!(r.elapsed_ms, 5);
    assert_eq!(r.turns_remaining, Some(10));
    assert_eq!(r.armed, ["c0"]);
}

#[test]
fn on_pass_continue_latches_without_stopping() {
    let (r, stop) = run(
        vec![arm(0, 1.0, false, None, PASS)],
        vec![pass_at(1)],
        1.0,
        &calls(3),
    );
    assert_eq!(r, None);
    assert_eq!(stop.verdicts(), ["passed (1.00)"]);
    assert_eq!(stop.watchers[0].calls, 2, "not called again once decided");
}

#[test]
fn a_fail_stop_fires_at_the_default_threshold_on_the_first_fail() {
    let (r, _) = run(
        vec![arm(0, 1.0, false, None, FAIL)],
        vec![fail_at(2)],
        1.0,
        &calls(4),
    );
    let r = r.unwrap();
    assert_eq!(r.reason, EarlyStopReason::CriterionFailed);
    assert_eq!(r.event_index, 2);
}

#[test]
fn the_fail_stop_waits_for_pass_capable_criteria() {
    // coder_eval's early_stop_weighted_high_weight_kills_run: a 0.2 positive (on_pass:
    // stop) and a 0.8 distractor; threshold 0.7; curl (the misfire) runs first.
    let arming = vec![
        arm(0, 0.2, true, None, PASS),
        arm(1, 0.8, false, None, FAIL),
    ];
    let (r, _) = run(arming.clone(), vec![pass_at(6), fail_at(2)], 0.7, &calls(5));
    let r = r.unwrap();
    assert_eq!(
        r.reason,
        EarlyStopReason::CriterionFailed,
        "the ceiling 0.2 < 0.7"
    );
    assert_eq!(r.event_index, 6, "held until the positive decided");
    assert_eq!(r.deciding_index, 1);
    // The positive never decides: the misfire waits to the end (no stop).
    let (r, _) = run(arming, vec![never(), fail_at(2)], 0.7, &calls(5));
    assert_eq!(r, None);
}

#[test]
fn a_low_weight_fail_is_absorbed() {
    // coder_eval's early_stop_weighted_low_weight_absorbed: 0.8 positive, 0.2 distractor.
    let arming = vec![
        arm(0, 0.8, true, None, PASS),
        arm(1, 0.2, false, None, FAIL),
    ];
    let (r, _) = run(arming, vec![pass_at(6), fail_at(2)], 0.7, &calls(5));
    let r = r.unwrap();
    assert_eq!(
        r.reason,
        EarlyStopReason::CriterionPassed,
        "ceiling 0.8 ≥ 0.7; floor 1.0"
    );
    assert_eq!(r.event_index, 6);
    assert_eq!(r.deciding_index, 0);
}

#[test]
fn a_distractor_only_run_fails_on_the_first_misfire() {
    let arming = vec![
        arm(0, 1.0, false, None, FAIL),
        arm(1, 1.0, false, None, FAIL),
    ];
    let (r, _) = run(arming, vec![never(), fail_at(3)], 1.0, &calls(4));
    assert_eq!(r.unwrap().event_index, 3);
}

#[test]
fn decide_within_counts_finished_calls_and_waits_for_calls_in_flight() {
    let arming = vec![arm(0, 1.0, false, Some(3), PASS)];
    let (r, stop) = run(arming.clone(), vec![never()], 1.0, &calls(5));
    let r = r.unwrap();
    assert_eq!(r.reason, EarlyStopReason::DecisionBudgetExceeded);
    assert_eq!(r.event_index, 5, "the end of the third call");
    assert_eq!(r.tool_call_index, 3);
    assert!(stop.verdicts()[0].contains("decide_within 3"));
    // Deciding on the third call's end beats the budget.
    let (r, _) = run(arming.clone(), vec![pass_at(5)], 1.0, &calls(5));
    assert_eq!(r, None, "passed, on_pass: continue");
    // Two calls in flight at once: the budget waits for both.
    let mut t = calls(2);
    let mut late = calls(4);
    late.drain(..4);
    // t0 start, t1 start, t0 end, t1 end, then t2, t3.
    t.swap(1, 2);
    t.extend(late);
    let (r, _) = run(
        vec![arm(0, 1.0, false, Some(1), PASS)],
        vec![never()],
        1.0,
        &t,
    );
    assert_eq!(r.unwrap().event_index, 3, "not at t0's end while t1 runs");
}

/// A denied call (refused, or to a tool the CLI does not have) never ran: it does not use
/// up `decide_within`, though it still counts in `tool_call_index` (calls finished).
#[test]
fn decide_within_does_not_count_a_denied_call() {
    let mut t = calls(4);
    if let Event::ToolCallFinished { status, .. } = &mut t[1].event {
        *status = harness_kit::ToolStatus::Denied;
    }
    let (r, _) = run(
        vec![arm(0, 1.0, false, Some(2), PASS)],
        vec![never()],
        1.0,
        &t,
    );
    let r = r.unwrap();
    assert_eq!(r.reason, EarlyStopReason::DecisionBudgetExceeded);
    assert_eq!(
        r.event_index, 5,
        "at the end of the second call that ran (t2)"
    );
    assert_eq!(r.tool_call_index, 3);
}

#[test]
fn decide_within_is_inert_on_a_fail_only_instance() {
    let a = arm(0, 1.0, true, Some(1), FAIL);
    assert_eq!(a.inert_triggers(), ["on_pass: stop", "decide_within"]);
    let (r, _) = run(vec![a], vec![never()], 1.0, &calls(4));
    assert_eq!(r, None);
    assert_eq!(
        arm(0, 1.0, false, None, PASS).inert_triggers(),
        ["the fail trigger"]
    );
}

/// Trial 16u N4 and M5: a pass-only arm (`on_pass: stop`) lists no inert fail trigger,
/// and a `decide_within` arm's fail trigger (its budget running out, the trigger that
/// fired in the README's gate example) is not inert.
#[test]
fn a_pass_only_or_budgeted_arm_has_no_inert_fail_trigger() {
    assert!(arm(0, 1.0, true, None, PASS).inert_triggers().is_empty());
    assert!(
        arm(0, 1.0, false, Some(3), PASS)
            .inert_triggers()
            .is_empty()
    );
}

#[test]
fn a_pass_stop_waits_for_a_pass_capable_sibling_outside_the_subset() {
    let arming = vec![
        arm(0, 1.0, true, None, PASS),
        arm(1, 1.0, false, None, PASS),
    ];
    let (r, _) = run(arming.clone(), vec![pass_at(1), pass_at(5)], 1.0, &calls(4));
    let r = r.unwrap();
    assert_eq!(r.reason, EarlyStopReason::CriterionPassed);
    assert_eq!(r.event_index, 5);
    // The sibling fails instead: the ceiling drops, a fail-stop.
    let (r, _) = run(
        vec![
            arm(0, 1.0, true, None, PASS),
            arm(1, 1.0, false, Some(2), PASS),
        ],
        vec![pass_at(1), never()],
        1.0,
        &calls(4),
    );
    let r = r.unwrap();
    assert_eq!(r.reason, EarlyStopReason::DecisionBudgetExceeded);
    assert_eq!(r.deciding_index, 1);
    assert_eq!(r.event_index, 3);
}

#[test]
fn a_weighted_floor_stops_once_enough_weight_passed() {
    let arming = vec![arm(0, 3.0, true, None, PASS), arm(1, 1.0, true, None, PASS)];
    let (r, _) = run(arming.clone(), vec![pass_at(2), never()], 0.75, &calls(3));
    assert_eq!(r.unwrap().event_index, 2, "floor 3/4 ≥ 0.75");
    let (r, _) = run(arming, vec![never(), pass_at(2)], 0.75, &calls(3));
    assert_eq!(r, None, "floor 1/4");
}

#[test]
fn a_native_fail_wins_over_a_budget_fail_on_the_same_event() {
    let arming = vec![
        arm(0, 1.0, false, Some(1), PASS),
        arm(1, 1.0, false, None, FAIL),
    ];
    let (r, _) = run(arming, vec![never(), fail_at(1)], 1.0, &calls(2));
    let r = r.unwrap();
    assert_eq!(r.reason, EarlyStopReason::CriterionFailed);
    assert_eq!(r.deciding_index, 1);
}

#[test]
fn it_fails_open() {
    let trap = Scripted {
        seen: 0,
        at: Some(1),
        verdict: LiveVerdict::Failed("trap".into()),
        calls: 0,
    };
    let (r, stop) = run(
        vec![arm(0, 1.0, false, None, FAIL)],
        vec![trap],
        1.0,
        &calls(3),
    );
    assert_eq!(r, None);
    assert!(
        stop.disarmed().unwrap().contains("wasm trap"),
        "{:?}",
        stop.disarmed()
    );
    // A verdict the instance said it cannot reach.
    let (r, stop) = run(
        vec![arm(0, 1.0, false, None, PASS)],
        vec![fail_at(0)],
        1.0,
        &calls(3),
    );
    assert_eq!(r, None);
    assert!(stop.disarmed().unwrap().contains("decidability"));
}

#[test]
fn the_armed_gate_is_a_weighted_mean() {
    let w = [0.2, 0.8];
    assert_eq!(armed_gate(&w, &[1.0, 0.0], 0.7), (0.2, false));
    let (s, ok) = armed_gate(&w, &[0.0, 1.0], 0.7);
    assert!((s - 0.8).abs() < 1e-9 && ok);
    assert!(armed_gate(&w, &[1.0, 1.0], 1.0).1);
}

#[test]
fn the_deciding_criterion_of_a_pass_stop_is_the_one_that_completed_the_floor() {
    let arming = vec![
        arm(0, 1.0, true, None, PASS),
        arm(1, 1.0, true, None, PASS),
        arm(2, 1.0, true, None, PASS),
    ];
    // c2 passes first, c0 completes the floor on event 4.
    let (r, _) = run(
        arming.clone(),
        vec![pass_at(4), pass_at(3), pass_at(1)],
        1.0,
        &calls(3),
    );
    assert_eq!(r.unwrap().deciding_index, 0);
    let (r, _) = run(
        arming,
        vec![pass_at(1), pass_at(2), pass_at(4)],
        1.0,
        &calls(3),
    );
    assert_eq!(r.unwrap().deciding_index, 2);
}
