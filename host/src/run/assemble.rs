//! `task.json` from the products of a task's stages ([`assemble`]), or from the stage
//! that failed and what was established before it ([`failed`]).

use super::Prepared;
use super::error::{RunError, error_reason, turn_error_kind};
use super::verdict::TaskVerdict;
use crate::results::{CliInfo, Paths, StopRecord, TASK_RESULT_VERSION, TaskResult, TaskStatus};
use crate::task::Task;
use crate::turn::live::LiveTurn;
use harness_kit::{ExitCode, LimitKind};

/// What a task had established when it failed, kept in its `task.json`.
#[derive(Debug, Clone, Default)]
pub(super) struct Established {
    /// The limits the CLI enforces itself.
    pub(super) native: Vec<LimitKind>,
    /// The CLI that ran (or was about to).
    pub(super) cli: CliInfo,
    /// Setup and launch preparation, ms.
    pub(super) setup_ms: Option<u64>,
    /// What the turn left besides its record, when the failure came after it.
    pub(super) after_turn: Option<AfterTurn>,
    /// The `pre_run` steps that ran (the failed or interrupted one included).
    pub(super) steps: Vec<crate::results::StepRecord>,
}

/// What `task.json` keeps of a turn when a later stage (`post_run`) failed.
#[derive(Debug, Clone)]
pub(super) struct AfterTurn {
    pub(super) stop: Option<StopRecord>,
    pub(super) stderr_tail: String,
    pub(super) pgid: Option<i32>,
    pub(super) mark: String,
    pub(super) leftover_processes: u32,
    pub(super) host_work_us: u64,
    pub(super) scripted_model_requests: Option<Vec<serde_json::Value>>,
    /// The finished turn, kept when a later stage (grading) failed or was interrupted.
    pub(super) record: Option<crate::results::TurnRecord>,
}

/// The turn stage's product.
pub(super) struct TurnDone {
    pub(super) turn: LiveTurn,
    /// Requests the scripted model answered, when one played the turn.
    pub(super) scripted_model_requests: Option<Vec<serde_json::Value>>,
    /// Time-budget mode's sessions (`turn` is then the last one's, with every session's
    /// events in its trajectory).
    pub(super) time_budget: Option<crate::results::TimeBudgetRecord>,
    /// Time-budget mode: the turn records of the sessions before the last, in order
    /// (`cost.json` keeps each one's provider reports and model); empty otherwise.
    pub(super) earlier_turns: Vec<crate::results::TurnRecord>,
}

/// The grade stage's product.
pub(super) struct Graded {
    pub(super) verdict: TaskVerdict,
    pub(super) grading_ms: u64,
    /// Whether the task's reference was staged (`<dir>/reference`) for the criteria.
    pub(super) reference_staged: bool,
    /// The `pre_run` and `post_run` steps, in order.
    pub(super) steps: Vec<crate::results::StepRecord>,
}

/// Every stage's product: what [`assemble`] makes `task.json` from.
pub(super) struct Done {
    pub(super) established: Established,
    pub(super) exit_codes: Vec<ExitCode>,
    pub(super) turn: TurnDone,
    pub(super) graded: Graded,
}

/// The `task.json` of a task whose every stage ran.
pub(super) fn assemble(p: &Prepared, done: Done) -> TaskResult {
    let Done {
        established,
        exit_codes,
        turn:
            TurnDone {
                turn,
                scripted_model_requests,
                time_budget,
                earlier_turns: _,
            },
        graded:
            Graded {
                verdict,
                grading_ms,
                reference_staged,
                steps,
            },
    } = done;
    // A documented exit code of the CLI's (its launch plan lists them) says what failed.
    let code = turn.record.exit.as_ref().and_then(|e| e.code);
    let exit_code_meaning = exit_codes
        .into_iter()
        .find(|e| code == Some(e.code) && code != Some(0));
    let cli = CliInfo {
        pgid: turn.pgid,
        mark: Some(turn.mark),
        leftover_processes: Some(turn.leftover_processes),
        exit_code_meaning,
        containment: turn.containment.map(str::to_string),
        ..established.cli
    };
    // An interrupted turn (SIGINT, SIGTERM, SIGHUP) is never a pass, whatever the
    // criteria say of its partial workspace.
    let interrupted = turn.stop == Some(crate::results::StopReason::Interrupted);
    let status = if interrupted {
        TaskStatus::Error
    } else {
        verdict.status
    };
    let (error, error_kind) = if interrupted {
        (
            Some(RunError::Interrupted.message()),
            Some(RunError::Interrupted.kind().to_string()),
        )
    } else if verdict.status == TaskStatus::Error {
        (
            Some(error_reason(
                &turn.record,
                &turn.stderr_tail,
                cli.exit_code_meaning.as_ref(),
            )),
            Some(turn_error_kind(&turn.record)),
        )
    } else {
        (None, None)
    };
    let base = blank(p, &established.native);
    TaskResult {
        status,
        error,
        error_kind,
        steps,
        paths: Paths {
            reference: reference_staged.then(|| "reference".to_string()),
            ..base.paths.clone()
        },
        cli,
        stop: turn.stop.map(|reason| StopRecord {
            reason,
            at_ms: turn.stop_at_ms,
        }),
        time_budget,
        criteria: verdict.criteria,
        weighted_score: verdict.weighted_score,
        post_failure_criteria_results: verdict.post_failure,
        armed_gate: verdict.armed_gate,
        soft_budget_warnings: soft_budget_warnings(p, &turn.record),
        setup_ms: established.setup_ms,
        grading_ms: Some(grading_ms),
        host_turn_work_us: Some(turn.host_work_us),
        stderr_tail: turn.stderr_tail,
        scripted_model_requests,
        turn: Some(turn.record),
        ..base
    }
}

/// The `task.json` of a task that failed at a stage: ERROR, why, and what it had
/// established.
pub(super) fn failed(p: &Prepared, error: &RunError, established: Established) -> TaskResult {
    let mut result = TaskResult {
        error: Some(error.message()),
        error_kind: Some(error.kind().to_string()),
        cli: established.cli,
        setup_ms: established.setup_ms,
        steps: established.steps,
        ..blank(p, &established.native)
    };
    if let Some(after) = established.after_turn {
        result.stop = after.stop;
        result.stderr_tail = after.stderr_tail;
        result.cli.pgid = after.pgid;
        result.cli.mark = Some(after.mark);
        result.cli.leftover_processes = Some(after.leftover_processes);
        result.host_turn_work_us = Some(after.host_work_us);
        result.scripted_model_requests = after.scripted_model_requests;
        result.turn = after.record;
    }
    result
}

/// The soft budgets gone over (`expected_turns`: tool calls plus the final reply, as
/// coder_eval counts visible turns; `expected_tool_calls`), each also a warning on stderr.
fn soft_budget_warnings(
    p: &Prepared,
    turn: &crate::results::TurnRecord,
) -> Vec<crate::results::SoftBudgetWarning> {
    let final_reply = turn
        .cli_result
        .as_ref()
        .and_then(|r| r.text.as_ref())
        .is_some_and(|t| !t.trim().is_empty());
    let warnings = p.task.run_limits.soft_budgets().check(
        crate::limits::budget::tool_calls_that_ran(&turn.tool_calls),
        final_reply,
    );
    for w in &warnings {
        eprintln!(
            "warning: {} on {}: over {}: {} > {} (a soft budget: the run was not stopped)",
            p.task.task_id, p.harness, w.budget, w.actual, w.expected
        );
    }
    warnings
}

/// A task's result before anything ran: ERROR, no turn, no criteria.
fn blank(p: &Prepared, native: &[LimitKind]) -> TaskResult {
    TaskResult {
        early_stop_inert: p.live.as_ref().map(|l| l.inert.clone()).unwrap_or_default(),
        ..blank_for(&p.task, &p.harness, native)
    }
}

/// A `skip: true` task on `harness`: SKIPPED, nothing started.
pub(crate) fn skipped(task: &Task, harness: &str) -> TaskResult {
    TaskResult {
        status: TaskStatus::Skipped,
        ..blank_for(task, harness, &[])
    }
}

fn blank_for(task: &Task, harness: &str, native: &[LimitKind]) -> TaskResult {
    let p = Skeleton { task, harness };
    TaskResult {
        result_version: TASK_RESULT_VERSION,
        task_id: p.task.task_id.clone(),
        harness: p.harness.to_string(),
        status: TaskStatus::Error,
        error: None,
        error_kind: None,
        description: p.task.description.clone(),
        task_file: p.task.path.display().to_string(),
        prompt: p.task.prompt.clone(),
        requested_model: p.task.agent.model.clone(),
        cli: CliInfo::default(),
        run_limits: p.task.run_limits.record(native),
        stop: None,
        turn: None,
        time_budget: None,
        criteria: Vec::new(),
        weighted_score: None,
        post_failure_criteria_results: Vec::new(),
        armed_gate: None,
        early_stop_inert: Vec::new(),
        soft_budget_warnings: Vec::new(),
        setup_ms: None,
        grading_ms: None,
        host_turn_work_us: None,
        stderr_tail: String::new(),
        scripted_model_requests: None,
        paths: Paths::default(),
        load_notes: p.task.load_notes.clone(),
        row: p.task.row.clone(),
        steps: Vec::new(),
        variant: None,
        replicate: None,
        replicates: None,
        lineage: None,
        cost: None,
        tags: p.task.tags.clone(),
        attempts: None,
        infra_retries: Vec::new(),
    }
}

/// What [`blank_for`] reads.
struct Skeleton<'a> {
    task: &'a Task,
    harness: &'a str,
}
