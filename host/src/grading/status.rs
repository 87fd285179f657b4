//! A task's final status, from how its turn ended and whether its criteria passed.

use crate::record::TurnStatus;
use serde::{Deserialize, Serialize};

/// How a task ended, as `task.json` reports it (`"SUCCESS"`, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum TaskStatus {
    /// The criteria passed (also on a run a cap stopped cleanly).
    Success,
    /// The run ended normally and the criteria failed.
    Failure,
    /// A cap (`max_turns`, `max_tool_calls`) stopped the run and the criteria failed.
    MaxTurnsExhausted,
    /// A timeout stopped the run (the partial turn is kept; criteria are evidence only).
    Timeout,
    /// The run could not be carried out or read: the reducer failed, the CLI reported a
    /// failure, or it ended without its final result (criteria are evidence only).
    Error,
}

impl TaskStatus {
    /// The status as `task.json` spells it: `SUCCESS`, `FAILURE`, `MAX_TURNS_EXHAUSTED`,
    /// `TIMEOUT`, `ERROR` (every human-readable output uses the same spelling).
    pub fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Success => "SUCCESS",
            TaskStatus::Failure => "FAILURE",
            TaskStatus::MaxTurnsExhausted => "MAX_TURNS_EXHAUSTED",
            TaskStatus::Timeout => "TIMEOUT",
            TaskStatus::Error => "ERROR",
        }
    }

    /// The one-character icon of the terminal summary: `+` SUCCESS, `-` FAILURE,
    /// `T` TIMEOUT, `M` MAX_TURNS_EXHAUSTED, `!` ERROR.
    pub fn icon(self) -> char {
        match self {
            TaskStatus::Success => '+',
            TaskStatus::Failure => '-',
            TaskStatus::Timeout => 'T',
            TaskStatus::MaxTurnsExhausted => 'M',
            TaskStatus::Error => '!',
        }
    }
}

impl std::fmt::Display for TaskStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The rules of issue 4: a cap is a clean stop (SUCCESS when the criteria pass, else
/// MAX_TURNS_EXHAUSTED), a timeout is TIMEOUT, a reducer failure or a crashed CLI (an
/// error result, or no result at all) is ERROR whatever the criteria say, and a completed
/// turn is SUCCESS or FAILURE by the criteria.
pub fn task_status(turn: TurnStatus, criteria_passed: bool) -> TaskStatus {
    match turn {
        TurnStatus::Completed if criteria_passed => TaskStatus::Success,
        TurnStatus::Completed => TaskStatus::Failure,
        TurnStatus::MaxTurnsExhausted | TurnStatus::MaxToolCallsExhausted if criteria_passed => {
            TaskStatus::Success
        }
        TurnStatus::MaxTurnsExhausted | TurnStatus::MaxToolCallsExhausted => {
            TaskStatus::MaxTurnsExhausted
        }
        TurnStatus::Timeout => TaskStatus::Timeout,
        TurnStatus::CliError | TurnStatus::Incomplete | TurnStatus::ReducerFailed => {
            TaskStatus::Error
        }
    }
}

/// Whether the criteria decide the status of a turn that ended this way. When they do
/// not (timeout, crash), the runner runs only the read-only criteria, as evidence
/// (`post_failure_criteria_results`).
pub fn criteria_decide(turn: TurnStatus) -> bool {
    matches!(
        turn,
        TurnStatus::Completed | TurnStatus::MaxTurnsExhausted | TurnStatus::MaxToolCallsExhausted
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_readable_spelling_is_the_json_one() {
        use TaskStatus as T;
        for s in [
            T::Success,
            T::Failure,
            T::MaxTurnsExhausted,
            T::Timeout,
            T::Error,
        ] {
            assert_eq!(serde_json::to_value(s).unwrap(), s.as_str());
            assert_eq!(s.to_string(), s.as_str());
        }
    }

    #[test]
    fn the_rules() {
        use TaskStatus as T;
        use TurnStatus as S;
        let cases = [
            (S::Completed, true, T::Success),
            (S::Completed, false, T::Failure),
            (S::MaxTurnsExhausted, true, T::Success),
            (S::MaxTurnsExhausted, false, T::MaxTurnsExhausted),
            (S::MaxToolCallsExhausted, true, T::Success),
            (S::MaxToolCallsExhausted, false, T::MaxTurnsExhausted),
            (S::Timeout, true, T::Timeout),
            (S::Timeout, false, T::Timeout),
            (S::ReducerFailed, true, T::Error),
            (S::CliError, true, T::Error),
            (S::Incomplete, true, T::Error),
        ];
        for (turn, passed, want) in cases {
            assert_eq!(task_status(turn, passed), want, "{turn:?} {passed}");
            assert_eq!(
                criteria_decide(turn),
                !matches!(want, T::Timeout | T::Error),
                "{turn:?}"
            );
        }
        assert_eq!(
            serde_json::to_string(&T::MaxTurnsExhausted).unwrap(),
            "\"MAX_TURNS_EXHAUSTED\""
        );
        assert_eq!(serde_json::to_string(&T::Success).unwrap(), "\"SUCCESS\"");
    }
}
