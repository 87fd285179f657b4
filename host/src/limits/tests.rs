//! The unit tests of run limits and durations.

use super::duration::parse_duration;
use super::*;

#[test]
fn a_cap_of_zero_is_refused_naming_the_field() {
    for field in ["max_turns", "max_tool_calls"] {
        let err = serde_yaml_ng::from_str::<RunLimitsSpec>(&format!("{field}: 0"))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(&format!("{field} must be a whole number")),
            "{err}"
        );
    }
    let ok: RunLimitsSpec = serde_yaml_ng::from_str("max_turns: 3").unwrap();
    assert_eq!(ok.max_turns, Some(3));
}

#[test]
fn the_deadline_is_the_earlier_timeout() {
    let task_start = Instant::now();
    let turn_start = task_start + Duration::from_secs(10);
    let limits = |turn: Option<u64>, task: Option<u64>| RunLimitsSpec {
        turn_timeout: turn.map(Duration::from_secs),
        task_timeout: task.map(Duration::from_secs),
        ..Default::default()
    };
    assert_eq!(limits(None, None).deadline(task_start, turn_start), None);
    assert_eq!(
        limits(Some(5), None).deadline(task_start, turn_start),
        Some((turn_start + Duration::from_secs(5), StopReason::TurnTimeout))
    );
    // The task started 10 s before the turn: its 12 s end first.
    assert_eq!(
        limits(Some(5), Some(12)).deadline(task_start, turn_start),
        Some((
            task_start + Duration::from_secs(12),
            StopReason::TaskTimeout
        ))
    );
    // A tie goes to the turn timeout.
    assert_eq!(
        limits(Some(5), Some(15)).deadline(task_start, turn_start),
        Some((turn_start + Duration::from_secs(5), StopReason::TurnTimeout))
    );
}

#[test]
fn native_limits_or_the_backstop_alone() {
    let spec = RunLimitsSpec {
        max_turns: Some(3),
        turn_timeout: Some(Duration::from_millis(1500)),
        ..Default::default()
    };
    assert_eq!(spec.to_cli(true).max_turns, Some(3));
    assert_eq!(spec.to_cli(true).turn_timeout_ms, Some(1500));
    assert_eq!(spec.to_cli(false).max_turns, None);
    assert!(spec.is_set(LimitKind::MaxTurns) && !spec.is_set(LimitKind::MaxToolCalls));
    assert_eq!(spec.record(&[LimitKind::MaxTurns]).native, ["max_turns"]);
}

#[test]
fn durations_read_with_or_without_a_unit() {
    assert_eq!(parse_duration("1500ms"), Ok(1.5));
    assert_eq!(parse_duration(" 90s"), Ok(90.0));
    assert_eq!(parse_duration("5m"), Ok(300.0));
    assert_eq!(parse_duration("2"), Ok(2.0));
    assert!(parse_duration("soon").is_err());
}

#[test]
fn a_huge_duration_is_a_load_error_and_no_deadline_overflows() {
    for (yaml, field) in [
        ("turn_timeout: 1e20", "turn_timeout"),
        ("task_timeout: 1e19", "task_timeout"),
        ("turn_timeout: \"99999999999999h\"", "turn_timeout"),
        ("task_timeout: 2592001", "task_timeout"),
    ] {
        let err = serde_yaml_ng::from_str::<RunLimitsSpec>(yaml).unwrap_err();
        let err = err.to_string();
        assert!(err.contains("at most 30 days"), "{yaml}: {err}");
        assert!(err.contains(field), "{yaml}: {err}");
    }
    let max: RunLimitsSpec = serde_yaml_ng::from_str("task_timeout: 2592000").unwrap();
    assert_eq!(max.task_timeout, Some(Duration::from_secs(2_592_000)));
    // A limit built in code past what an Instant holds: no deadline, no panic.
    let huge = RunLimitsSpec {
        turn_timeout: Some(Duration::MAX),
        task_timeout: Some(Duration::MAX),
        ..RunLimitsSpec::default()
    };
    let now = Instant::now();
    assert_eq!(huge.deadline(now, now), None);
}

/// The files whose timeouts moved into `limits/stop.rs` hold no literal `Duration` or
/// timeout default any more: each takes its named constant, so `stop.rs` stays the one
/// place a reader finds them (M5 of issue 10's trial).
#[test]
fn the_moved_timeouts_are_not_literals_outside_limits() {
    let files = [
        (
            "grading/reference.rs",
            include_str!("../grading/reference.rs"),
        ),
        (
            "grading/judge/client.rs",
            include_str!("../grading/judge/client.rs"),
        ),
        ("grading/python.rs", include_str!("../grading/python.rs")),
        (
            "sandbox/docker/container.rs",
            include_str!("../sandbox/docker/container.rs"),
        ),
        ("export/otlp.rs", include_str!("../export/otlp.rs")),
        ("cli/view.rs", include_str!("../cli/view.rs")),
    ];
    for (name, source) in files {
        // The file's own tests may wait as they like.
        let code = source.split("#[cfg(test)]").next().unwrap_or(source);
        for (n, line) in code.lines().enumerate() {
            let literal = ["from_secs(", "from_millis("].iter().any(|call| {
                line.split(call)
                    .skip(1)
                    .any(|rest| rest.starts_with(|c: char| c.is_ascii_digit()))
            });
            assert!(!literal, "{name}:{}: a literal timeout: {line}", n + 1);
        }
        for named in ["fn sixty", "fn thirty", "fn one_twenty"] {
            assert!(!code.contains(named), "{name}: {named}");
        }
    }
    assert_eq!(
        REFERENCE_COMPARISON_TIMEOUT,
        std::time::Duration::from_secs(30)
    );
    assert_eq!(JUDGE_REQUEST_TIMEOUT, std::time::Duration::from_secs(300));
    assert_eq!(
        (
            PYTEST_TIMEOUT_SECS,
            IMPORT_CHECK_TIMEOUT_SECS,
            PYLINT_TIMEOUT_SECS
        ),
        (60.0, 30.0, 120.0)
    );
}
