use super::*;
use criteria_common::scratch_workspace;
use criteria_common::{kinds_in, with_each_bad_value};
use serde_json::json;

fn workspace(name: &str) -> String {
    let dir = scratch_workspace(name);
    std::fs::write(
        dir.join("out.json"),
        r#"{"name": "demo", "version": 2, "ratio": 0.5, "tags": ["a", "bb"], "meta": {"ok": true, "note": null}}"#,
    )
    .unwrap();
    std::fs::write(dir.join("bad.json"), "{ not json").unwrap();
    std::fs::write(
        dir.join("schema.json"),
        r#"{"type": "object", "required": ["name", "version"], "properties": {"version": {"type": "integer"}}}"#,
    )
    .unwrap();
    dir.to_str().unwrap().to_string()
}

fn run(ws: &str, extra: Value) -> Result<Verdict, String> {
    let mut params = json!({"type": "json_check", "path": "out.json"});
    params
        .as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    grade(&GradingInput::new(params, ws))
}

#[test]
fn valid_json_alone_passes() {
    let ws = workspace("valid");
    let v = run(&ws, json!({})).unwrap();
    assert_eq!(v.score, 1.0, "{}", v.details);
}

#[test]
fn missing_file_and_bad_json_score_zero() {
    let ws = workspace("bad");
    let v = run(&ws, json!({"path": "nope.json"})).unwrap();
    assert_eq!(v.score, 0.0);
    assert!(v.details.contains("does not exist"), "{}", v.details);
    let v = run(&ws, json!({"path": "bad.json"})).unwrap();
    assert_eq!(v.score, 0.0);
    assert!(v.details.contains("not valid JSON"), "{}", v.details);
}

#[test]
fn every_operator() {
    let ws = workspace("ops");
    let passing = json!([
        {"expression": "name", "expected": "demo"},
        {"expression": "version", "operator": "equals", "expected": 2.0},
        {"expression": "name", "operator": "not_equals", "expected": "other"},
        {"expression": "name", "operator": "contains", "expected": "em"},
        {"expression": "tags", "operator": "contains", "expected": "bb"},
        {"expression": "meta", "operator": "contains", "expected": "ok"},
        {"expression": "version", "operator": "gt", "expected": 1},
        {"expression": "version", "operator": "gte", "expected": 2},
        {"expression": "ratio", "operator": "lt", "expected": 1},
        {"expression": "ratio", "operator": "lte", "expected": 0.5},
        {"expression": "version", "operator": "type", "expected": "integer"},
        {"expression": "ratio", "operator": "type", "expected": "number"},
        {"expression": "meta.ok", "operator": "type", "expected": "boolean"},
        {"expression": "meta.note", "operator": "type", "expected": "null"},
        {"expression": "name", "operator": "regex", "expected": "^de"},
        {"expression": "tags[-1]", "operator": "exists"},
        {"expression": "meta.note", "expected": null},
        {"expression": "length(tags)", "operator": "equals", "expected": 2},
        {"expression": "/meta/ok", "expected": true}
    ]);
    let v = run(&ws, json!({"assertions": passing})).unwrap();
    assert_eq!(v.score, 1.0, "{}", v.details);
    let failing = json!([
        {"expression": "name", "expected": "demo"},
        {"expression": "missing", "operator": "exists"},
        {"expression": "version", "operator": "lt", "expected": 1},
        {"expression": "name", "operator": "gt", "expected": 3}
    ]);
    let v = run(&ws, json!({"assertions": failing})).unwrap();
    assert_eq!(v.score, 0.25, "{}", v.details);
    assert!(v.details.contains("`missing` exists"), "{}", v.details);
    assert!(v.details.contains("cannot compare"), "{}", v.details);
}

#[test]
fn schema_gates_the_assertions() {
    let ws = workspace("schema");
    let assertions = json!([{"expression": "name", "expected": "demo"}]);
    let v = run(
        &ws,
        json!({"json_schema": "schema.json", "assertions": assertions}),
    )
    .unwrap();
    assert_eq!(v.score, 1.0, "{}", v.details);
    let strict = json!({"type": "object", "required": ["absent_key"]});
    let v = run(&ws, json!({"schema": strict, "assertions": assertions})).unwrap();
    assert_eq!(v.score, 0.0);
    assert!(
        v.details.contains("schema invalid") && v.details.contains("absent_key"),
        "{}",
        v.details
    );
    assert!(v.details.contains("assertions skipped"), "{}", v.details);
    let v = run(&ws, json!({"json_schema": "no-schema.json"})).unwrap();
    assert_eq!(v.score, 0.0);
    assert!(
        v.details
            .contains("schema: file `no-schema.json` does not exist"),
        "{}",
        v.details
    );
    let v = run(&ws, json!({"json_schema": "bad.json"})).unwrap();
    assert_eq!(v.score, 0.0);
    let v = run(
        &ws,
        json!({"schema": {"type": "object", "properties": {"version": {"type": "string"}}}}),
    )
    .unwrap();
    assert_eq!(v.score, 0.0);
    assert!(v.details.contains("/version"), "{}", v.details);
}

#[test]
fn bad_params_are_rejected() {
    let bad = [
        json!({"type": "json_check", "path": "a.json", "assertions": [{"expression": "a", "operator": "regex", "expected": "("}]}),
        json!({"type": "json_check", "path": "a.json", "assertions": [{"expression": "a", "operator": "equals"}]}),
        json!({"type": "json_check", "path": "a.json", "assertions": [{"expression": "a", "operator": "like", "expected": 1}]}),
        json!({"type": "json_check", "path": "a.json", "assertions": [{"expression": "a[*]", "operator": "exists"}]}),
        json!({"type": "json_check", "path": "a.json", "assertions": [{"expression": "a", "operator": "type", "expected": "float"}]}),
        json!({"type": "json_check", "path": "a.json", "schema": {"type": 12}}),
        json!({"type": "json_check", "path": "a.json", "schema": {}, "json_schema": "s.json"}),
        json!({"type": "json_check", "path": "../a.json"}),
        json!({"type": "json_check"}),
    ];
    for params in bad {
        assert!(validate(&params).is_err(), "{params} must be rejected");
    }
    assert!(validate(&json!({"type": "json_check", "path": "a.json", "assertions": [{"expression": "a", "operator": "exists"}]})).is_ok());
}

#[test]
fn param_kind_names_the_regexes_and_paths() {
    use ParamKind::{Regex, WorkspacePath};
    let kinds = |params: Value| kinds_in(param_kind, &params);
    assert_eq!(
        kinds(
            json!({"type": "json_check", "path": "a.json", "json_schema": "s.json",
            "assertions": [
                {"expression": "a", "operator": "regex", "expected": "^x"},
                {"expression": "b", "operator": "equals", "expected": "^x"},
                // The operator after `expected`: known only to `validate`.
                {"expression": "c", "expected": "^x", "operator": "regex"},
            ]})
        ),
        [
            ("path".into(), WorkspacePath),
            ("json_schema".into(), WorkspacePath),
            ("assertions.0.expected".into(), Regex),
        ]
    );
    assert_eq!(kinds(json!({"type": "file_exists", "path": "a"})), []);
}

#[test]
fn validate_rejects_what_param_kind_names() {
    let params = json!({"type": "json_check", "path": "a.json", "json_schema": "s.json",
        "assertions": [{"expression": "a", "operator": "regex", "expected": "x"}]});
    assert_eq!(validate(&params), Ok(()));
    let broken = with_each_bad_value(param_kind, &params);
    assert_eq!(broken.len(), 3);
    for (name, broken) in broken {
        assert!(validate(&broken).is_err(), "{name}: {broken}");
    }
}
