//! Grading a finished turn and deciding the task's status.
// Interim: criteria are graded by the grading module once it lands; until then a task's
// status follows its turn alone.

use super::live::StopReason;
use super::output::TaskStatus;
use crate::record::{TurnRecord, TurnStatus};
use crate::task::Task;
use std::path::Path;

/// The criteria's outcome.
pub struct Verdict {
    pub criteria: Vec<serde_json::Value>,
    pub weighted_score: Option<f64>,
    pub passed: bool,
    pub post_failure: Vec<serde_json::Value>,
}

pub async fn grade(_task: &Task, _workspace: &Path, _turn: &TurnRecord) -> Verdict {
    Verdict {
        criteria: Vec::new(),
        weighted_score: None,
        passed: true,
        post_failure: Vec::new(),
    }
}

/// The task's status: a timeout is TIMEOUT; a cap is a clean stop (SUCCESS if the
/// criteria pass, else MAX_TURNS_EXHAUSTED); a run that could not be read is ERROR.
pub fn status(turn: &TurnRecord, stop: Option<StopReason>, verdict: &Verdict) -> TaskStatus {
    if stop.is_some_and(StopReason::is_timeout) || turn.final_status == TurnStatus::Timeout {
        return TaskStatus::Timeout;
    }
    match turn.final_status {
        TurnStatus::ReducerFailed => TaskStatus::Error,
        TurnStatus::MaxTurnsExhausted | TurnStatus::MaxToolCallsExhausted => {
            if verdict.passed { TaskStatus::Success } else { TaskStatus::MaxTurnsExhausted }
        }
        TurnStatus::Incomplete if stop == Some(StopReason::Cancelled) => TaskStatus::Error,
        _ => {
            if verdict.passed { TaskStatus::Success } else { TaskStatus::Failure }
        }
    }
}
