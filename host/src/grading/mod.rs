//! Grading: a task's `success_criteria` run on the workspace and the trajectory, the
//! weighted score, and the task's final status.
//!
//! Criteria are of four kinds:
//! - **built-in WASM criteria** (`file_exists`, `file_contains`, `file_check`,
//!   `file_matches_regex`, `cli_called`, `json_check`, `command_executed`,
//!   `commands_efficiency`, `skill_triggered`, `classification_match`): components
//!   embedded in the binary (`components/criteria-*`), run in the grader sandbox of
//!   `runtime::grader`;
//! - **user components**: `type: component` (`component: PATH`, `params: {...}`), any
//!   `.wasm` implementing `coder-eval:grader/grader@0.1.0`, loaded by path (relative to
//!   the task file's folder); and **plugin types** registered by name with `--criteria
//!   DIR` ([`plugins`]); both run in the same sandbox;
//! - **host-native** criteria, which run processes: `run_command` (and coder_eval's older
//!   `program_stdout_equals`, [`run_command`]), `pytest`, `pylint_score` and
//!   `import_check` ([`python`]), `reference_comparison` ([`reference`]);
//! - **judges**, which call a model: `llm_judge` and `agent_judge` ([`judge`]).
//!
//! coder_eval's vendor types (`uipath_eval`, `system_one_judge`) are refused at load with
//! a message pointing at plugins; `suite_thresholds` on any criterion is judged across a
//! dataset's rows ([`suite`]).
//!
//! A grader sees its parameters, the trajectory and the workspace read-only; nothing
//! else. Every criterion runs even when others fail: a grader that loops, exhausts its
//! memory, panics or returns an error scores 0 with an [`CriterionError`] saying which,
//! and the others are unaffected. Criteria run one after the other, in task order.
//!
//! Units: scores and thresholds are 0–1; `duration_ms` is whole milliseconds of wall
//! time.

pub(crate) mod builtin;
pub mod exec;
pub mod judge;
pub mod live;
pub mod plugins;
pub mod python;
pub mod reference;
pub mod run_command;
mod spec;
mod status;
pub mod suite;

pub use spec::CriterionSpec;
pub(crate) use spec::{Criterion, HostCriterion};
pub(crate) use status::criteria_decide;
pub use status::task_status;

use crate::components::criteria::BuiltinCriteria;
use crate::results::{CriterionError, CriterionResult, StampedEvent};
use crate::runtime::grader::{self, GradingInput, Trajectory};
use crate::runtime::{ComponentCache, ComponentError, LoadedComponent};
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
    /// The task's reference (`reference:`, absolute: a directory, or one file), when it
    /// has one: `reference_comparison` reads it, judges may see it, commands get it as
    /// `$REFERENCE_DIR`.
    pub reference_dir: Option<&'a Path>,
    /// `PATH` for the commands criteria run (`run_command`, `pytest`, `pylint_score`,
    /// `import_check`, `reference_comparison`): the task environment's (its virtualenv
    /// first); `None` = the host's.
    pub path: Option<&'a str>,
    /// Host variables handed to judges (`--judge-env`, `--pass-env`); `None` = none.
    pub judge_env: Option<&'a judge::JudgeEnv>,
    /// Runs `agent_judge` CLIs; `None` outside a run (`agent_judge` then fails clearly).
    pub(crate) agent_runner: Option<&'a dyn judge::agent::AgentRunner>,
    /// The task's container (`sandbox.driver: docker`): the criteria's commands run in it,
    /// as in coder_eval; `None` = on the host.
    pub container: Option<&'a crate::sandbox::docker::DockerSandbox>,
}

impl<'a> GradeContext<'a> {
    /// A context with no reference, the host's `PATH`, no judge variables and no agent
    /// runner.
    pub fn new(
        workspace: &'a Path,
        task_dir: &'a Path,
        trajectory: &'a [StampedEvent],
        prompt: &'a str,
        final_text: Option<&'a str>,
    ) -> GradeContext<'a> {
        GradeContext {
            workspace,
            task_dir,
            trajectory,
            prompt,
            final_text,
            reference_dir: None,
            path: None,
            judge_env: None,
            agent_runner: None,
            container: None,
        }
    }

    /// The environment of the commands criteria run.
    fn command_env(&self) -> exec::CommandEnv<'a> {
        let mut vars = vec![("TASK_DIR".to_string(), self.task_dir.display().to_string())];
        if let Some(dir) = self.reference_dir {
            vars.push(("REFERENCE_DIR".into(), dir.display().to_string()));
        }
        exec::CommandEnv {
            path: self.path,
            vars,
            container: self.container,
        }
    }

    fn judge_inputs(&self) -> judge::JudgeInputs<'a> {
        judge::JudgeInputs {
            workspace: self.workspace,
            task_dir: self.task_dir,
            reference_dir: self.reference_dir,
            trajectory: self.trajectory,
            prompt: self.prompt,
            final_text: self.final_text,
        }
    }
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
    let needs_trajectory = criteria.iter().any(CriterionSpec::is_wasm);
    let trajectory = needs_trajectory.then(|| Trajectory::new(ctx.trajectory));
    let mut results = Vec::with_capacity(criteria.len());
    for spec in criteria {
        let started = Instant::now();
        let mut judge_record = None;
        let outcome = grade_one(spec, ctx, trajectory.as_ref(), cache, &mut judge_record).await;
        let mut r = result(spec, outcome, started);
        r.judge = judge_record;
        results.push(r);
    }
    results
}

fn from_host(out: run_command::Outcome) -> Outcome {
    match out.error {
        None => Ok((out.score, out.details)),
        Some((kind, message)) => Err((CriterionError { kind, message }, out.details)),
    }
}

/// A judge's outcome as a criterion's, its record kept in `record`.
fn judged(out: judge::JudgeOutcome, record: &mut Option<judge::JudgeRecord>) -> Outcome {
    *record = out.record;
    out.result.map_err(|(kind, message)| fail(&kind, message))
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
    judge_record: &mut Option<judge::JudgeRecord>,
) -> Outcome {
    let env = ctx.command_env();
    let (source, params) = match &spec.criterion {
        Criterion::RunCommand(params) => {
            return from_host(run_command::grade(params, ctx.workspace, &env).await);
        }
        Criterion::Host(host) => {
            let ws = ctx.workspace;
            return match host {
                HostCriterion::Pytest(t) => from_host(python::grade_pytest(t, ws, &env).await),
                HostCriterion::PylintScore(t) => from_host(python::grade_pylint(t, ws, &env).await),
                HostCriterion::ImportCheck(t) => {
                    from_host(python::grade_import_check(t, ws, &env).await)
                }
                HostCriterion::ReferenceComparison(t) => {
                    from_host(reference::grade(t, ws, ctx.reference_dir, &env).await)
                }
                HostCriterion::LlmJudge(j) => {
                    let out = judge::grade_llm(j, &ctx.judge_inputs(), ctx.judge_env).await;
                    judged(out, judge_record)
                }
                HostCriterion::AgentJudge(j) => {
                    let out = judge::agent::grade(j, &ctx.judge_inputs(), ctx.agent_runner).await;
                    judged(out, judge_record)
                }
            };
        }
        Criterion::Plugin { path, params } => (Source::File(path.clone()), params.clone()),
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
            Source::Builtin(family) => crate::components::criteria::load(family, cache),
            Source::File(path) => {
                let loaded = cache.load_file(path)?;
                grader::check(&loaded)?;
                Ok(loaded)
            }
        }
    }
}

/// The error's message followed by its causes.
pub fn error_chain(err: &dyn std::error::Error) -> String {
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
        judge: None,
        advisory: false,
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
            judge: None,
            advisory: false,
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
