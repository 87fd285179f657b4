//! `run_command`: a host-native criterion (a WASI component cannot start processes). The
//! command runs with `sh -c` in the workspace, in its own process group, stopped as a
//! whole (SIGTERM, grace, SIGKILL) on timeout like the agent's.
//!
//! Params:
//! - `command` (required);
//! - `timeout`: seconds, default 60;
//! - `expected_exit_code`: default 0;
//! - `expected_stdout` (compared trimmed; `stdout_match: exact | contains | regex` picks
//!   how, default exact), `expected_stdout_contains`, `expected_stdout_regex` (searched);
//! - or `score_from_stdout: true`: the score is the float on the last non-empty stdout
//!   line (else the first), clamped to 0–1; exclusive with the `expected_stdout*` keys;
//! - `env`: extra environment variables.
//!
//! The command sees a minimal environment (`PATH`, `HOME`, `LANG`, `TERM` from the host,
//! plus `env`, plus the host's process mark `CODER_EVAL_PROCESS_MARK`): the host's secrets
//! (API keys) do not reach code the agent wrote. Nothing it starts outlives it, detached
//! or not.
//! Without `score_from_stdout` the score is 1 when the exit code and every stdout
//! expectation hold, else 0.

use crate::limits::RUN_COMMAND_TIMEOUT_SECS;
use crate::process::{MARK_VAR, run_shell};
use serde::Deserialize;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

/// Bytes of each stream read from the command.
const MAX_OUTPUT: usize = 1 << 20;
/// Characters of each stream shown in the details.
const SHOWN: usize = 4000;

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

/// Single-quotes `s` for `sh`.
fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// Runs the criterion in `workspace`.
pub async fn grade(p: &Params, workspace: &Path) -> Outcome {
    // `run_shell` adds to the host's environment; start over from a minimal one.
    let mut wrapped = String::from("exec env -i");
    for key in ["PATH", "HOME", "LANG", "TERM"] {
        if let Some(value) = std::env::var_os(key) {
            wrapped.push_str(&format!(" {key}={}", quote(&value.to_string_lossy())));
        }
    }
    for (key, value) in &p.env {
        wrapped.push_str(&format!(" {}={}", quote(key), quote(value)));
    }
    // The process mark `run_shell` set survives the cleared environment, so whatever the
    // check leaves running is found and stopped when it ends.
    wrapped.push_str(&format!(" {MARK_VAR}=\"${MARK_VAR}\""));
    wrapped.push_str(&format!(" sh -c {}", quote(&p.command)));
    let timeout = Duration::from_secs_f64(p.timeout);
    let out = match run_shell(&wrapped, workspace, &[], timeout, MAX_OUTPUT).await {
        Ok(out) => out,
        Err(e) => {
            return error(
                "spawn",
                format!("could not start `{}`: {e}", p.command),
                String::new(),
            );
        }
    };
    let exit = out
        .exit_code
        .map_or("none (killed)".to_string(), |c| c.to_string());
    let mut details = format!(
        "command: {}\nexit code: {exit} (expected {})\n{}\n{}",
        p.command,
        p.expected_exit_code,
        stream("stdout", &out.stdout),
        stream("stderr", &out.stderr)
    );
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
                "stdout has no line holding a number (0–1)".into(),
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

fn stream(label: &str, text: &str) -> String {
    if text.is_empty() {
        return format!("{label}: (empty)");
    }
    let shown: String = text.chars().take(SHOWN).collect();
    let more = text.chars().count().saturating_sub(SHOWN);
    if more > 0 {
        format!("{label}:\n{shown}… ({more} more characters)")
    } else {
        format!("{label}:\n{shown}")
    }
}

/// The score on the last non-empty line, else on the first.
fn score_line(stdout: &str) -> Option<f64> {
    let lines: Vec<&str> = stdout
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let parse = |l: &&str| l.parse::<f64>().ok().filter(|f| f.is_finite());
    lines
        .last()
        .and_then(parse)
        .or_else(|| lines.first().and_then(parse))
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
        grade(&p, &std::env::temp_dir()).await
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
    async fn score_from_stdout_reads_the_last_line() {
        let o =
            run(json!({"command": "echo checking; echo 0.75", "score_from_stdout": true})).await;
        assert_eq!(o.score, 0.75, "{}", o.details);
        let o = run(json!({"command": "echo 0.5; echo details follow", "score_from_stdout": true}))
            .await;
        assert_eq!(o.score, 0.5, "the first line as a fallback");
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
