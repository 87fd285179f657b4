use super::*;
use criteria_common::{kinds_in, with_each_bad_value};
use grader_kit::build::{final_result, message, shell, tool_end, tool_start};
use grader_kit::{StampedEvent, ToolStatus};
use serde_json::json;

fn input(params: Value, trajectory: Vec<StampedEvent>) -> GradingInput {
    let mut input = GradingInput::new(params, "/nonexistent");
    input.trajectory = trajectory;
    input
}

fn hello_date() -> Vec<StampedEvent> {
    let mut t = vec![
        tool_start(
            0,
            "w",
            "Write",
            json!({"file_path": "/w/app.py", "content": "print(1)"}),
        ),
        tool_end(1, "w", ToolStatus::Ok, None),
    ];
    t.extend(shell("a", "Bash", "python3 app.py", true));
    t.extend(shell(
        "b",
        "exec_command",
        "bash -lc 'python3 app.py --date'",
        true,
    ));
    t.extend(shell("c", "Bash", "rm -rf build", false));
    t
}

fn score(params: Value, t: Vec<StampedEvent>) -> f64 {
    grade(&input(params, t)).unwrap().score
}

#[test]
fn command_executed_counts_matches() {
    let t = hello_date();
    let ce = |extra: Value| {
        let mut p = json!({"type": "command_executed"});
        p.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        score(p, t.clone())
    };
    assert_eq!(ce(json!({"command_pattern": "^python3 app\\.py"})), 1.0);
    assert_eq!(
        ce(json!({"command_pattern": "^python3 app\\.py", "min_count": 2})),
        1.0,
        "the wrapped one counts once unwrapped"
    );
    assert_eq!(
        ce(json!({"command_pattern": "^python3 app\\.py", "min_count": 4})),
        0.5
    );
    assert_eq!(
        ce(json!({"command_pattern": "python3", "exclude_pattern": "--date"})),
        1.0
    );
    assert_eq!(
        ce(json!({"command_pattern": "python3", "exclude_pattern": "--date", "min_count": 2})),
        0.5
    );
    assert_eq!(
        ce(json!({"tool_name": "exec_command", "command_pattern": "python3", "min_count": 2})),
        0.5
    );
    assert_eq!(
        ce(json!({"tool_name": "Bash", "command_pattern": "python3", "min_count": 2})),
        1.0,
        "Bash matches every shell tool"
    );
    assert_eq!(
        ce(json!({"tool_name": "Write", "command_pattern": "app\\.py"})),
        1.0,
        "non-shell tools match on their JSON input"
    );
    assert_eq!(
        ce(json!({"command_pattern": "rm -rf", "require_success": true})),
        0.0
    );
    assert_eq!(ce(json!({"command_pattern": "rm -rf"})), 1.0);
    assert_eq!(
        ce(json!({"command_pattern": "rm -rf", "min_count": 0, "max_count": 0})),
        0.0,
        "must not run"
    );
    assert_eq!(
        ce(json!({"command_pattern": "curl", "min_count": 0, "max_count": 0})),
        1.0
    );
    assert_eq!(
        ce(json!({"command_pattern": "python3", "min_count": 1, "max_count": 1})),
        0.0,
        "two is too many"
    );
    assert_eq!(ce(json!({"command_pattern": "curl"})), 0.0);
    assert_eq!(
        score(
            json!({"type": "command_executed", "min_count": 0, "max_count": 0}),
            vec![]
        ),
        1.0
    );
}

#[test]
fn a_denied_call_was_not_executed_unless_attempts_count() {
    let trajectory = vec![
        tool_start(1, "t1", "Bash", json!({"command": "rm -rf build"})),
        tool_end(2, "t1", ToolStatus::Denied, None),
    ];
    let ce = |params: Value| {
        let mut params = params;
        params["type"] = json!("command_executed");
        score(params, trajectory.clone())
    };
    assert_eq!(
        ce(json!({"command_pattern": "rm -rf"})),
        0.0,
        "it never ran"
    );
    assert_eq!(
        ce(json!({"command_pattern": "rm -rf", "count_attempts": true})),
        1.0,
        "it was attempted"
    );
    assert_eq!(
        ce(json!({"command_pattern": "rm -rf", "min_count": 0, "max_count": 0})),
        1.0,
        "a refused attempt did not run"
    );
}

#[test]
fn command_executed_details_show_examples() {
    let v = grade(&input(
        json!({"type": "command_executed", "command_pattern": "python3"}),
        hello_date(),
    ))
    .unwrap();
    assert!(
        v.details.starts_with("2/1 required matches"),
        "{}",
        v.details
    );
    assert!(v.details.contains("\"python3 app.py\""), "{}", v.details);
}

#[test]
fn commands_efficiency_scores_against_the_budget() {
    let p = |n: u32| json!({"type": "commands_efficiency", "expected_commands": n});
    assert_eq!(score(p(4), hello_date()), 1.0);
    assert_eq!(score(p(8), hello_date()), 1.0);
    assert_eq!(score(p(2), hello_date()), 0.5);
    assert_eq!(score(p(1), vec![]), 1.0);
}

#[test]
fn skill_triggered_by_tool_or_by_reading_its_files() {
    let skill_call = vec![
        tool_start(0, "s", "Skill", json!({"skill": "plugin:pdf-tools"})),
        tool_end(1, "s", ToolStatus::Ok, None),
    ];
    let p = json!({"type": "skill_triggered", "skill_name": "pdf-tools"});
    assert_eq!(score(p.clone(), skill_call.clone()), 1.0);
    let read = shell(
        "r",
        "exec_command",
        "cat ~/.codex/skills/pdf-tools/SKILL.md",
        true,
    );
    assert_eq!(score(p.clone(), read), 1.0);
    let argv = vec![tool_start(
        0,
        "r",
        "exec_command",
        json!({"cmd": ["bash", "-lc", "cat skills\\pdf-tools\\x"]}),
    )];
    assert_eq!(score(p.clone(), argv), 1.0);
    assert_eq!(score(p.clone(), hello_date()), 0.0);
    let negative =
        json!({"type": "skill_triggered", "skill_name": "pdf-tools", "expected_skill": ""});
    assert_eq!(score(negative.clone(), hello_date()), 1.0);
    assert_eq!(score(negative, skill_call), 0.0);
    let other = shell("r", "Bash", "cat skills/pdf-tools-extra/SKILL.md", true);
    assert_eq!(
        score(p, other),
        0.0,
        "another skill's folder does not count"
    );
}

#[test]
fn classification_match_reads_the_final_text() {
    let t = |text: &str| vec![message(0, "m", "thinking"), final_result(1, Some(text))];
    let p = json!({"type": "classification_match", "expected_label": "positive", "allowed_labels": ["positive", "negative"]});
    assert_eq!(score(p.clone(), t("Positive")), 1.0);
    assert_eq!(score(p.clone(), t("The sentiment is positive.")), 1.0);
    assert_eq!(score(p.clone(), t("negative")), 0.0);
    let v = grade(&input(p.clone(), t("positive or negative"))).unwrap();
    assert!(v.details.contains("(ambiguous)"), "{}", v.details);
    let v = grade(&input(p.clone(), t("neutral"))).unwrap();
    assert!(v.details.contains("(other)"), "{}", v.details);
    let v = grade(&input(p.clone(), vec![])).unwrap();
    assert_eq!(v.score, 0.0);
    assert!(v.details.contains("(none)"), "{}", v.details);
    assert_eq!(score(p.clone(), t("nonpositive")), 0.0, "whole words only");
    let sensitive =
        json!({"type": "classification_match", "expected_label": "Yes", "case_sensitive": true});
    assert_eq!(score(sensitive.clone(), t("yes")), 0.0);
    assert_eq!(score(sensitive, t("Yes")), 1.0);
    let mut with_host_text = p.clone();
    with_host_text["final_text"] = json!("negative");
    assert_eq!(
        score(with_host_text, t("positive")),
        0.0,
        "the host's final text wins"
    );
}

#[test]
fn classification_match_reads_a_file() {
    let dir = criteria_common::scratch_workspace("classify");
    std::fs::write(dir.join("label.txt"), "negative\n").unwrap();
    let mut i = input(
        json!({"type": "classification_match", "expected_label": "negative", "path": "label.txt"}),
        vec![],
    );
    i.workspace = dir.to_str().unwrap().to_string();
    assert_eq!(grade(&i).unwrap().score, 1.0);
    i.params["path"] = json!("missing.txt");
    let v = grade(&i).unwrap();
    assert_eq!(v.score, 0.0);
    assert!(v.details.contains("does not exist"), "{}", v.details);
}

#[test]
fn bad_params_are_rejected() {
    let bad = [
        json!({"type": "command_executed", "command_pattern": "(unclosed"}),
        json!({"type": "command_executed", "exclude_pattern": "["}),
        json!({"type": "command_executed", "min_count": 2, "max_count": 1}),
        json!({"type": "command_executed", "min_count": -1}),
        json!({"type": "command_executed", "tool": "Bash"}),
        json!({"type": "commands_efficiency", "expected_commands": 0}),
        json!({"type": "commands_efficiency"}),
        json!({"type": "skill_triggered", "skill_name": " "}),
        json!({"type": "classification_match", "expected_label": "x", "allowed_labels": ["a", "b"]}),
        json!({"type": "classification_match", "expected_label": "x", "path": "/etc/x"}),
        json!({"type": "classification_match"}),
        json!({"type": "unknown_thing"}),
    ];
    for params in bad {
        assert!(validate(&params).is_err(), "{params} must be rejected");
    }
}

#[test]
fn param_kind_names_the_regexes_and_paths() {
    use ParamKind::{Regex, WorkspacePath};
    let kinds = |params: Value| kinds_in(param_kind, &params);
    assert_eq!(
        kinds(json!({"type": "command_executed", "tool_name": "Bash",
            "command_pattern": "pytest", "exclude_pattern": "-k"})),
        [
            ("command_pattern".into(), Regex),
            ("exclude_pattern".into(), Regex)
        ]
    );
    assert_eq!(
        kinds(json!({"type": "classification_match", "path": "label.txt",
            "expected_label": "a", "allowed_labels": ["a", "b"]})),
        [("path".into(), WorkspacePath)]
    );
    assert_eq!(
        kinds(json!({"type": "skill_triggered", "skill_name": "(", "expected_skill": "../x"})),
        []
    );
    assert_eq!(
        kinds(json!({"type": "file_matches_regex", "pattern": "x"})),
        []
    );
}

#[test]
fn validate_rejects_what_param_kind_names() {
    for params in [
        json!({"type": "command_executed", "command_pattern": "x", "exclude_pattern": "y"}),
        json!({"type": "classification_match", "path": "label.txt", "expected_label": "a"}),
    ] {
        assert_eq!(validate(&params), Ok(()));
        for (name, broken) in with_each_bad_value(param_kind, &params) {
            assert!(validate(&broken).is_err(), "{name}: {broken}");
        }
    }
}
