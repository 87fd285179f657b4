//! Grading: a task's `success_criteria` run on the workspace and the trajectory, the
//! weighted score, and the task's final status.
//!
//! Criteria are of three kinds:
//! - **built-in WASM criteria** (`file_exists`, `file_contains`, `file_check`,
//!   `file_matches_regex`, `json_check`, `command_executed`, `commands_efficiency`,
//!   `skill_triggered`, `classification_match`): components embedded in the binary
//!   (`components/criteria-*`), run in the grader sandbox of [`crate::runtime::grader`];
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

mod builtin;
pub mod run_command;
mod spec;
mod status;

pub use builtin::{BuiltinCriteria, all_types as builtin_types};
pub use spec::{CriterionSpec, DEFAULT_PASS_THRESHOLD};
pub use status::{TaskStatus, criteria_decide, task_status};

use crate::record::StampedEvent;
use crate::runtime::grader::{self, GradingInput, Trajectory};
use crate::runtime::{ComponentCache, ComponentError, LoadedComponent};
use serde::{Deserialize, Serialize};
use serde_json::Value;
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

/// The result of one criterion.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CriterionResult {
    /// The criterion type (`file_exists`, ..., `run_command`, `component`).
    #[serde(rename = "type")]
    pub kind: String,
    /// The task's description of it, else its type (for a component, its path).
    pub description: String,
    /// Its weight in the weighted score (0 = informational).
    pub weight: f64,
    /// The score at which it passes, 0–1.
    pub pass_threshold: f64,
    /// 0–1; 0 when it failed to judge.
    pub score: f64,
    /// `score ≥ pass_threshold` and no error.
    pub passed: bool,
    /// What the criterion says about the run (at most 64 KiB from a grader).
    pub details: String,
    /// Wall time of this criterion, ms (loading a component included).
    pub duration_ms: u64,
    /// Set when the criterion could not judge.
    pub error: Option<CriterionError>,
}

/// Why a criterion could not judge.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CriterionError {
    /// A snake_case kind. From the sandbox: `out_of_fuel`, `out_of_memory`, `trap` (a
    /// panic; the message holds the guest's panic text), `deadline`, `read`, `invalid`,
    /// `unsupported_version`, `wrong_world`, `forbidden_import`, `instantiate`. From the
    /// grader itself: `grading_error` (it returned an error value), `invalid_verdict` (a
    /// score that is not a number). From `run_command`: `spawn`, `timeout`,
    /// `bad_score_output`. From the host: `invalid_criterion`, `internal`.
    pub kind: String,
    /// A sentence naming the criterion's component or command.
    pub message: String,
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
    let needs_trajectory = criteria.iter().any(|c| c.kind != "run_command");
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
    spec.validate().map_err(|e| fail("invalid_criterion", e))?;
    if spec.kind == "run_command" {
        let out = run_command::grade(&spec.params, ctx.workspace).await;
        return match out.error {
            None => Ok((out.score, out.details)),
            Some((kind, message)) => Err((CriterionError { kind, message }, out.details)),
        };
    }
    let (source, params) = if spec.kind == "component" {
        let path = spec
            .params
            .get("component")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let params = match spec.params.get("params") {
            Some(Value::Object(p)) => Value::Object(p.clone()),
            _ => Value::Object(Default::default()),
        };
        (Source::File(ctx.task_dir.join(path)), params)
    } else {
        let family = builtin::for_type(&spec.kind)
            .ok_or_else(|| fail("invalid_criterion", format!("unknown type `{}`", spec.kind)))?;
        let mut params = spec.guest_params();
        if spec.kind == "classification_match"
            && let Some(text) = ctx.final_text
        {
            params["final_text"] = Value::String(text.to_string());
        }
        (Source::Builtin(family), params)
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
    let description = match (&spec.description, spec.kind.as_str()) {
        (Some(d), _) => d.clone(),
        (None, "component") => format!(
            "component {}",
            spec.params
                .get("component")
                .and_then(Value::as_str)
                .unwrap_or("?")
        ),
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

    #[test]
    fn result_round_trips_as_json() {
        let mut one = r(1.0, 0.25, 0.9);
        one.error = Some(CriterionError {
            kind: "out_of_fuel".into(),
            message: "m".into(),
        });
        let json = serde_json::to_value(&one).unwrap();
        assert_eq!(json["type"], "file_exists");
        assert_eq!(json["error"]["kind"], "out_of_fuel");
        let back: CriterionResult = serde_json::from_value(json).unwrap();
        assert_eq!(back, one);
    }
}
