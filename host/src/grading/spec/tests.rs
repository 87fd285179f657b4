//! Tests of the parent module.

use super::*;
use serde::Deserialize;
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
fn coder_eval_types_load_with_their_defaults() {
    let specs = load(
        "task_id: t\nsuccess_criteria:\n\
         - {type: llm_judge, prompt: grade it}\n\
         - {type: agent_judge, prompt: grade it, pass_threshold: 0.5}\n\
         - {type: reference_comparison, agent_file: a.py, reference_file: a.py, similarity_threshold: 0.6}\n\
         - {type: pytest, args: [-q]}\n\
         - {type: import_check, path: main.py}\n\
         - {type: cli_called, verb: ixp projects get, flags: {output: {absent: true}}, ignore_flags: []}\n\
         - {type: classification_match, expected_label: a, allowed_labels: [a, b], suite_thresholds: {accuracy: 0.8, recall.a: 0.5}}\n\n\
         - {type: pylint_score, path: src, min_score: 8.5}\n\
         - {type: program_stdout_equals, command: echo hi, expected_output: hi}\n",
    )
    .unwrap();
    let thresholds: Vec<f64> = specs.iter().map(|s| s.pass_threshold).collect();
    assert_eq!(thresholds, [0.7, 0.5, 0.6, 0.9, 0.9, 0.9, 0.9, 0.85, 0.9]);
    assert_eq!(specs[6].suite_thresholds.as_ref().unwrap()["recall.a"], 0.5);
    // suite_thresholds is not a param.
    assert!(!specs[6].params.contains_key("suite_thresholds"));
    assert!(!specs[0].is_read_only() && specs[2].is_read_only());
}

#[test]
fn new_types_report_mistakes_at_their_line() {
    let cases = [
        // (entry, line of the error, text)
        (
            "  - type: uipath_eval\n    agent_name: a\n    eval_set: e\n    thresholds: {accuracy: 0.8}\n",
            5,
            "criterion type `uipath_eval` belongs to a vendor plugin",
        ),
        (
            "  - type: system_one_judge\n    prompt: p\n",
            5,
            "belongs to a vendor plugin",
        ),
        (
            "  - type: cli_called\n    verb: a\n    flags:\n      model: {matches_regex: \"(\"}\n",
            8,
            "invalid regex `(`",
        ),
        (
            "  - type: pytest\n    path: ../tests\n",
            6,
            "leaves the workspace",
        ),
        (
            "  - type: reference_comparison\n    agent_file: a.py\n    reference_file: a.py\n    comparison_method: diff\n",
            5,
            "comparison_method must be ast, token or complexity",
        ),
        (
            "  - type: llm_judge\n    prompt: p\n    capture_transcripts: false\n",
            5,
            "unknown field `capture_transcripts`",
        ),
        (
            "  - type: llm_judge\n    prompt: p\n    verdict_channel: text\n",
            5,
            "verdict_channel was removed",
        ),
        (
            "  - type: file_exists\n    path: a\n    suite_thresholds: {acuracy: 0.9}\n",
            5,
            "unknown metric `acuracy`",
        ),
        (
            "  - type: skill_triggered\n    skill_name: s\n    weight: 0\n    suite_thresholds: {recall.yes: 0.9}\n",
            5,
            "cannot also set suite_thresholds",
        ),
        (
            "  - type: pytst\n",
            5,
            "unknown criterion type `pytst` (did you mean `pytest`?)",
        ),
    ];
    for (entry, line, want) in cases {
        let yaml =
            format!("task_id: t\nsuccess_criteria:\n  - type: file_exists\n    path: ok\n{entry}");
        let err = load(&yaml).unwrap_err();
        assert!(err.to_string().contains(want), "{entry:?}: {err}");
        assert_eq!(
            err.location().map(|l| l.line()),
            Some(line),
            "{entry:?}: {err}"
        );
    }
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

/// The host-native criteria grade from the params parsed at load: the spec's raw params,
/// clobbered after loading, are never read again (a grade-time re-parse would fail each
/// with `invalid_criterion`).
#[tokio::test]
async fn host_criteria_grade_from_the_params_parsed_at_load() {
    let ws = criteria_common::scratch_workspace("host-typed");
    // (type, params, the outcome when graded from them: an error kind, or `ok` with the score)
    let cases = [
        ("pytest", json!({"timeout": 5}), "spawn"),
        ("pylint_score", json!({"path": "src"}), "spawn"),
        ("import_check", json!({"path": "gone.py"}), "missing_file"),
        (
            "reference_comparison",
            json!({"agent_file": "a.py"}),
            "no_reference",
        ),
        (
            "llm_judge",
            json!({"prompt": "p", "enabled": false}),
            "ok 1",
        ),
        (
            "agent_judge",
            json!({"prompt": "p", "enabled": false}),
            "ok 1",
        ),
    ];
    let mut specs = Vec::new();
    for (kind, params, _) in &cases {
        let mut spec = CriterionSpec::new(kind, params.clone()).unwrap();
        spec.params = Map::from_iter([("bogus".to_string(), json!(1))]);
        specs.push(spec);
    }
    let mut ctx = crate::grading::GradeContext::new(&ws, &ws, &[], "", None);
    ctx.path = Some("/nonexistent");
    let results = crate::grading::grade_all(&specs, &ctx).await;
    for ((kind, _, want), r) in cases.iter().zip(&results) {
        let got = match &r.error {
            Some(e) => e.kind.clone(),
            None => format!("ok {}", r.score),
        };
        assert_eq!(&got, want, "{kind}: {}", r.details);
    }
}
