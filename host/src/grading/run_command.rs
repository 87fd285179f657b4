//! `run_command`: a host-native criterion (a WASI component cannot start processes). The
//! command runs with `sh -c` in the workspace, in its own process group, stopped as a
//! whole (SIGTERM, grace, SIGKILL) on timeout like the agent's.
//!
//! Parameter names, defaults and scoring are coder_eval's (`RunCommandCriterion`):
//!
//! - `command` (required);
//! - `timeout`: seconds, default 30;
//! - `expected_exit_code`: default 0;
//! - `expected_stdout` (compared trimmed; `stdout_match: exact | contains | regex` picks
//!   how, default exact), `expected_stdout_contains`, `expected_stdout_regex` (searched);
//! - or `score_from_stdout: true`: the score is the float on the first line of stdout
//!   (coder_eval's rule; the other lines are details), clamped to 0–1; an exit code other
//!   than `expected_exit_code`, an empty first line or one that is not a finite number
//!   scores 0 with an error (`bad_score_output`); exclusive with the `expected_stdout*`
//!   keys;
//! - `env` (coder-eval's own): extra environment variables.
//!
//! coder_eval's older `program_stdout_equals` (`command`, `expected_output`, `timeout`) is
//! this criterion with `expected_stdout` ([`from_program_stdout_equals`]).
//!
//! The command sees the minimal environment of [`super::exec`] (`PATH` — the task's
//! environment's when it has one —, `HOME`, `LANG`, `TERM`, plus `env`, plus
//! `REFERENCE_DIR` and `TASK_DIR` when known): the host's secrets (API keys) do not reach
//! code the agent wrote. Nothing it starts outlives it, detached or not.
//! Without `score_from_stdout` the score is 1 when the exit code and every stdout
//! expectation hold, else 0.

use super::exec::{self, CommandEnv, stream};
use crate::limits::RUN_COMMAND_TIMEOUT_SECS;
use serde::Deserialize;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

/// A `run_command` criterion's parameters, parsed and checked once ([`parse`]).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    command: String,
    #[serde(default = "default_timeout")]
    timeout: f64,
    #[serde(default)]
    expected_exit_code: i32,
    #[serde(default)]
    expected_stdout: Option<String>,
    #[serde(default)]
    stdout_match: Option<String>,
    #[serde(default)]
    expected_stdout_contains: Option<String>,
    #[serde(default)]
    expected_stdout_regex: Option<String>,
    #[serde(default)]
    score_from_stdout: bool,
    #[serde(default)]
    env: BTreeMap<String, String>,
}

fn default_timeout() -> f64 {
    RUN_COMMAND_TIMEOUT_SECS
}

/// coder_eval's older `program_stdout_equals` (`command`, `expected_output`, `timeout`)
/// as the `run_command` it is: exit code 0 and stdout equal, trimmed.
pub(crate) fn from_program_stdout_equals(
    params: &Map<String, Value>,
) -> Result<Map<String, Value>, String> {
    let mut out = Map::new();
    for (key, value) in params {
        match key.as_str() {
            "command" | "timeout" => {
                out.insert(key.clone(), value.clone());
            }
            "expected_output" => {
                out.insert("expected_stdout".into(), value.clone());
            }
            other => {
                return Err(format!(
                    "unknown field `{other}`, expected one of `command`, `expected_output`, \
                     `timeout`"
                ));
            }
        }
    }
    if !out.contains_key("expected_stdout") {
        return Err("missing field `expected_output`".into());
    }
    Ok(out)
}

/// Parses and checks `run_command` params.
pub fn parse(params: &Map<String, Value>) -> Result<Params, String> {
    let p: Params =
        serde_json::from_value(Value::Object(params.clone())).map_err(|e| e.to_string())?;
    if p.command.trim().is_empty() {
        return Err("`command` is empty".into());
    }
    if !(p.timeout.is_finite() && p.timeout > 0.0) {
        return Err(format!(
            "timeout must be a positive number of seconds, got {}",
            p.timeout
        ));
    }
    if p.timeout > crate::limits::MAX_DURATION_SECS {
        return Err(format!(
            "timeout must be at most 30 days ({} s), got {} s",
            crate::limits::MAX_DURATION_SECS,
            p.timeout
        ));
    }
    if let Some(mode) = &p.stdout_match {
        if !matches!(mode.as_str(), "exact" | "contains" | "regex") {
            return Err(format!(
                "stdout_match must be exact, contains or regex, got `{mode}`"
            ));
        }
        if p.expected_stdout.is_none() {
            return Err("stdout_match needs expected_stdout".into());
        }
    }
    if p.stdout_match.as_deref() == Some("regex") {
        criteria_common::regex(
            "expected_stdout",
            p.expected_stdout.as_deref().unwrap_or(""),
            0,
        )?;
    }
    if let Some(re) = &p.expected_stdout_regex {
        criteria_common::regex("expected_stdout_regex", re, 0)?;
    }
    let expects = p.expected_stdout.is_some()
        || p.expected_stdout_contains.is_some()
        || p.expected_stdout_regex.is_some();
    if p.score_from_stdout && expects {
        return Err("score_from_stdout and expected_stdout* are exclusive".into());
    }
    Ok(p)
}

/// What a `run_command` criterion concluded.
pub struct Outcome {
    /// 0–1.
    pub score: f64,
    pub details: String,
    /// `(kind, message)` when it could not judge: `spawn`, `timeout`, `bad_score_output`.
    pub error: Option<(String, String)>,
}

/// Runs the criterion in `workspace` under `env` (its `env` param is added).
pub async fn grade(p: &Params, workspace: &Path, env: &CommandEnv<'_>) -> Outcome {
    let mut env = env.clone();
    env.vars
        .extend(p.env.iter().map(|(k, v)| (k.clone(), v.clone())));
    let timeout = Duration::from_secs_f64(p.timeout);
    let out = match exec::run(&p.command, workspace, &env, timeout).await {
        Ok(out) => out,
        Err(e) => {
            return error(
                "spawn",
                format!("could not start `{}`: {e}", p.command),
                String::new(),
            );
        }
    };
    let exit = exec::exit_text(&out);
    let mut details = format!(
        "command: {}\nexit code: {exit} (expected {})\n{}\n{}",
        p.command,
        p.expected_exit_code,
        stream("stdout", &out.stdout),
        stream("stderr", &out.stderr)
    );
    if out.interrupted {
        return error(
            "interrupted",
            format!("`{}` was stopped: the run was interrupted", p.command),
            details,
        );
    }
    if out.timed_out {
        return error(
            "timeout",
            format!("`{}` timed out after {} s", p.command, p.timeout),
            details,
        );
    }
    let exit_ok = out.exit_code == Some(p.expected_exit_code);
    if p.score_from_stdout {
        if !exit_ok {
            return error(
                "bad_score_output",
                format!(
                    "`{}` exited with {exit}, expected {}",
                    p.command, p.expected_exit_code
                ),
                details,
            );
        }
        return match score_line(&out.stdout) {
            Some(raw) => {
                let score = raw.clamp(0.0, 1.0);
                let note = if score == raw {
                    String::new()
                } else {
                    format!(" (clamped from {raw})")
                };
                Outcome {
                    score,
                    details: format!("score {score:.3}{note} from stdout\n{details}"),
                    error: None,
                }
            }
            None => error(
                "bad_score_output",
                format!(
                    "the first line of stdout is not a number (0–1): {:?}",
                    out.stdout.lines().next().unwrap_or("")
                ),
                details,
            ),
        };
    }
    let mut ok = exit_ok;
    let stdout = out.stdout.trim();
    let mut check = |label: &str, holds: bool| {
        details.push_str(&format!(
            "\n{label}: {}",
            if holds { "ok" } else { "FAILED" }
        ));
        ok &= holds;
    };
    if let Some(want) = &p.expected_stdout {
        let holds = match p.stdout_match.as_deref().unwrap_or("exact") {
            "contains" => stdout.contains(want.trim()),
            "regex" => criteria_common::regex("expected_stdout", want, 0)
                .is_ok_and(|re| criteria_common::search(&re, &out.stdout).is_some()),
            _ => stdout == want.trim(),
        };
        check(&format!("stdout matches {want:?}"), holds);
    }
    if let Some(want) = &p.expected_stdout_contains {
        check(
            &format!("stdout contains {want:?}"),
            out.stdout.contains(want.as_str()),
        );
    }
    if let Some(want) = &p.expected_stdout_regex {
        let holds = criteria_common::regex("expected_stdout_regex", want, 0)
            .is_ok_and(|re| criteria_common::search(&re, &out.stdout).is_some());
        check(&format!("stdout matches /{want}/"), holds);
    }
    Outcome {
        score: if ok { 1.0 } else { 0.0 },
        details,
        error: None,
    }
}

fn error(kind: &str, message: String, details: String) -> Outcome {
    Outcome {
        score: 0.0,
        details: if details.is_empty() {
            message.clone()
        } else {
            details
        },
        error: Some((kind.to_string(), message)),
    }
}

/// The score on the first line of stdout (coder_eval: `float(lines[0].strip())`), when
/// it is a finite number.
fn score_line(stdout: &str) -> Option<f64> {
    stdout
        .lines()
        .next()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .and_then(|l| l.parse::<f64>().ok())
        .filter(|f| f.is_finite())
}

/// Which of `run_command`'s parameter strings are regexes, for the check made as the task
/// file is read (the same shape as the criteria crates' `param_kind`).
pub(crate) fn param_kind(
    path: &[criteria_common::PathSeg<'_>],
    siblings: &serde_json::Map<String, serde_json::Value>,
) -> Option<criteria_common::ParamKind> {
    use criteria_common::{ParamKind, PathSeg::Key, sibling};
    match path {
        [Key("expected_stdout_regex")] => Some(ParamKind::Regex),
        [Key("expected_stdout")] if sibling(siblings, "stdout_match") == Some("regex") => {
            Some(ParamKind::Regex)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn params(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    async fn run(v: Value) -> Outcome {
        let p = parse(&params(v)).unwrap();
        grade(&p, &std::env::temp_dir(), &CommandEnv::default()).await
    }

    #[tokio::test]
    async fn exit_code_and_stdout_expectations() {
        assert_eq!(run(json!({"command": "true"})).await.score, 1.0);
        assert_eq!(run(json!({"command": "exit 3"})).await.score, 0.0);
        assert_eq!(
            run(json!({"command": "exit 3", "expected_exit_code": 3}))
                .await
                .score,
            1.0
        );
        assert_eq!(
            run(json!({"command": "echo hello", "expected_stdout": "hello"}))
                .await
                .score,
            1.0
        );
        assert_eq!(
            run(json!({"command": "echo hello world", "expected_stdout": "hello"}))
                .await
                .score,
            0.0
        );
        assert_eq!(
            run(json!({"command": "echo hello world", "expected_stdout": "lo wo", "stdout_match": "contains"})).await.score,
            1.0
        );
        assert_eq!(
            run(json!({"command": "echo hello world", "expected_stdout_contains": "lo wo"}))
                .await
                .score,
            1.0
        );
        assert_eq!(
            run(json!({"command": "date +%Y", "expected_stdout_regex": "^\\d{4}$"}))
                .await
                .score,
            1.0
        );
        let o = run(json!({"command": "echo nope", "expected_stdout_regex": "^\\d+$"})).await;
        assert_eq!(o.score, 0.0);
        assert!(
            o.details.contains("FAILED") && o.details.contains("stdout:\nnope"),
            "{}",
            o.details
        );
    }

    #[tokio::test]
    async fn score_from_stdout_reads_the_first_line() {
        let o =
            run(json!({"command": "echo 0.75; echo details follow", "score_from_stdout": true}))
                .await;
        assert_eq!(o.score, 0.75, "{}", o.details);
        // coder_eval reads the first line only: a number further down does not count.
        let o = run(json!({"command": "echo checking; echo 0.5", "score_from_stdout": true})).await;
        assert_eq!(o.error.unwrap().0, "bad_score_output");
        let o = run(json!({"command": "echo; echo 0.5", "score_from_stdout": true})).await;
        assert_eq!(o.error.unwrap().0, "bad_score_output");
        let o = run(json!({"command": "echo nan", "score_from_stdout": true})).await;
        assert_eq!(o.error.unwrap().0, "bad_score_output");
        let o = run(json!({"command": "echo 7", "score_from_stdout": true})).await;
        assert_eq!(o.score, 1.0);
        assert!(o.details.contains("clamped"), "{}", o.details);
        let o = run(json!({"command": "echo none", "score_from_stdout": true})).await;
        assert_eq!(o.error.unwrap().0, "bad_score_output");
        let o = run(json!({"command": "echo 1; exit 2", "score_from_stdout": true})).await;
        assert_eq!(o.error.unwrap().0, "bad_score_output");
    }

    #[tokio::test]
    async fn timeout_and_environment() {
        let o = run(json!({"command": "sleep 30", "timeout": 0.3})).await;
        assert_eq!(o.score, 0.0);
        assert_eq!(o.error.unwrap().0, "timeout");
        // SAFETY: tests in this binary do not read this variable concurrently.
        unsafe { std::env::set_var("CODER_EVAL_RUN_COMMAND_SECRET", "s3cret") };
        let o = run(json!({"command": "echo \"[$CODER_EVAL_RUN_COMMAND_SECRET][$EXTRA]\"", "env": {"EXTRA": "x y"}})).await;
        assert!(o.details.contains("[][x y]"), "{}", o.details);
        let o = run(json!({"command": "pwd", "expected_stdout": std::env::temp_dir().canonicalize().unwrap().to_str().unwrap()})).await;
        assert_eq!(o.score, 1.0, "{}", o.details);
    }

    #[tokio::test]
    async fn nothing_the_check_detaches_outlives_it() {
        let marker = format!("ce-run-command-detached-{}", std::process::id());
        let o = run(json!({
            "command": format!("setsid bash -c 'exec -a {marker} sleep 30' >/dev/null 2>&1 &")
        }))
        .await;
        assert_eq!(o.score, 1.0, "{}", o.details);
        let ps = std::process::Command::new("ps")
            .args(["-eo", "args"])
            .output()
            .unwrap();
        let table = String::from_utf8_lossy(&ps.stdout);
        assert!(
            !table.contains(&marker),
            "a detached process survived:\n{table}"
        );
    }

    #[test]
    fn program_stdout_equals_is_run_command() {
        let p = from_program_stdout_equals(&params(
            json!({"command": "echo hi", "expected_output": "hi", "timeout": 5}),
        ))
        .unwrap();
        assert_eq!(
            Value::Object(p.clone()),
            json!({"command": "echo hi", "expected_stdout": "hi", "timeout": 5})
        );
        parse(&p).unwrap();
        assert!(from_program_stdout_equals(&params(json!({"command": "x"}))).is_err());
        assert!(
            from_program_stdout_equals(&params(
                json!({"command": "x", "expected_output": "y", "env": {}})
            ))
            .is_err()
        );
    }

    #[test]
    fn bad_params() {
        for bad in [
            json!({}),
            json!({"command": ""}),
            json!({"command": "x", "timeout": 0}),
            json!({"command": "x", "expected_stdout_regex": "("}),
            json!({"command": "x", "expected_stdout": "(", "stdout_match": "regex"}),
            json!({"command": "x", "stdout_match": "fuzzy", "expected_stdout": "a"}),
            json!({"command": "x", "score_from_stdout": true, "expected_stdout": "1"}),
            json!({"command": "x", "shell": "bash"}),
        ] {
            assert!(parse(&params(bad.clone())).is_err(), "{bad}");
        }
    }
}
