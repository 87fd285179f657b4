//! Built-in criteria over the agent's workspace files (read-only at `/workspace`).
//!
//! | `type` | params | score |
//! |---|---|---|
//! | `file_exists` | `path` (a path, or a glob: passes when it matches at least one file or folder) | 1 or 0 |
//! | `file_contains` | `path`, `includes: [str]`, `excludes: [str]` | mean of the active sub-scores: found includes / includes, absent excludes / excludes |
//! | `file_check` | `path`, `includes`, `excludes`, `patterns: [{pattern, must_match = true, flags = 0}]` | mean of the active sub-scores (includes, excludes, patterns); none active = existence, 1 |
//! | `file_matches_regex` | `path`, `pattern`, `must_match = true`, `flags = 0` | 1 or 0 |
//!
//! Paths are relative to the workspace; for every type but `file_exists` a glob must
//! match exactly one file. A missing file scores 0 (a verdict, not an error). Regexes
//! use the Rust `regex` syntax; `flags` keep Python's numbers (IGNORECASE 2, MULTILINE 8,
//! DOTALL 16, VERBOSE 64). Includes and excludes are plain substrings.

use criteria_common::{Target, check_path, is_glob, read_target, regex, resolve};
use grader_kit::{Criterion, GradingInput, Verdict, params_as};
use serde::Deserialize;
use serde_json::Value;

/// The criterion types this component grades.
pub const TYPES: &[&str] = &[
    "file_exists",
    "file_contains",
    "file_check",
    "file_matches_regex",
];

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileExists {
    path: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileContains {
    path: String,
    #[serde(default)]
    includes: Option<Vec<String>>,
    #[serde(default)]
    excludes: Option<Vec<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileCheck {
    path: String,
    #[serde(default)]
    includes: Option<Vec<String>>,
    #[serde(default)]
    excludes: Option<Vec<String>>,
    #[serde(default)]
    patterns: Option<Vec<Pattern>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Pattern {
    pattern: String,
    #[serde(default = "yes")]
    must_match: bool,
    #[serde(default)]
    flags: u32,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileMatchesRegex {
    path: String,
    pattern: String,
    #[serde(default = "yes")]
    must_match: bool,
    #[serde(default)]
    flags: u32,
}

fn yes() -> bool {
    true
}

/// Checks `params` (with its `type`) the way grading will read them: known type, known
/// keys of the right types, a relative path, valid globs and regexes.
pub fn validate(params: &Value) -> Result<(), String> {
    match kind(params) {
        "file_exists" => {
            let p: FileExists = params_as(params)?;
            check_path("path", &p.path)
        }
        "file_contains" => {
            let p: FileContains = params_as(params)?;
            check_path("path", &p.path)
        }
        "file_check" => {
            let p: FileCheck = params_as(params)?;
            check_path("path", &p.path)?;
            for (i, pat) in p.patterns.iter().flatten().enumerate() {
                regex(&format!("patterns[{i}]"), &pat.pattern, pat.flags)?;
            }
            Ok(())
        }
        "file_matches_regex" => {
            let p: FileMatchesRegex = params_as(params)?;
            check_path("path", &p.path)?;
            regex("pattern", &p.pattern, p.flags).map(drop)
        }
        other => Err(format!("criteria-files does not grade type `{other}`")),
    }
}

fn kind(params: &Value) -> &str {
    params.get("type").and_then(Value::as_str).unwrap_or("")
}

/// Grades one file criterion.
pub fn grade(input: &GradingInput) -> Result<Verdict, String> {
    validate(&input.params)?;
    match input.kind() {
        "file_exists" => file_exists(input, input.params()?),
        "file_contains" => {
            let p: FileContains = input.params()?;
            let check = FileCheck {
                path: p.path,
                includes: p.includes,
                excludes: p.excludes,
                patterns: None,
            };
            file_check(input, check)
        }
        "file_check" => file_check(input, input.params()?),
        "file_matches_regex" => file_matches_regex(input, input.params()?),
        other => Err(format!("criteria-files does not grade type `{other}`")),
    }
}

fn file_exists(input: &GradingInput, p: FileExists) -> Result<Verdict, String> {
    let found = resolve(input, &p.path)?;
    if !is_glob(&p.path) {
        let what = if found.is_empty() {
            "does not exist"
        } else {
            "exists"
        };
        return Ok(Verdict::binary(
            !found.is_empty(),
            format!("`{}` {what}", p.path),
        ));
    }
    let details = match found.len() {
        0 => format!("no file matches `{}`", p.path),
        n => format!(
            "`{}` matches {n}: {}",
            p.path,
            found
                .iter()
                .take(10)
                .cloned()
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    Ok(Verdict::binary(!found.is_empty(), details))
}

fn quoted(items: &[&String]) -> String {
    items
        .iter()
        .map(|s| format!("{s:?}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn file_check(input: &GradingInput, p: FileCheck) -> Result<Verdict, String> {
    let (rel, content) = match read_target(input, &p.path)? {
        Target::One(rel, content) => (rel, content),
        Target::Missing(why) => return Ok(Verdict::fail(why)),
    };
    let mut scores = Vec::new();
    let mut parts = vec![format!("`{rel}`")];
    let includes = p.includes.unwrap_or_default();
    if !includes.is_empty() {
        let missing: Vec<&String> = includes
            .iter()
            .filter(|s| !content.contains(s.as_str()))
            .collect();
        let found = includes.len() - missing.len();
        scores.push(found as f64 / includes.len() as f64);
        let mut part = format!("includes {found}/{} found", includes.len());
        if !missing.is_empty() {
            part.push_str(&format!(" (missing: {})", quoted(&missing)));
        }
        parts.push(part);
    }
    let excludes = p.excludes.unwrap_or_default();
    if !excludes.is_empty() {
        let present: Vec<&String> = excludes
            .iter()
            .filter(|s| content.contains(s.as_str()))
            .collect();
        let absent = excludes.len() - present.len();
        scores.push(absent as f64 / excludes.len() as f64);
        let mut part = format!("excludes {absent}/{} absent", excludes.len());
        if !present.is_empty() {
            part.push_str(&format!(" (present: {})", quoted(&present)));
        }
        parts.push(part);
    }
    let patterns = p.patterns.unwrap_or_default();
    if !patterns.is_empty() {
        let mut ok = 0usize;
        let mut wrong = Vec::new();
        for (i, pat) in patterns.iter().enumerate() {
            let re = regex(&format!("patterns[{i}]"), &pat.pattern, pat.flags)?;
            if criteria_common::search(&re, &content).is_some() == pat.must_match {
                ok += 1;
            } else if pat.must_match {
                wrong.push(format!("/{}/ not found", pat.pattern));
            } else {
                wrong.push(format!("/{}/ found but must not match", pat.pattern));
            }
        }
        scores.push(ok as f64 / patterns.len() as f64);
        let mut part = format!("patterns {ok}/{} as expected", patterns.len());
        if !wrong.is_empty() {
            part.push_str(&format!(" ({})", wrong.join("; ")));
        }
        parts.push(part);
    }
    if scores.is_empty() {
        return Ok(Verdict::pass(format!("`{rel}` exists")));
    }
    let score = scores.iter().sum::<f64>() / scores.len() as f64;
    parts.push(format!("score {score:.2}"));
    Ok(Verdict::new(score, parts.join("; ")))
}

fn file_matches_regex(input: &GradingInput, p: FileMatchesRegex) -> Result<Verdict, String> {
    let re = regex("pattern", &p.pattern, p.flags)?;
    let (rel, content) = match read_target(input, &p.path)? {
        Target::One(rel, content) => (rel, content),
        Target::Missing(why) => return Ok(Verdict::fail(why)),
    };
    let found =
        criteria_common::search(&re, &content).map(|m| grader_kit::truncate(m.as_str(), 100));
    let details = match (&found, p.must_match) {
        (Some(m), true) => format!("/{}/ found in `{rel}` (matched {m:?})", p.pattern),
        (None, true) => format!("/{}/ not found in `{rel}`", p.pattern),
        (None, false) => format!("/{}/ correctly absent from `{rel}`", p.pattern),
        (Some(m), false) => format!(
            "/{}/ found in `{rel}` but must not match (matched {m:?})",
            p.pattern
        ),
    };
    Ok(Verdict::binary(found.is_some() == p.must_match, details))
}

/// The component: dispatches on `params["type"]`.
pub struct Files;

impl Criterion for Files {
    fn grade(input: &GradingInput) -> Result<Verdict, String> {
        grade(input)
    }
}

grader_kit::export_grader!(Files);

#[cfg(test)]
mod tests {
    use super::*;
    use criteria_common::scratch_workspace;
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
        let err =
            validate(&json!({"type": "file_matches_regex", "path": "a", "pattern": "(unclosed"}))
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
}
