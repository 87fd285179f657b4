//! Grading: a task's `success_criteria` run on the workspace and the trajectory, the
//! weighted score, and the task's final status.
//!
//! Criteria are of three kinds:
//! - **built-in WASM criteria** (`file_exists`, `file_contains`, `file_check`,
//!   `file_matches_regex`, `json_check`, `command_executed`, `commands_efficiency`,
//!   `skill_triggered`, `classification_match`): components embedded in the binary
//!   (`components/criteria-*`), run in the grader sandbox of `runtime::grader`;
//! - **user components** (`type: component`, `component: PATH`, `params: {...}`): any
//!   `.wasm` implementing `coder-eval:grader/grader@0.1.0`, loaded by path (relative to
//!   the task file's folder) through the precompiled cache, run in the same sandbox;
//! - **`run_command`**: host-native, a shell command in the workspace ([`run_command`]).
//!
//! A grader sees its parameters, the trajectory and the workspace read-only; nothing
//! else. Every criterion runs even when others fail: a grader that loops, exhausts its
//! memory, panics or returns an error scores 0 with an [`CriterionError`] saying which,
//! and the others are unaffected. Criteria run one after the other, in task order.
//!
//! Units: scores and thresholds are 0–1; `duration_ms` is whole milliseconds of wall
//! time.

pub(crate) mod builtin;
pub mod live;
pub mod run_command;
mod spec;
mod status;

pub use spec::{CriterionSpec, DEFAULT_PASS_THRESHOLD};
pub use status::{criteria_decide, task_status};

use crate::results::{CriterionError, CriterionResult, StampedEvent};
use crate::runtime::grader::{self, GradingInput, Trajectory};
use crate::runtime::{ComponentCache, ComponentError, LoadedComponent};
use builtin::BuiltinCriteria;
use serde_json::Value;
use spec::Criterion;
use std::path::Path;
use std::time::Instant;

/// What the criteria of one task judge.
pub struct GradeContext<'a> {
    /// The agent's workspace (preopened read-only for graders; `run_command`'s cwd).
    pub workspace: &'a Path,
    /// The task file's folder: `component:` paths are relative to it.
    pub task_dir: &'a Path,
    /// The run's trajectory, every normalized event in order.
    pub trajectory: &'a [StampedEvent],
    /// The task's prompt.
    pub prompt: &'a str,
    /// The agent's final answer as the runner determined it; `classification_match`
    /// judges it (else it derives one from the trajectory).
    pub final_text: Option<&'a str>,
}

/// Grades every criterion in order with the process-wide component cache. Never fails:
/// each failure is that criterion's [`CriterionError`] with score 0.
pub async fn grade_all(criteria: &[CriterionSpec], ctx: &GradeContext<'_>) -> Vec<CriterionResult> {
    grade_all_with(criteria, ctx, ComponentCache::global()).await
}

/// [`grade_all`] with a given component cache (benchmarks, tests).
pub async fn grade_all_with(
    criteria: &[CriterionSpec],
    ctx: &GradeContext<'_>,
    cache: &'static ComponentCache,
) -> Vec<CriterionResult> {
    let needs_trajectory = criteria.iter().any(CriterionSpec::is_read_only);
    let trajectory = needs_trajectory.then(|| Trajectory::new(ctx.trajectory));
    let mut results = Vec::with_capacity(criteria.len());
    for spec in criteria {
        let started = Instant::now();
        let outcome = grade_one(spec, ctx, trajectory.as_ref(), cache).await;
        results.push(result(spec, outcome, started));
    }
    results
}

/// A criterion's score and details, or why it could not judge (with details to show).
type Outcome = Result<(f64, String), (CriterionError, String)>;

fn fail(kind: &str, message: String) -> (CriterionError, String) {
    (
        CriterionError {
            kind: kind.into(),
            message: message.clone(),
        },
        message,
    )
}

async fn grade_one(
    spec: &CriterionSpec,
    ctx: &GradeContext<'_>,
    trajectory: Option<&Trajectory>,
    cache: &'static ComponentCache,
) -> Outcome {
    let (source, params) = match &spec.criterion {
        Criterion::RunCommand(params) => {
            let out = run_command::grade(params, ctx.workspace).await;
            return match out.error {
                None => Ok((out.score, out.details)),
                Some((kind, message)) => Err((CriterionError { kind, message }, out.details)),
            };
        }
        Criterion::Component { path, params } => {
            (Source::File(ctx.task_dir.join(path)), params.clone())
        }
        Criterion::Builtin {
            family,
            params,
            wants_final_text,
        } => {
            let mut params = params.clone();
            if *wants_final_text && let Some(text) = ctx.final_text {
                params["final_text"] = Value::String(text.to_string());
            }
            (Source::Builtin(family), params)
        }
    };
    let input = GradingInput {
        params_json: params.to_string(),
        trajectory: trajectory.cloned().unwrap_or_else(|| Trajectory::new(&[])),
        prompt: ctx.prompt.to_string(),
        workspace: ctx.workspace.to_path_buf(),
    };
    let joined = tokio::task::spawn_blocking(move || {
        let loaded = source.load(cache)?;
        grader::grade(&loaded, &input)
    })
    .await;
    let verdict = match joined {
        Err(e) => return Err(fail("internal", format!("the grading task failed: {e}"))),
        Ok(Err(e)) => return Err(fail(e.kind(), error_chain(&e))),
        Ok(Ok(Err(message))) => return Err(fail("grading_error", message)),
        Ok(Ok(Ok(verdict))) => verdict,
    };
    if verdict.score.is_nan() {
        return Err(fail(
            "invalid_verdict",
            format!("the grader returned score NaN; {}", verdict.details),
        ));
    }
    let score = verdict.score.clamp(0.0, 1.0);
    let mut details = verdict.details;
    if score != verdict.score {
        details.push_str(&format!(" [score {} clamped to {score}]", verdict.score));
    }
    Ok((score, details))
}

/// Where a WASM criterion comes from.
enum Source {
    Builtin(&'static BuiltinCriteria),
    File(std::path::PathBuf),
}

impl Source {
    fn load(&self, cache: &'static ComponentCache) -> Result<LoadedComponent, ComponentError> {
        match self {
            Source::Builtin(family) => builtin::load(family, cache),
            Source::File(path) => {
                let loaded = cache.load_file(path)?;
                grader::check(&loaded)?;
                Ok(loaded)
            }
        }
    }
}

/// The error's message followed by its causes.
fn error_chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        text.push_str(&format!(": {cause}"));
        source = cause.source();
    }
    text
}

fn result(spec: &CriterionSpec, outcome: Outcome, started: Instant) -> CriterionResult {
    let (score, details, error) = match outcome {
        Ok((score, details)) => (score, details, None),
        Err((error, details)) => (0.0, details, Some(error)),
    };
    let description = match (&spec.description, &spec.criterion) {
        (Some(d), _) => d.clone(),
        (None, Criterion::Component { path, .. }) => format!("component {path}"),
        (None, _) => spec.kind.clone(),
    };
    CriterionResult {
        kind: spec.kind.clone(),
        description,
        weight: spec.weight,
        pass_threshold: spec.pass_threshold,
        score,
        passed: error.is_none() && score + 1e-9 >= spec.pass_threshold,
        details,
        duration_ms: started.elapsed().as_millis() as u64,
        error,
    }
}

/// The weighted mean score (0–1) of the criteria with weight > 0; `None` when there are
/// none.
pub fn weighted_score(results: &[CriterionResult]) -> Option<f64> {
    let counted: Vec<&CriterionResult> = results.iter().filter(|r| r.weight > 0.0).collect();
    let total: f64 = counted.iter().map(|r| r.weight).sum();
    (total > 0.0).then(|| counted.iter().map(|r| r.weight * r.score).sum::<f64>() / total)
}

/// Whether the task passes: every criterion with weight > 0 met its threshold (true
/// when there is none).
pub fn passed(results: &[CriterionResult]) -> bool {
    results.iter().filter(|r| r.weight > 0.0).all(|r| r.passed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(weight: f64, score: f64, threshold: f64) -> CriterionResult {
        CriterionResult {
            kind: "file_exists".into(),
            description: String::new(),
            weight,
            pass_threshold: threshold,
            score,
            passed: score >= threshold,
            details: String::new(),
            duration_ms: 0,
            error: None,
        }
    }

    #[test]
    fn weights_and_pass() {
        let results = [r(1.0, 1.0, 0.9), r(3.0, 0.5, 0.5), r(0.0, 0.0, 0.9)];
        assert_eq!(weighted_score(&results), Some((1.0 + 1.5) / 4.0));
        assert!(
            passed(&results),
            "the informational criterion does not count"
        );
        let failing = [r(1.0, 1.0, 0.9), r(1.0, 0.8, 0.9)];
        assert!(!passed(&failing));
        assert_eq!(weighted_score(&[r(0.0, 1.0, 0.9)]), None);
        assert!(passed(&[]));
    }
}
