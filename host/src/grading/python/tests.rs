//! pytest and import_check tests.

use super::*;
use serde_json::json;

fn params(v: Value) -> Map<String, Value> {
    v.as_object().unwrap().clone()
}

fn import_check(v: Value) -> ImportCheck {
    ImportCheck::parse(&params(v)).unwrap()
}

#[test]
fn pytest_counts_and_scores_like_coder_eval() {
    let out = "collected 4 items\n\ntest_a.py ..F.\n\n=== 1 failed, 3 passed in 0.02s ===";
    let c = counts(out);
    assert_eq!(
        c,
        Counts {
            passed: 3,
            failed: 1,
            errors: 0,
            skipped: 0,
            collected: Some(4)
        }
    );
    assert_eq!(pytest_score(&c, Some(1)).0, 0.75);
    // Every test passed but pytest exited non-zero: never a perfect score.
    let all = counts("collected 2 items\n2 passed in 0.01s");
    assert_eq!(pytest_score(&all, Some(0)).0, 1.0);
    assert_eq!(pytest_score(&all, Some(1)).0, 0.99);
    assert_eq!(
        pytest_score(&counts("collected 0 items\nno tests ran"), Some(5)).0,
        0.0
    );
    let skipped = counts("collected 3 items\n3 skipped in 0.01s");
    let (score, line) = pytest_score(&skipped, Some(0));
    assert_eq!(score, 0.0);
    assert!(line.contains("none ran"), "{line}");
    // `-q` hides the collected header; the counts still score.
    assert_eq!(
        pytest_score(&counts("1 failed, 1 passed, 2 errors in 0.1s"), Some(1)).0,
        0.25
    );
    assert_eq!(counts("1 error in 0.1s").errors, 1);
}

#[test]
fn bad_params() {
    for bad in [
        json!({"path": "../x"}),
        json!({"timeout": 0}),
        json!({"args": "-q"}),
        json!({"paths": "."}),
    ] {
        assert!(Pytest::parse(&params(bad.clone())).is_err(), "{bad}");
    }
    Pytest::parse(&params(json!({}))).unwrap();
    assert!(ImportCheck::parse(&params(json!({}))).is_err());
    assert!(ImportCheck::parse(&params(json!({"path": "/etc/x.py"}))).is_err());
    ImportCheck::parse(&params(json!({"path": "a.py", "timeout": 5}))).unwrap();
}

fn has_python() -> bool {
    std::process::Command::new("python3")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success())
}

#[tokio::test]
async fn import_check_resolves_imports_in_the_workspace() {
    if !has_python() {
        eprintln!("skipped: no python3");
        return;
    }
    let ws = criteria_common::scratch_workspace("import-check");
    std::fs::write(ws.join("helper.py"), "X = 1\n").unwrap();
    std::fs::write(
        ws.join("app.py"),
        "import os, json\nfrom helper import X\nfrom . import sibling\n\
         def f():\n    try:\n        import not_a_module_xyz\n    except ImportError:\n        pass\n",
    )
    .unwrap();
    std::fs::write(ws.join("bad.py"), "def f(:\n").unwrap();
    std::fs::write(ws.join("none.py"), "print(1)\n").unwrap();
    let env = CommandEnv::default();
    let o = grade_import_check(&import_check(json!({"path": "app.py"})), &ws, &env).await;
    assert!(o.error.is_none(), "{}", o.details);
    assert_eq!(o.score, 0.75, "{}", o.details);
    assert!(
        o.details.contains("failed: not_a_module_xyz"),
        "{}",
        o.details
    );
    let o = grade_import_check(&import_check(json!({"path": "bad.py"})), &ws, &env).await;
    assert_eq!(o.error.unwrap().0, "syntax_error");
    let o = grade_import_check(&import_check(json!({"path": "none.py"})), &ws, &env).await;
    assert_eq!(o.score, 1.0);
    let o = grade_import_check(&import_check(json!({"path": "gone.py"})), &ws, &env).await;
    assert_eq!(
        (o.score, o.error.unwrap().0.as_str()),
        (0.0, "missing_file")
    );
}

#[tokio::test]
async fn pytest_missing_is_a_clear_error() {
    let ws = criteria_common::scratch_workspace("pytest-missing");
    let env = CommandEnv {
        path: Some("/nonexistent"),
        vars: Vec::new(),
        container: None,
    };
    let o = grade_pytest(&Pytest::parse(&params(json!({}))).unwrap(), &ws, &env).await;
    let (kind, message) = o.error.unwrap();
    assert_eq!(kind, "spawn");
    assert!(message.contains("pytest is not on PATH"), "{message}");
}

#[test]
fn pylint_rating_and_params() {
    assert_eq!(
        pylint_rating("----\nYour code has been rated at 8.75/10 (previous run: 8.50/10, +0.25)"),
        Some(8.75)
    );
    assert_eq!(
        pylint_rating("Your code has been rated at -1.50/10"),
        Some(-1.5)
    );
    assert_eq!(pylint_rating("************* Module x"), None);
    assert_eq!(
        Pylint::parse(&params(json!({"path": "src", "min_score": 8.5})))
            .map(|p| p.pass_threshold()),
        Ok(Some(0.85))
    );
    assert_eq!(
        Pylint::parse(&params(json!({"path": "src", "min_score": -3}))).map(|p| p.pass_threshold()),
        Ok(Some(0.0))
    );
    assert_eq!(
        Pylint::parse(&params(json!({"path": "src"}))).map(|p| p.pass_threshold()),
        Ok(None)
    );
    assert!(Pylint::parse(&params(json!({"path": "../src"}))).is_err());
    assert!(Pylint::parse(&params(json!({"path": "a", "rcfile": "/etc/x"}))).is_err());
    assert!(Pylint::parse(&params(json!({}))).is_err());
}

#[tokio::test]
async fn pylint_runs_on_the_task_path() {
    let ws = criteria_common::scratch_workspace("pylint-path");
    let bin = ws.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let fake = bin.join("pylint");
    std::fs::write(
        &fake,
        "#!/bin/sh\necho \"args: $*\"\necho 'Your code has been rated at 7.50/10'\nexit 16\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!("{}:/usr/bin:/bin", bin.display());
    let env = CommandEnv {
        path: Some(&path),
        vars: Vec::new(),
        container: None,
    };
    let o = grade_pylint(
        &Pylint::parse(&params(
            json!({"path": "src", "fail_under": 5, "args": ["--disable=C0111"]}),
        ))
        .unwrap(),
        &ws,
        &env,
    )
    .await;
    assert!(o.error.is_none(), "{}", o.details);
    assert_eq!(o.score, 0.75);
    assert!(
        o.details
            .contains("args: src --fail-under 5 --disable=C0111"),
        "{}",
        o.details
    );
}
