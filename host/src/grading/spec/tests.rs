//! Tests of the parent module.

use super::*;
use serde_json::json;

#[derive(Deserialize)]
struct Task {
    #[allow(dead_code)]
    task_id: String,
    success_criteria: Vec<CriterionSpec>,
}

fn load(yaml: &str) -> Result<Vec<CriterionSpec>, serde_yaml_ng::Error> {
    serde_yaml_ng::from_str::<Task>(yaml).map(|t| t.success_criteria)
}

#[test]
fn reads_common_keys_and_flattened_params() {
    let specs = load(
        "task_id: t\nsuccess_criteria:\n  - type: file_contains\n    path: app.py\n    includes: [print]\n    weight: 2\n    description: prints\n  - type: file_exists\n    path: app.py\n",
    )
    .unwrap();
    assert_eq!(specs[0].kind, "file_contains");
    assert_eq!(specs[0].weight, 2.0);
    assert_eq!(specs[0].pass_threshold, 0.9);
    assert_eq!(specs[0].description.as_deref(), Some("prints"));
    assert_eq!(
        Value::Object(specs[0].params.clone()),
        json!({"path": "app.py", "includes": ["print"]})
    );
    assert_eq!(specs[1].weight, 1.0);
    // Serializing gives the task file's shape back.
    let back = serde_json::to_value(&specs[0]).unwrap();
    assert_eq!(
        back,
        json!({"type": "file_contains", "description": "prints", "weight": 2.0, "pass_threshold": 0.9, "path": "app.py", "includes": ["print"]})
    );
}

#[test]
fn a_bad_regex_is_rejected_at_its_own_line() {
    // Line 7 holds the bad regex (lines counted from 1).
    let yaml = "task_id: t\n\
                success_criteria:\n  \
                - type: file_exists\n    \
                path: app.py\n  \
                - type: file_matches_regex\n    \
                path: app.py\n    \
                pattern: \"print(\"\n    \
                description: prints\n";
    assert_eq!(yaml.lines().nth(6).unwrap().trim(), "pattern: \"print(\"");
    let err = load(yaml).unwrap_err();
    let location = err.location().expect("a position");
    assert_eq!(location.line(), 7, "{err}");
    let text = err.to_string();
    assert!(text.contains("line 7"), "{text}");
    assert!(
        text.contains("criterion `file_matches_regex`: invalid regex `print(`"),
        "{text}"
    );
    assert!(text.starts_with("success_criteria[1].pattern"), "{text}");
}

#[test]
fn nested_regexes_are_located_too() {
    let yaml = "task_id: t\nsuccess_criteria:\n  - type: file_check\n    path: a.py\n    patterns:\n      - pattern: ok\n      - pattern: \"[\"\n";
    let err = load(yaml).unwrap_err();
    assert_eq!(err.location().unwrap().line(), 7, "{err}");
    let yaml = "task_id: t\nsuccess_criteria:\n  - type: json_check\n    path: a.json\n    assertions:\n      - expression: a\n        operator: regex\n        expected: \"(\"\n";
    let err = load(yaml).unwrap_err();
    assert_eq!(err.location().unwrap().line(), 8, "{err}");
    let yaml = "task_id: t\nsuccess_criteria:\n  - type: command_executed\n    command_pattern: \"python3 app\\\\.py\"\n    exclude_pattern: \"*\"\n";
    let err = load(yaml).unwrap_err();
    assert_eq!(err.location().unwrap().line(), 5, "{err}");
}

#[test]
fn other_mistakes_point_at_the_criterion() {
    let cases = [
        (
            "  - type: file_exsts\n    path: a\n",
            "unknown criterion type `file_exsts` (did you mean `file_exists`?)",
        ),
        (
            "  - type: file_exists\n    paht: a\n",
            "unknown field `paht`",
        ),
        ("  - type: file_exists\n", "missing field `path`"),
        (
            "  - type: file_exists\n    path: a\n    weight: -1\n",
            "weight must be ≥ 0",
        ),
        (
            "  - type: file_exists\n    path: a\n    pass_threshold: 2\n",
            "pass_threshold must be between 0 and 1",
        ),
        (
            "  - type: command_executed\n    min_count: 3\n    max_count: 1\n",
            "max_count (1) must be >= min_count (3)",
        ),
        (
            "  - type: component\n    params: {a: 1}\n",
            "missing `component`",
        ),
        (
            "  - type: component\n    component: g.wasm\n    extra: 1\n",
            "unknown key `extra`",
        ),
        (
            "  - type: run_command\n    timeout: 5\n",
            "missing field `command`",
        ),
        ("  - path: a\n", "missing field `type`"),
        (
            "  - type: run_comand\n    command: x\n",
            "unknown criterion type `run_comand` (did you mean `run_command`?)",
        ),
        // Nothing close: no guess, the known types only.
        (
            "  - type: zzz\n",
            "unknown criterion type `zzz`; known: file_exists",
        ),
    ];
    for (entry, want) in cases {
        let yaml =
            format!("task_id: t\nsuccess_criteria:\n  - type: file_exists\n    path: ok\n{entry}");
        let err = load(&yaml).unwrap_err();
        assert!(err.to_string().contains(want), "{entry:?}: {err}");
        assert_eq!(
            err.location().map(|l| l.line()),
            Some(5),
            "{entry:?}: {err}"
        );
    }
    // A path leaving the workspace is caught where it is written.
    let err = load("task_id: t\nsuccess_criteria:\n  - type: file_exists\n    path: ../secret\n")
        .unwrap_err();
    assert_eq!(err.location().unwrap().line(), 4, "{err}");
    assert!(err.to_string().contains("leaves the workspace"), "{err}");
}

#[test]
fn type_after_the_params_is_still_validated() {
    let err = load("task_id: t\nsuccess_criteria:\n  - pattern: \"(\"\n    path: a\n    type: file_matches_regex\n").unwrap_err();
    assert!(err.to_string().contains("invalid regex"), "{err}");
    assert_eq!(err.location().unwrap().line(), 3, "{err}");
}

#[test]
fn validate_covers_every_builtin_family() {
    for (kind, params) in [
        ("file_exists", json!({"path": "a"})),
        ("json_check", json!({"path": "a.json"})),
        ("command_executed", json!({"command_pattern": "x"})),
        ("classification_match", json!({"expected_label": "a"})),
        ("run_command", json!({"command": "true"})),
        (
            "component",
            json!({"component": "g.wasm", "params": {"x": 1}}),
        ),
    ] {
        CriterionSpec::new(kind, params.clone()).unwrap_or_else(|e| panic!("{kind}: {e}"));
    }
    assert!(CriterionSpec::new("nope", json!({})).is_err());
    // Parsed once: what grading runs is typed.
    let spec = CriterionSpec::new("run_command", json!({"command": "true"})).unwrap();
    assert!(matches!(spec.criterion, Criterion::RunCommand(_)) && !spec.is_read_only());
    let spec = CriterionSpec::new("classification_match", json!({"expected_label": "a"}));
    assert!(matches!(
        spec.unwrap().criterion,
        Criterion::Builtin {
            wants_final_text: true,
            ..
        }
    ));
}
