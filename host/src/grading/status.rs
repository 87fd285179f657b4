//! A task's final status, from how its turn ended and whether its criteria passed.

use crate::results::{TaskStatus, TurnStatus};

/// The rules of issue 4: a cap is a clean stop (SUCCESS when the criteria pass, else
/// MAX_TURNS_EXHAUSTED), a timeout is TIMEOUT, a reducer failure or a crashed CLI (an
/// error result, or no result at all) is ERROR whatever the criteria say, and a completed
/// turn is SUCCESS or FAILURE by the criteria. An early stop is a clean stop too: SUCCESS
/// or FAILURE by its armed gate (`criteria_passed` is that gate then). A budget stop is
/// SUCCESS when the criteria pass, else TOKEN_BUDGET_EXCEEDED or COST_BUDGET_EXCEEDED
/// (coder_eval's names).
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
        TurnStatus::EarlyStopped if criteria_passed => TaskStatus::Success,
        TurnStatus::EarlyStopped => TaskStatus::Failure,
        TurnStatus::TokenBudgetExceeded | TurnStatus::CostBudgetExceeded if criteria_passed => {
            TaskStatus::Success
        }
        TurnStatus::TimeBudgetReached if criteria_passed => TaskStatus::Success,
        TurnStatus::TimeBudgetReached => TaskStatus::Failure,
        TurnStatus::TokenBudgetExceeded => TaskStatus::TokenBudgetExceeded,
        TurnStatus::CostBudgetExceeded => TaskStatus::CostBudgetExceeded,
        TurnStatus::Timeout => TaskStatus::Timeout,
        TurnStatus::CliError | TurnStatus::Incomplete | TurnStatus::ReducerFailed => {
            TaskStatus::Error
        }
    }
}

/// Whether the criteria decide the status of a turn that ended this way. When they do
/// not (timeout, crash), the runner runs only the read-only criteria, as evidence
/// (`post_failure_criteria_results`).
pub(crate) fn criteria_decide(turn: TurnStatus) -> bool {
    matches!(
        turn,
        TurnStatus::Completed
            | TurnStatus::MaxTurnsExhausted
            | TurnStatus::MaxToolCallsExhausted
            | TurnStatus::EarlyStopped
            | TurnStatus::TokenBudgetExceeded
            | TurnStatus::CostBudgetExceeded
            | TurnStatus::TimeBudgetReached
    )
}

#[cfg(test)]
mod tests {
    use super::*;

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
            (S::EarlyStopped, true, T::Success),
            (S::EarlyStopped, false, T::Failure),
            (S::TokenBudgetExceeded, true, T::Success),
            (S::TokenBudgetExceeded, false, T::TokenBudgetExceeded),
            (S::CostBudgetExceeded, false, T::CostBudgetExceeded),
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
