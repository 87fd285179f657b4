//! Built-in criteria over the agent's workspace files (read-only at `/workspace`).
//!
//! | `type` | params | score |
//! |---|---|---|
//! | `file_exists` | `path` (a path, or a glob: passes when it matches at least one file or folder) | 1 or 0 |
//! | `file_contains` | `path`, `includes: [str]`, `excludes: [str]` | mean of the active sub-scores: found includes / includes, absent excludes / excludes |
//! | `file_check` | `path`, `includes`, `excludes`, `patterns: [{pattern, must_match = true, flags = 0}]` | mean of the active sub-scores (includes, excludes, patterns); none active = existence, 1 |
//! | `file_matches_regex` | `path`, `pattern`, `must_match = true`, `flags = 0` | 1 or 0 |
//! | `cli_called` | `log`, `verb` / `verb_any_of`, `tool`, `positional`, `flags`, `value_flags`, `ignore_flags`, `min_count = 1`, `max_count` (see [`cli_called`]) | 1 or 0 |
//!
//! Paths are relative to the workspace; for every type but `file_exists` a glob must
//! match exactly one file. A missing file scores 0 (a verdict, not an error). Regexes
//! use the Rust `regex` syntax; `flags` keep Python's numbers (IGNORECASE 2, MULTILINE 8,
//! DOTALL 16, VERBOSE 64). Includes and excludes are plain substrings.

pub mod cli_called;

use criteria_common::{
    ParamKind, PathSeg, Target, check_path, is_glob, read_target, regex, resolve,
};
use grader_kit::{Criterion, GradingInput, Verdict, params_as};
use serde::Deserialize;
use serde_json::{Map, Value};

/// The criterion types this component grades.
pub const TYPES: &[&str] = &[
    "file_exists",
    "file_contains",
    "file_check",
    "file_matches_regex",
    "cli_called",
];

/// Which parameter strings are regexes or workspace paths (see
/// [`criteria_common::ParamKindFn`]): `file_matches_regex`'s `pattern`, each
/// `file_check` `patterns[i].pattern`, `cli_called`'s `flags.<name>.matches_regex`, every
/// type's `path` and `cli_called`'s `log`.
pub fn param_kind(
    criterion_type: &str,
    path: &[PathSeg<'_>],
    _siblings: &Map<String, Value>,
) -> Option<ParamKind> {
    use PathSeg::Key;
    match (criterion_type, path) {
        ("file_matches_regex", [Key("pattern")])
        | ("file_check", [Key("patterns"), _, Key("pattern")]) => Some(ParamKind::Regex),
        ("file_exists" | "file_contains" | "file_check" | "file_matches_regex", [Key("path")]) => {
            Some(ParamKind::WorkspacePath)
        }
        ("cli_called", [Key("flags"), _, Key("matches_regex")]) => Some(ParamKind::Regex),
        ("cli_called", [Key("log")]) => Some(ParamKind::WorkspacePath),
        _ => None,
    }
}

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
        "cli_called" => cli_called::validate(params),
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
        "cli_called" => cli_called::grade(input),
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
mod tests;
