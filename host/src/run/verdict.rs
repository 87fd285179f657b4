//! [`TaskVerdict`]: grading a finished turn and deciding the task's status (rules in
//! [`crate::grading::task_status`]).

use super::RunOptions;
use super::judge::JudgeRunner;
use crate::grading::judge::JudgeEnv;
use crate::grading::{self, GradeContext};
use crate::results::{ArmedGate, CriterionResult, StampedEvent, TaskStatus, TurnRecord};
use crate::task::Task;
use std::path::Path;

/// What the judges of one task's grading get: the variables handed to judges and the
/// runner of `agent_judge` CLIs.
pub struct Judges {
    env: JudgeEnv,
    runner: JudgeRunner,
}

impl Judges {
    /// For the task whose results go to `result_dir`.
    pub fn new(options: &RunOptions, result_dir: &Path, task: &Task) -> Judges {
        let mut names = options.pass_env.clone();
        names.extend(options.judge_env.iter().cloned());
        Judges {
            env: JudgeEnv::from_host(&names),
            runner: JudgeRunner::new(options, result_dir.to_path_buf(), task.dir.clone()),
        }
    }
}

/// The criteria's outcome for one run.
pub struct TaskVerdict {
    /// Results that decide the status (empty after a timeout or crash).
    pub criteria: Vec<CriterionResult>,
    pub weighted_score: Option<f64>,
    pub status: TaskStatus,
    /// After a timeout or crash: the read-only criteria, run as evidence only.
    pub post_failure: Vec<CriterionResult>,
    /// The gate of a run an early stop cut short (its armed criteria only).
    pub armed_gate: Option<ArmedGate>,
}

/// What the task's environment adds for the criteria that run commands or read the
/// reference.
#[derive(Debug, Clone, Copy, Default)]
pub struct Env<'a> {
    /// The reference staged for grading (`<run dir>/reference`), when the task has one:
    /// `$REFERENCE_DIR` for commands, read by `reference_comparison` and judges.
    pub reference_dir: Option<&'a Path>,
    /// `PATH` for commands (mock commands and the task's `.venv` first); `None` = the
    /// host's.
    pub path: Option<&'a str>,
    /// The task's container (`sandbox.driver: docker`): commands run in it.
    pub container: Option<&'a crate::sandbox::docker::DockerSandbox>,
}

/// Grades the run in `workspace` whose turn ended as `turn`.
pub async fn grade(
    task: &Task,
    workspace: &Path,
    turn: &TurnRecord,
    trajectory: &[StampedEvent],
    judges: &Judges,
    env: Env<'_>,
) -> TaskVerdict {
    let final_text = turn.final_text().map(str::to_string);
    let mut ctx = GradeContext::new(
        workspace,
        &task.dir,
        trajectory,
        &task.prompt,
        final_text.as_deref(),
    );
    ctx.judge_env = Some(&judges.env);
    ctx.reference_dir = env.reference_dir;
    ctx.path = env.path;
    ctx.container = env.container;
    ctx.agent_runner = Some(&judges.runner);
    if grading::criteria_decide(turn.final_status) {
        let criteria = grading::grade_all(&task.success_criteria, &ctx).await;
        // A run cut short by an early stop is gated on its armed criteria only; a run that
        // ended any other way, on the full set.
        let armed_gate = match (&turn.final_status, &turn.early_stop) {
            (crate::results::TurnStatus::EarlyStopped, Some(outcome)) => {
                let weights: Vec<f64> = outcome.armed.iter().map(|a| a.weight).collect();
                let scores: Vec<f64> = outcome
                    .armed
                    .iter()
                    .map(|a| criteria.get(a.index).map_or(0.0, |c| c.score))
                    .collect();
                let (score, passed) =
                    crate::turn::early_stop::armed_gate(&weights, &scores, outcome.gate_threshold);
                Some(ArmedGate {
                    score,
                    threshold: outcome.gate_threshold,
                    passed,
                    armed: outcome.armed.iter().map(|a| a.index).collect(),
                })
            }
            _ => None,
        };
        let passed = armed_gate
            .as_ref()
            .map_or_else(|| grading::passed(&criteria), |g| g.passed);
        let criteria = mark_advisory(criteria, armed_gate.as_ref());
        let status = grading::task_status(turn.final_status, passed);
        TaskVerdict {
            weighted_score: grading::weighted_score(&criteria),
            criteria,
            status,
            post_failure: Vec::new(),
            armed_gate,
        }
    } else {
        let read_only: Vec<_> = task
            .success_criteria
            .iter()
            .filter(|c| c.is_read_only())
            .cloned()
            .collect();
        TaskVerdict {
            criteria: Vec::new(),
            weighted_score: None,
            status: grading::task_status(turn.final_status, false),
            post_failure: grading::grade_all(&read_only, &ctx).await,
            armed_gate: None,
        }
    }
}

/// The criteria with those outside the armed gate (an early-stopped run is gated on its
/// armed criteria only) marked `advisory`; unchanged without a gate.
pub(crate) fn mark_advisory(
    mut criteria: Vec<crate::results::CriterionResult>,
    gate: Option<&ArmedGate>,
) -> Vec<crate::results::CriterionResult> {
    if let Some(gate) = gate {
        for (i, c) in criteria.iter_mut().enumerate() {
            c.advisory = !gate.armed.contains(&i);
        }
    }
    criteria
}

/// Grades a task that ran no agent (`agent.type: none`): every criterion on the prepared
/// workspace, with an empty trajectory and no final answer; the status as for a turn
/// that completed.
pub(crate) async fn grade_agentless(
    task: &Task,
    workspace: &Path,
    judges: &Judges,
    env: Env<'_>,
) -> TaskVerdict {
    let mut ctx = GradeContext::new(workspace, &task.dir, &[], &task.prompt, None);
    ctx.judge_env = Some(&judges.env);
    ctx.reference_dir = env.reference_dir;
    ctx.path = env.path;
    ctx.container = env.container;
    ctx.agent_runner = Some(&judges.runner);
    let criteria = grading::grade_all(&task.success_criteria, &ctx).await;
    let status = grading::task_status(
        crate::results::TurnStatus::Completed,
        grading::passed(&criteria),
    );
    TaskVerdict {
        weighted_score: grading::weighted_score(&criteria),
        criteria,
        status,
        post_failure: Vec::new(),
        armed_gate: None,
    }
}
