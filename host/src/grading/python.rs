//! `pytest` and `import_check`: host-native criteria that run Python in the workspace (a
//! WASI component cannot start processes), with coder_eval's parameter names, defaults
//! and scoring. Both run through [`super::exec`]: the workspace as the working folder,
//! the task environment's `PATH` (its virtualenv first, when it has one), no host secrets,
//! the whole process group stopped on timeout.
//!
//! **`pytest`** — `path` (default `.`), `args` (list of extra arguments, default none),
//! `timeout` (seconds, default 60). Runs `pytest PATH ARGS...` (each shell-quoted) and
//! reads the counts from its summary, stdout and stderr together:
//! `passed / (passed + failed + errors)`. No test collected, or every test skipped,
//! scores 0. A non-zero exit with every test passing scores 0.99, never 1 (coder_eval's
//! `PYTEST_IMPERFECT_SCORE_CAP`). One difference: coder_eval needs pytest's `collected N
//! items` header, which `-q` hides, and scores such a run 0; here the counts alone
//! suffice. `pytest` not on `PATH` (exit 127) is an error (`spawn`) that says so.
//!
//! **`pylint_score`** — `path` (required), `min_score` (0–10; when given, the pass
//! threshold is `min_score / 10`), `fail_under`, `rcfile`, `args`, `timeout` (default
//! 120). Runs `pylint PATH [--rcfile F] [--fail-under N] ARGS...` and reads "Your code has
//! been rated at X/10": score `max(0, X / 10)`; no rating in the output is an error
//! (`bad_score_output`).
//!
//! **`import_check`** — `path` (a Python file, required), `timeout` (seconds, default
//! 30). Parses the file with Python's `ast` (a syntax error scores 0 with an error),
//! collects every absolute import anywhere in it (`import a.b` → `a.b`, `from a.b import
//! c` → `a.b`; relative imports are skipped), and checks each one resolves with
//! `importlib.util.find_spec` in the workspace under the task's `PATH` (`python3`, else
//! `python`). Score: resolved / checked; 1 when there is no import; a missing file
//! scores 0 with an error.
//!
//! Parameters are parsed and checked once, as the task file is read ([`Pytest::parse`],
//! [`Pylint::parse`], [`ImportCheck::parse`]); grading runs from the typed value.
//!
//! Where things live: parameter checks, `pytest` and `pylint_score` here; `import_check`'s
//! Python program and grading in `import_check`; unit tests in `tests`.

mod import_check;

use super::exec::{self, CommandEnv, quote, stream};
use crate::process::ShellOutcome;
pub(crate) use import_check::grade_import_check;
use serde::Deserialize;
use serde_json::{Map, Value};
use std::path::Path;
use std::time::Duration;

/// What a host-native criterion concluded (the same shape as `run_command`'s).
pub(crate) use super::run_command::Outcome;

/// `pytest`'s parameters, parsed and checked once, at load ([`Pytest::parse`]).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Pytest {
    #[serde(default = "dot")]
    path: String,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default = "pytest_timeout")]
    timeout: f64,
}

/// `import_check`'s parameters, parsed and checked once, at load ([`ImportCheck::parse`]).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ImportCheck {
    path: String,
    #[serde(default = "import_check_timeout")]
    timeout: f64,
}

/// `pylint_score`'s parameters, parsed and checked once, at load ([`Pylint::parse`]).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Pylint {
    path: String,
    #[serde(default)]
    min_score: Option<f64>,
    #[serde(default)]
    fail_under: Option<f64>,
    #[serde(default)]
    rcfile: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default = "pylint_timeout")]
    timeout: f64,
}

/// [`limits::PYLINT_TIMEOUT_SECS`](crate::limits::PYLINT_TIMEOUT_SECS).
fn pylint_timeout() -> f64 {
    crate::limits::PYLINT_TIMEOUT_SECS
}

fn dot() -> String {
    ".".into()
}
/// [`limits::PYTEST_TIMEOUT_SECS`](crate::limits::PYTEST_TIMEOUT_SECS).
fn pytest_timeout() -> f64 {
    crate::limits::PYTEST_TIMEOUT_SECS
}
/// [`limits::IMPORT_CHECK_TIMEOUT_SECS`](crate::limits::IMPORT_CHECK_TIMEOUT_SECS).
fn import_check_timeout() -> f64 {
    crate::limits::IMPORT_CHECK_TIMEOUT_SECS
}

fn parse<T: serde::de::DeserializeOwned>(params: &Map<String, Value>) -> Result<T, String> {
    serde_json::from_value(Value::Object(params.clone())).map_err(|e| e.to_string())
}

fn check_timeout(timeout: f64) -> Result<(), String> {
    if timeout.is_finite() && timeout > 0.0 {
        Ok(())
    } else {
        Err(format!(
            "timeout must be a positive number of seconds, got {timeout}"
        ))
    }
}

impl Pytest {
    /// Parses and checks `pytest` params. Errors: an unknown or ill-typed key, a timeout
    /// that is not a positive number, a `path` that leaves the workspace.
    pub(crate) fn parse(params: &Map<String, Value>) -> Result<Pytest, String> {
        let p: Pytest = parse(params)?;
        check_timeout(p.timeout)?;
        grader_kit::check_relative(&p.path)
            .map(drop)
            .map_err(|e| format!("path: {e}"))?;
        Ok(p)
    }
}

impl ImportCheck {
    /// Parses and checks `import_check` params. Errors: as [`Pytest::parse`], and a
    /// missing `path`.
    pub(crate) fn parse(params: &Map<String, Value>) -> Result<ImportCheck, String> {
        let p: ImportCheck = parse(params)?;
        check_timeout(p.timeout)?;
        grader_kit::check_relative(&p.path)
            .map(drop)
            .map_err(|e| format!("path: {e}"))?;
        Ok(p)
    }
}

impl Pylint {
    /// Parses and checks `pylint_score` params. Errors: as [`Pytest::parse`], a missing
    /// `path`, an `rcfile` that leaves the workspace.
    pub(crate) fn parse(params: &Map<String, Value>) -> Result<Pylint, String> {
        let p: Pylint = parse(params)?;
        check_timeout(p.timeout)?;
        grader_kit::check_relative(&p.path)
            .map(drop)
            .map_err(|e| format!("path: {e}"))?;
        if let Some(rc) = &p.rcfile {
            grader_kit::check_relative(rc)
                .map(drop)
                .map_err(|e| format!("rcfile: {e}"))?;
        }
        Ok(p)
    }

    /// The pass threshold `min_score` (0–10) sets, `min_score / 10` clamped to 0–1; None
    /// when it is not given.
    pub(crate) fn pass_threshold(&self) -> Option<f64> {
        self.min_score.map(|m| (m / 10.0).clamp(0.0, 1.0))
    }
}

/// The rating in pylint's output ("Your code has been rated at 8.75/10").
fn pylint_rating(output: &str) -> Option<f64> {
    regex::Regex::new(r"Your code has been rated at (-?\d+(?:\.\d+)?)/10")
        .expect("a fixed pattern")
        .captures(output)
        .and_then(|c| c[1].parse().ok())
}

/// Runs the `pylint_score` criterion in `workspace`.
pub(crate) async fn grade_pylint(p: &Pylint, workspace: &Path, env: &CommandEnv<'_>) -> Outcome {
    let mut command = format!("pylint {}", quote(&p.path));
    if let Some(rc) = &p.rcfile {
        command.push_str(&format!(" --rcfile {}", quote(rc)));
    }
    if let Some(f) = p.fail_under {
        command.push_str(&format!(" --fail-under {f}"));
    }
    for arg in &p.args {
        command.push(' ');
        command.push_str(&quote(arg));
    }
    let (out, exec_details) = match run_tool("pylint", &command, workspace, env, p.timeout).await {
        Ok(ran) => ran,
        Err(outcome) => return outcome,
    };
    match pylint_rating(&format!("{}\n{}", out.stdout, out.stderr)) {
        Some(rating) => {
            let score = (rating / 10.0).clamp(0.0, 1.0);
            Outcome {
                score,
                details: format!("pylint score: {rating:.2}/10 (score {score:.3})\n{exec_details}"),
                error: None,
            }
        }
        None => error(
            "bad_score_output",
            "no \"Your code has been rated at X/10\" in pylint's output".into(),
            exec_details,
        ),
    }
}

/// Runs `command`, which calls the Python tool `tool`, in the workspace for at most
/// `timeout_s` seconds: its output and the details to record with the verdict, or the
/// failed outcome when it could not start, timed out, or `tool` is not on PATH (exit 127).
async fn run_tool(
    tool: &str,
    command: &str,
    workspace: &Path,
    env: &CommandEnv<'_>,
    timeout_s: f64,
) -> Result<(ShellOutcome, String), Outcome> {
    let out = exec::run(
        command,
        workspace,
        env,
        Duration::try_from_secs_f64(timeout_s).unwrap_or(Duration::MAX),
    )
    .await
    .map_err(|e| {
        error(
            "spawn",
            format!("could not start `{command}`: {e}"),
            String::new(),
        )
    })?;
    let exec_details = format!(
        "command: {command}\nexit code: {}\n{}\n{}",
        exec::exit_text(&out),
        stream("stdout", &out.stdout),
        stream("stderr", &out.stderr)
    );
    if out.timed_out {
        return Err(error(
            "timeout",
            format!("`{command}` timed out after {timeout_s} s"),
            exec_details,
        ));
    }
    if out.exit_code == Some(127) {
        return Err(error(
            "spawn",
            format!(
                "{tool} is not on PATH (install it in the task's environment, e.g. \
                 sandbox.python env_packages: [{tool}])"
            ),
            exec_details,
        ));
    }
    Ok((out, exec_details))
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

/// The pytest counts read from its output.
#[derive(Debug, Default, PartialEq, Eq)]
struct Counts {
    passed: u64,
    failed: u64,
    errors: u64,
    skipped: u64,
    collected: Option<u64>,
}

fn count(text: &str, pattern: &str) -> Option<u64> {
    regex::RegexBuilder::new(pattern)
        .case_insensitive(true)
        .build()
        .expect("a fixed pattern")
        .captures(text)
        .and_then(|c| c[1].parse().ok())
}

fn counts(output: &str) -> Counts {
    Counts {
        passed: count(output, r"(\d+)\s+passed").unwrap_or(0),
        failed: count(output, r"(\d+)\s+failed").unwrap_or(0),
        errors: count(output, r"(\d+)\s+errors?\b").unwrap_or(0),
        skipped: count(output, r"(\d+)\s+skipped").unwrap_or(0),
        collected: count(output, r"collected\s+(\d+)\s+items?"),
    }
}

/// coder_eval's pytest score and a summary line, from the counts and the exit code.
fn pytest_score(c: &Counts, exit_code: Option<i32>) -> (f64, String) {
    let ran = c.passed + c.failed + c.errors;
    let collected = c.collected.unwrap_or(ran + c.skipped);
    if collected == 0 {
        return (0.0, "pytest: no tests collected (score 0.00)".into());
    }
    if ran == 0 {
        return (
            0.0,
            format!(
                "pytest: {collected} collected, {} skipped, none ran (score 0.00)",
                c.skipped
            ),
        );
    }
    let mut score = c.passed as f64 / ran as f64;
    if exit_code != Some(0) && score == 1.0 {
        score = 0.99;
    }
    let mut line = format!(
        "pytest: {} passed, {} failed, {} errors",
        c.passed, c.failed, c.errors
    );
    if c.skipped > 0 {
        line.push_str(&format!(", {} skipped", c.skipped));
    }
    line.push_str(&format!(" out of {collected} collected (score {score:.2})"));
    (score, line)
}

/// Runs the `pytest` criterion in `workspace`.
pub(crate) async fn grade_pytest(p: &Pytest, workspace: &Path, env: &CommandEnv<'_>) -> Outcome {
    let mut command = format!("pytest {}", quote(&p.path));
    for arg in &p.args {
        command.push(' ');
        command.push_str(&quote(arg));
    }
    let (out, exec_details) = match run_tool("pytest", &command, workspace, env, p.timeout).await {
        Ok(ran) => ran,
        Err(outcome) => return outcome,
    };
    let (score, line) = pytest_score(
        &counts(&format!("{}\n{}", out.stdout, out.stderr)),
        out.exit_code,
    );
    Outcome {
        score,
        details: format!("{line}\n{exec_details}"),
        error: None,
    }
}

/// Which parameter strings of `pytest`, `import_check` and `pylint_score` are workspace
/// paths, for the check made as the task file is read.
pub(crate) fn param_kind(
    path: &[criteria_common::PathSeg<'_>],
) -> Option<criteria_common::ParamKind> {
    match path {
        [criteria_common::PathSeg::Key("path")] => Some(criteria_common::ParamKind::WorkspacePath),
        _ => None,
    }
}

#[cfg(test)]
mod tests;
