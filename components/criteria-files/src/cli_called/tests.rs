//! `cli_called` tests: matching, splitting, untrustworthy logs, bad params.

use super::*;
use serde_json::json;

fn ws(log: &str) -> String {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = criteria_common::scratch_workspace(&format!("cli-called-{n}"));
    std::fs::create_dir_all(dir.join("cli_mocks")).unwrap();
    std::fs::write(dir.join("cli_mocks/calls.jsonl"), log).unwrap();
    dir.to_str().unwrap().to_string()
}

fn line(argv: &[&str]) -> String {
    format!("{}\n", json!({"argv": argv, "tool": "uip", "exit": 0}))
}

fn run(ws: &str, mut params: Value) -> Result<Verdict, String> {
    params["type"] = json!("cli_called");
    grade(&GradingInput::new(params, ws))
}

#[test]
fn verbs_positionals_and_flags() {
    let log = [
        line(&[
            "ixp",
            "projects",
            "configure-model",
            "my-proj",
            "--model",
            "gemini_2_5_pro",
            "--output",
            "json",
        ]),
        line(&["ixp", "labellings", "unconfirm", "--yes", "proj-1"]),
        line(&["ixp", "labellings", "confirm", "-y", "proj-2"]),
    ]
    .concat();
    let ws = ws(&log);
    let v = run(&ws, json!({"verb": "ixp projects configure-model", "positional": ["my-proj"], "flags": {"model": "gemini_2_5_pro"}})).unwrap();
    assert_eq!(v.score, 1.0, "{}", v.details);
    let v = run(
        &ws,
        json!({"verb": "ixp projects configure-model", "flags": {"model": {"contains": "claude"}}}),
    )
    .unwrap();
    assert_eq!(v.score, 0.0, "{}", v.details);
    assert!(
        v.details.contains("Recorded: ixp projects"),
        "{}",
        v.details
    );
    // Token-wise verbs: `confirm` never matches `unconfirm`.
    let v = run(&ws, json!({"verb": "ixp labellings confirm", "flags": {"yes": {"present": true, "aliases": ["y"]}}})).unwrap();
    assert_eq!(v.score, 1.0, "{}", v.details);
    // A switch does not swallow the positional after it.
    let v = run(
        &ws,
        json!({"verb": "ixp labellings unconfirm", "positional": ["proj-1"]}),
    )
    .unwrap();
    assert_eq!(v.score, 1.0, "{}", v.details);
    let v = run(&ws, json!({"verb_any_of": ["ixp labellings confirm", "ixp labellings unconfirm"], "min_count": 2})).unwrap();
    assert_eq!(v.score, 1.0, "{}", v.details);
    // A negative guard.
    let v = run(
        &ws,
        json!({"verb": "ixp projects delete", "min_count": 0, "max_count": 0}),
    )
    .unwrap();
    assert_eq!(v.score, 1.0);
    let v = run(&ws, json!({"verb": "ixp", "min_count": 0, "max_count": 2})).unwrap();
    assert_eq!(v.score, 0.0);
    assert!(v.details.contains("forbids"), "{}", v.details);
    let v = run(&ws, json!({"tool": "other"})).unwrap();
    assert_eq!(v.score, 0.0);
    let v = run(&ws, json!({"verb": "ixp projects configure-model", "flags": {"model": {"matches_regex": "GEMINI", "flags": 2}}})).unwrap();
    assert_eq!(v.score, 1.0, "{}", v.details);
    let v = run(&ws, json!({"verb": "ixp projects", "flags": {"model": {"any_of": ["a", "gemini_2_5_pro"]}, "force": {"absent": true}}})).unwrap();
    assert_eq!(v.score, 1.0, "{}", v.details);
}

#[test]
fn splitting_rules() {
    let spec =
        check(&json!({"type": "cli_called", "tool": "x", "value_flags": ["output", "f"]})).unwrap();
    let argv: Vec<String> = [
        "get",
        "--name=a b",
        "-1",
        "-",
        "-rv",
        "-fvalue",
        "--output",
        "json",
        "--",
        "--literal",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let (pos, flags) = split(&spec, &argv);
    assert_eq!(pos, ["get", "-1", "-", "--literal"]);
    assert_eq!(flags["name"], ["a b"]);
    assert_eq!(flags["r"], [""]);
    assert_eq!(flags["v"], [""]);
    assert_eq!(flags["f"], ["value"]);
    assert!(!flags.contains_key("output"), "ignored by default");
}

#[test]
fn an_untrustworthy_log_is_an_error() {
    let ws1 = ws(&format!("{}not json\n", line(&["a"])));
    assert!(
        run(&ws1, json!({"verb": "a"}))
            .unwrap_err()
            .contains("1 unusable")
    );
    let ws2 = ws(&format!(
        "{}\n",
        json!({"argv": ["a"], "rule_error": "boom"})
    ));
    assert!(
        run(&ws2, json!({"verb": "a"}))
            .unwrap_err()
            .contains("rule_error")
    );
    let dir = criteria_common::scratch_workspace("cli-called-nolog");
    let err = run(
        dir.to_str().unwrap(),
        json!({"verb": "a", "min_count": 0, "max_count": 0}),
    )
    .unwrap_err();
    assert!(err.contains("does not exist"), "{err}");
    let ws3 = ws(&line(&["a"]));
    std::fs::write(
        format!("{ws3}/cli_mocks/calls.jsonl.error"),
        "OSError ['a']\n",
    )
    .unwrap();
    assert!(
        run(&ws3, json!({"verb": "a"}))
            .unwrap_err()
            .contains("could not write")
    );
}

#[test]
fn bad_params() {
    for (params, want) in [
        (json!({"verb": "a", "min_count": 0}), "can never fail"),
        (
            json!({"verb": "a", "min_count": 3, "max_count": 1}),
            "max_count (1)",
        ),
        (json!({"verb": "a", "verb_any_of": ["b"]}), "not both"),
        (json!({"verb_any_of": []}), "must not be empty"),
        (json!({"verb": "  "}), "blank"),
        (json!({"verb": "a --json"}), "looks like a flag"),
        (json!({"verb_any_of": ["a b", "a"]}), "prefix"),
        (json!({"positional": []}), "must not be empty"),
        (json!({}), "at least one"),
        (json!({"flags": {"m": {}}}), "exactly one"),
        (
            json!({"flags": {"m": {"equals": "a", "contains": "b"}}}),
            "exactly one",
        ),
        (
            json!({"flags": {"m": {"equals": "a", "flags": 2}}}),
            "applies only",
        ),
        (
            json!({"flags": {"m": {"matches_regex": "("}}}),
            "invalid regex",
        ),
        (json!({"flags": {"m": {"any_of": []}}}), "must not be empty"),
        (
            json!({"flags": {"m": {"present": true, "aliases": ["m"]}}}),
            "itself",
        ),
        (
            json!({"flags": {"a": {"present": true, "aliases": ["x"]}, "b": {"present": true, "aliases": ["x"]}}}),
            "claimed by both",
        ),
        (json!({"flags": {"output": "json"}}), "ignore_flags"),
        (json!({"verb": "a", "log": "../x"}), "log"),
        (json!({"verb": "a", "verbb": "x"}), "unknown field"),
    ] {
        let mut p = params.clone();
        p["type"] = json!("cli_called");
        let err = validate(&p).expect_err(&params.to_string());
        assert!(err.contains(want), "{params}: {err}");
    }
}
