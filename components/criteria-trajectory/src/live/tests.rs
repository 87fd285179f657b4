use super::*;
use crate::grade;
use grader_kit::build::{shell, tool_end, tool_start};
use grader_kit::{GradingInput, watch_all};
use serde_json::json;

fn arm(params: Value) -> TrajectoryWatch {
    TrajectoryWatch::arm(&params, "").unwrap()
}

fn decidability(params: Value) -> (bool, bool) {
    let d = arm(params).decidability();
    (d.can_pass, d.can_fail)
}

/// The first decided verdict and the index of the event that decided it.
fn first(params: Value, events: &[StampedEvent]) -> (LiveVerdict, Option<usize>) {
    watch_all::<TrajectoryWatch>(&params, events).unwrap()
}

/// The batch score of `params` on `events`.
fn batch(params: &Value, events: &[StampedEvent]) -> f64 {
    let mut input = GradingInput::new(params.clone(), "/nonexistent");
    input.trajectory = events.to_vec();
    grade(&input).unwrap().score
}

fn ce(extra: Value) -> Value {
    let mut p = json!({"type": "command_executed", "tool_name": "Bash"});
    p.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    p
}

#[test]
fn command_executed_decidability_follows_the_bounds() {
    assert_eq!(decidability(ce(json!({"min_count": 1}))), (true, false));
    assert_eq!(decidability(ce(json!({"min_count": 3}))), (true, false));
    assert_eq!(
        decidability(ce(json!({"min_count": 0, "max_count": 0}))),
        (false, true)
    );
    assert_eq!(
        decidability(ce(json!({"min_count": 1, "max_count": 2}))),
        (false, true),
        "a bounded pass is only final at the end of the run"
    );
    assert_eq!(
        decidability(ce(json!({"min_count": 0}))),
        (false, false),
        "min_count 0 without max_count always scores 1: nothing to decide"
    );
}

#[test]
fn skill_triggered_decidability_follows_the_row() {
    let p = |expected: Value| {
        let mut p = json!({"type": "skill_triggered", "skill_name": "pdf"});
        if !expected.is_null() {
            p["expected_skill"] = expected;
        }
        decidability(p)
    };
    assert_eq!(p(Value::Null), (true, false), "positive row");
    assert_eq!(p(json!("pdf")), (true, false), "positive row");
    assert_eq!(p(json!("")), (false, true), "distractor row");
    assert_eq!(p(json!("xlsx")), (false, true), "another skill's row");
}

#[test]
fn only_live_types_arm() {
    for kind in ["commands_efficiency", "classification_match", "nope"] {
        let err = TrajectoryWatch::arm(&json!({"type": kind, "expected_commands": 1}), "")
            .err()
            .unwrap();
        assert!(err.contains("cannot be judged live"), "{err}");
    }
    let err = TrajectoryWatch::arm(
        &json!({"type": "command_executed", "command_pattern": "("}),
        "",
    )
    .err()
    .unwrap();
    assert!(err.contains("command_pattern"), "{err}");
}

fn run(commands: &[(&str, bool)]) -> Vec<StampedEvent> {
    let mut t = Vec::new();
    for (i, (cmd, ok)) in commands.iter().enumerate() {
        t.extend(shell(&format!("c{i}"), "Bash", cmd, *ok));
    }
    t
}

#[test]
fn command_executed_passes_at_the_end_of_the_matching_call() {
    let t = run(&[("ls", true), ("python app.py", true), ("cat x", true)]);
    let p = ce(json!({"command_pattern": "python app\\.py"}));
    let (v, at) = first(p.clone(), &t);
    assert_eq!(v, LiveVerdict::Passed(1.0));
    assert_eq!(at, Some(3), "the end of the second call: it ran");
    assert_eq!(batch(&p, &t[..=3]), 1.0, "batch agrees on the prefix");
    assert!(
        batch(&p, &t[..3]) < 0.9,
        "and not before: a call that only started is not known to have run"
    );
}

#[test]
fn a_call_that_never_ran_neither_passes_nor_fails() {
    // The host stopped the CLI as the call started (no end), or the CLI refused it.
    let interrupted = vec![tool_start(
        0,
        "c0",
        "Bash",
        json!({"command": "echo step 2"}),
    )];
    let mut denied = interrupted.clone();
    denied.push(tool_end(1, "c0", ToolStatus::Denied, None));
    for (what, t) in [("interrupted", &interrupted), ("denied", &denied)] {
        let pass = ce(json!({"command_pattern": "step 2"}));
        assert_eq!(
            first(pass.clone(), t),
            (LiveVerdict::Undecided, None),
            "{what}"
        );
        assert_eq!(batch(&pass, t), 0.0, "{what}: batch agrees");
        let must_not = ce(json!({"command_pattern": "step 2", "min_count": 0, "max_count": 0}));
        assert_eq!(
            first(must_not.clone(), t),
            (LiveVerdict::Undecided, None),
            "{what}"
        );
        assert_eq!(batch(&must_not, t), 1.0, "{what}: batch agrees");
        // Attempts count: as the call starts, live and batch alike.
        let attempt = ce(json!({"command_pattern": "step 2", "count_attempts": true}));
        assert_eq!(
            first(attempt.clone(), t),
            (LiveVerdict::Passed(1.0), Some(0)),
            "{what}"
        );
        assert_eq!(batch(&attempt, &t[..1]), 1.0, "{what}");
        let forbidden = ce(
            json!({"command_pattern": "step 2", "min_count": 0, "max_count": 0,
            "count_attempts": true}),
        );
        assert!(
            matches!(
                first(forbidden.clone(), t),
                (LiveVerdict::Failed(_), Some(0))
            ),
            "{what}"
        );
        assert_eq!(batch(&forbidden, &t[..1]), 0.0, "{what}");
    }
}

#[test]
fn require_success_waits_for_a_successful_end() {
    let t = run(&[("python app.py", false), ("python app.py", true)]);
    let p = ce(json!({"command_pattern": "python app\\.py", "require_success": true}));
    let (v, at) = first(p.clone(), &t);
    assert_eq!(v, LiveVerdict::Passed(1.0));
    assert_eq!(at, Some(3), "the end of the second, successful call");
    assert_eq!(batch(&p, &t[..=3]), 1.0);
    assert!(batch(&p, &t[..3]) < 0.9);
}

#[test]
fn a_bounded_range_fails_when_overrun_and_never_passes() {
    // coder_eval's early_stop_contract_bounded_pass: four `echo ping`, allowed 1..=2.
    let t = run(&[
        ("echo ping", true),
        ("echo ping", true),
        ("echo ping", true),
        ("echo ping", true),
    ]);
    let p = ce(json!({"command_pattern": "echo ping", "min_count": 1, "max_count": 2}));
    let (v, at) = first(p.clone(), &t);
    assert!(
        matches!(&v, LiveVerdict::Failed(why) if why.contains("3 matching calls")),
        "{v:?}"
    );
    assert_eq!(at, Some(5), "the end of the third call");
    assert_eq!(batch(&p, &t[..=5]), 0.0);
    assert_eq!(
        batch(&p, &t[..5]),
        1.0,
        "compliant before it: undecided, not passed"
    );
}

#[test]
fn must_not_run_fails_on_the_first_match() {
    let t = run(&[("ls", true), ("curl -sI https://example.com", true)]);
    let p = ce(json!({"command_pattern": "curl", "min_count": 0, "max_count": 0}));
    let (v, at) = first(p, &t);
    assert!(matches!(v, LiveVerdict::Failed(_)));
    assert_eq!(at, Some(3), "once it ran");
    let p = ce(json!({"command_pattern": "wget", "min_count": 0, "max_count": 0}));
    assert_eq!(first(p, &t), (LiveVerdict::Undecided, None));
}

#[test]
fn exclude_pattern_and_wrappers_count_as_in_the_batch_grade() {
    let mut t = Vec::new();
    t.extend(shell("a", "exec_command", "bash -lc 'pytest -x'", true));
    t.extend(shell("b", "Bash", "pytest --collect-only", true));
    let p = json!({"type": "command_executed", "tool_name": "Bash",
        "command_pattern": "^pytest", "exclude_pattern": "collect", "min_count": 2});
    assert_eq!(first(p.clone(), &t), (LiveVerdict::Undecided, None));
    assert_eq!(batch(&p, &t), 0.5);
    let p1 = json!({"type": "command_executed", "tool_name": "Bash",
        "command_pattern": "^pytest", "exclude_pattern": "collect"});
    assert_eq!(first(p1, &t), (LiveVerdict::Passed(1.0), Some(1)));
}

fn skill_call(id: &str, skill: &str) -> Vec<StampedEvent> {
    vec![
        tool_start(0, id, "Skill", json!({"skill": format!("plugin:{skill}")})),
        tool_end(1, id, ToolStatus::Ok, None),
    ]
}

#[test]
fn skill_triggered_decides_when_the_engaging_call_finishes() {
    let mut t = run(&[("ls", true)]);
    t.extend(skill_call("s", "pdf"));
    let positive = json!({"type": "skill_triggered", "skill_name": "pdf"});
    assert_eq!(
        first(positive.clone(), &t),
        (LiveVerdict::Passed(1.0), Some(3))
    );
    assert_eq!(batch(&positive, &t[..=3]), 1.0);
    let distractor = json!({"type": "skill_triggered", "skill_name": "pdf", "expected_skill": ""});
    let (v, at) = first(distractor.clone(), &t);
    assert!(
        matches!(&v, LiveVerdict::Failed(why) if why.contains("expects no skill")),
        "{v:?}"
    );
    assert_eq!(at, Some(3));
    assert_eq!(batch(&distractor, &t[..=3]), 0.0);
    // Another skill, or a read of the skill's files, by path.
    let other = json!({"type": "skill_triggered", "skill_name": "xlsx"});
    assert_eq!(first(other.clone(), &t), (LiveVerdict::Undecided, None));
    let mut by_path = t.clone();
    by_path.push(tool_start(
        5,
        "r",
        "Read",
        json!({"file_path": "/h/.claude/skills/xlsx/SKILL.md"}),
    ));
    assert_eq!(
        first(other.clone(), &by_path),
        (LiveVerdict::Undecided, None),
        "still in flight"
    );
    by_path.push(tool_end(6, "r", ToolStatus::Ok, None));
    assert_eq!(first(other, &by_path), (LiveVerdict::Passed(1.0), Some(5)));
}
