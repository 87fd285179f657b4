use super::*;
use criteria_common::scratch_workspace;
use criteria_common::{kinds_in, with_each_bad_value};
use serde_json::json;

fn workspace(name: &str) -> String {
    let dir = scratch_workspace(name);
    std::fs::write(dir.join("app.py"), "import sys\nprint('hello')\n").unwrap();
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(dir.join("src/a.py"), "A = 1\n").unwrap();
    std::fs::write(dir.join("src/b.py"), "B = 2\n").unwrap();
    dir.to_str().unwrap().to_string()
}

fn run(ws: &str, params: Value) -> Result<Verdict, String> {
    grade(&GradingInput::new(params, ws))
}

#[test]
fn file_exists_by_path_and_glob() {
    let ws = workspace("exists");
    let v = run(&ws, json!({"type": "file_exists", "path": "app.py"})).unwrap();
    assert_eq!((v.score, v.pass), (1.0, true), "{}", v.details);
    let v = run(&ws, json!({"type": "file_exists", "path": "missing.py"})).unwrap();
    assert_eq!(v.score, 0.0);
    assert!(v.details.contains("does not exist"), "{}", v.details);
    let v = run(&ws, json!({"type": "file_exists", "path": "src/*.py"})).unwrap();
    assert_eq!(v.score, 1.0);
    assert!(v.details.contains("matches 2"), "{}", v.details);
    let v = run(&ws, json!({"type": "file_exists", "path": "*.rs"})).unwrap();
    assert_eq!(v.score, 0.0);
    let v = run(&ws, json!({"type": "file_exists", "path": "src"})).unwrap();
    assert_eq!(v.score, 1.0, "a folder exists too");
}

#[test]
fn file_contains_scores_the_mean_of_includes_and_excludes() {
    let ws = workspace("contains");
    let v = run(
        &ws,
        json!({"type": "file_contains", "path": "app.py", "includes": ["print"]}),
    )
    .unwrap();
    assert_eq!(v.score, 1.0);
    let v = run(
        &ws,
        json!({"type": "file_contains", "path": "app.py", "includes": ["print", "def main"], "excludes": ["import os"]}),
    )
    .unwrap();
    assert_eq!(v.score, 0.75, "(1/2 + 1/1) / 2");
    assert!(
        v.details.contains(r#"missing: "def main""#),
        "{}",
        v.details
    );
    let v = run(
        &ws,
        json!({"type": "file_contains", "path": "app.py", "excludes": ["import sys", "eval("]}),
    )
    .unwrap();
    assert_eq!(v.score, 0.5);
    assert!(
        v.details.contains(r#"present: "import sys""#),
        "{}",
        v.details
    );
    let v = run(
        &ws,
        json!({"type": "file_contains", "path": "nope.py", "includes": ["x"]}),
    )
    .unwrap();
    assert_eq!(v.score, 0.0);
    assert!(v.details.contains("does not exist"));
}

#[test]
fn file_contains_glob_must_name_one_file() {
    let ws = workspace("contains-glob");
    let v = run(
        &ws,
        json!({"type": "file_contains", "path": "src/*.py", "includes": ["A"]}),
    )
    .unwrap();
    assert_eq!(v.score, 0.0);
    assert!(v.details.contains("matches 2 files"), "{}", v.details);
    let v = run(
        &ws,
        json!({"type": "file_contains", "path": "src/a*.py", "includes": ["A"]}),
    )
    .unwrap();
    assert_eq!(v.score, 1.0, "{}", v.details);
}

#[test]
fn file_check_combines_includes_excludes_and_patterns() {
    let ws = workspace("check");
    let v = run(&ws, json!({"type": "file_check", "path": "app.py"})).unwrap();
    assert_eq!(v.score, 1.0, "existence only");
    let v = run(
        &ws,
        json!({"type": "file_check", "path": "app.py", "includes": ["print"], "excludes": ["import os"],
               "patterns": [{"pattern": "^print\\(", "flags": 8}, {"pattern": "eval\\(", "must_match": false},
                            {"pattern": "HELLO", "flags": 0}]}),
    )
    .unwrap();
    // includes 1, excludes 1, patterns 2/3.
    assert!(
        (v.score - (1.0 + 1.0 + 2.0 / 3.0) / 3.0).abs() < 1e-9,
        "{}",
        v.score
    );
    assert!(v.details.contains("/HELLO/ not found"), "{}", v.details);
    let v = run(&ws, json!({"type": "file_check", "path": "app.py", "patterns": [{"pattern": "HELLO", "flags": 2}]})).unwrap();
    assert_eq!(v.score, 1.0, "IGNORECASE");
    let v = run(
        &ws,
        json!({"type": "file_check", "path": "gone.py", "includes": ["x"]}),
    )
    .unwrap();
    assert_eq!(v.score, 0.0);
}

#[test]
fn file_matches_regex_both_ways() {
    let ws = workspace("regex");
    let v = run(
        &ws,
        json!({"type": "file_matches_regex", "path": "app.py", "pattern": "print\\('\\w+'\\)"}),
    )
    .unwrap();
    assert_eq!(v.score, 1.0);
    assert!(
        v.details.contains("matched \"print('hello')\""),
        "{}",
        v.details
    );
    let v = run(&ws, json!({"type": "file_matches_regex", "path": "app.py", "pattern": "eval", "must_match": false})).unwrap();
    assert_eq!(v.score, 1.0);
    let v = run(&ws, json!({"type": "file_matches_regex", "path": "app.py", "pattern": "import", "must_match": false})).unwrap();
    assert_eq!(v.score, 0.0);
    let v = run(
        &ws,
        json!({"type": "file_matches_regex", "path": "none.py", "pattern": "x"}),
    )
    .unwrap();
    assert_eq!(v.score, 0.0);
}

#[test]
fn bad_params_are_rejected() {
    let bad = [
        json!({"type": "file_matches_regex", "path": "a", "pattern": "(unclosed"}),
        json!({"type": "file_check", "path": "a", "patterns": [{"pattern": "["}]}),
        json!({"type": "file_exists"}),
        json!({"type": "file_exists", "path": "../secret"}),
        json!({"type": "file_exists", "path": "/etc/passwd"}),
        json!({"type": "file_contains", "path": "a", "includes": "not a list"}),
        json!({"type": "file_contains", "path": "a", "patten": "typo"}),
        json!({"type": "file_matches_regex", "path": "a", "pattern": "x", "flags": 1}),
        json!({"type": "file_frobnicate", "path": "a"}),
    ];
    for params in bad {
        assert!(validate(&params).is_err(), "{params} must be rejected");
    }
    let err = validate(&json!({"type": "file_matches_regex", "path": "a", "pattern": "(unclosed"}))
        .unwrap_err();
    assert!(err.contains("pattern: invalid regex `(unclosed`"), "{err}");
    // Grading bad params is an error, not a verdict.
    assert!(
        run(
            "/nonexistent",
            json!({"type": "file_exists", "path": "/etc/passwd"})
        )
        .is_err()
    );
}

#[test]
fn param_kind_names_the_regexes_and_paths() {
    use ParamKind::{Regex, WorkspacePath};
    let kinds = |params: Value| kinds_in(param_kind, &params);
    assert_eq!(
        kinds(json!({"type": "file_matches_regex", "path": "a.py", "pattern": "x", "flags": 2})),
        [("path".into(), WorkspacePath), ("pattern".into(), Regex)]
    );
    assert_eq!(
        kinds(
            json!({"type": "file_check", "path": "a.py", "includes": ["x"],
            "patterns": [{"pattern": "a"}, {"pattern": "b", "must_match": false}]})
        ),
        [
            ("path".into(), WorkspacePath),
            ("patterns.0.pattern".into(), Regex),
            ("patterns.1.pattern".into(), Regex),
        ]
    );
    for kind in ["file_exists", "file_contains"] {
        assert_eq!(
            kinds(json!({"type": kind, "path": "a", "includes": ["(", "../x"]})),
            [("path".into(), WorkspacePath)]
        );
    }
    assert_eq!(kinds(json!({"type": "json_check", "path": "a.json"})), []);
    assert_eq!(
        kinds(
            json!({"type": "cli_called", "log": "calls.jsonl", "verb": "a (",
                     "flags": {"m": {"matches_regex": "x"}, "n": "y"}})
        ),
        [
            ("log".into(), WorkspacePath),
            ("flags.m.matches_regex".into(), Regex)
        ]
    );
}

#[test]
fn validate_rejects_what_param_kind_names() {
    for params in [
        json!({"type": "file_matches_regex", "path": "a.py", "pattern": "x"}),
        json!({"type": "file_check", "path": "a.py", "patterns": [{"pattern": "x"}]}),
        json!({"type": "file_exists", "path": "a.py"}),
        json!({"type": "file_contains", "path": "a.py", "includes": ["x"]}),
        json!({"type": "cli_called", "log": "c.jsonl", "verb": "a", "flags": {"m": {"matches_regex": "x"}}}),
    ] {
        assert_eq!(validate(&params), Ok(()));
        for (name, broken) in with_each_bad_value(param_kind, &params) {
            assert!(validate(&broken).is_err(), "{name}: {broken}");
        }
    }
}
