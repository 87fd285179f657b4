//! What a task's criteria concluded ([`CriterionResult`]) and the task's final status
//! ([`TaskStatus`]), as `task.json` reports them. The rules that decide the status live
//! in `grading`.

use serde::{Deserialize, Serialize};

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
    /// A judge's prompt, verdict, usage and cost (`llm_judge`, `agent_judge`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge: Option<super::JudgeRecord>,
    /// `true` when the criterion did not count toward the status: an early stop gated
    /// the run on its armed criteria (`armed_gate.armed`), and this one is not among them
    /// (coder_eval's rule: the others are advisory). Absent (false) otherwise.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub advisory: bool,
}

/// Why a criterion could not judge.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CriterionError {
    /// A snake_case kind. From the sandbox: `out_of_fuel`, `out_of_memory`, `trap` (a
    /// panic; the message holds the guest's panic text), `deadline`, `read`, `invalid`,
    /// `unsupported_version`, `wrong_world`, `forbidden_import`, `instantiate`. From the
    /// grader itself: `grading_error` (it returned an error value), `invalid_verdict` (a
    /// score that is not a number). From `run_command`, `pytest`, `pylint_score`,
    /// `import_check`, `reference_comparison`: `spawn`, `timeout`, `bad_score_output`,
    /// `missing_file`, `syntax_error`, `no_reference`, `comparison_failed`. From the
    /// judges: `judge_unconfigured`, `judge_script`, `judge_request`, `judge_answer`,
    /// `no_verdict`, `invalid_verdict`. From the host: `internal`. (A criterion's params are
    /// checked as the task file is read: a bad one never reaches grading.)
    pub kind: String,
    /// A sentence naming the criterion's component or command.
    pub message: String,
}

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
    /// A token budget (`max_input_tokens`, `max_output_tokens`, `max_total_tokens`)
    /// stopped the run and the criteria failed.
    TokenBudgetExceeded,
    /// `max_usd` stopped the run and the criteria failed.
    CostBudgetExceeded,
    /// A timeout stopped the run (the partial turn is kept; criteria are evidence only).
    Timeout,
    /// The run could not be carried out or read: the reducer failed, the CLI reported a
    /// failure, or it ended without its final result (criteria are evidence only).
    Error,
    /// The task file says `skip: true`: recorded, nothing started (`run
    /// --include-skipped` runs it).
    Skipped,
}

impl TaskStatus {
    /// The status as `task.json` spells it: `SUCCESS`, `FAILURE`, `MAX_TURNS_EXHAUSTED`,
    /// `TIMEOUT`, `ERROR`, `SKIPPED`
    /// (every human-readable output uses the same spelling).
    pub fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Success => "SUCCESS",
            TaskStatus::Failure => "FAILURE",
            TaskStatus::MaxTurnsExhausted => "MAX_TURNS_EXHAUSTED",
            TaskStatus::TokenBudgetExceeded => "TOKEN_BUDGET_EXCEEDED",
            TaskStatus::CostBudgetExceeded => "COST_BUDGET_EXCEEDED",
            TaskStatus::Timeout => "TIMEOUT",
            TaskStatus::Error => "ERROR",
            TaskStatus::Skipped => "SKIPPED",
        }
    }

    /// The one-character icon of the terminal summary: `+` SUCCESS, `-` FAILURE,
    /// `T` TIMEOUT, `M` MAX_TURNS_EXHAUSTED, `!` ERROR, `s` SKIPPED.
    pub fn icon(self) -> char {
        match self {
            TaskStatus::Success => '+',
            TaskStatus::Failure => '-',
            TaskStatus::Timeout => 'T',
            TaskStatus::MaxTurnsExhausted => 'M',
            TaskStatus::TokenBudgetExceeded => '#',
            TaskStatus::CostBudgetExceeded => '$',
            TaskStatus::Error => '!',
            TaskStatus::Skipped => 's',
        }
    }
}

impl std::fmt::Display for TaskStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
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
    fn result_round_trips_as_json() {
        let one = CriterionResult {
            kind: "file_exists".into(),
            description: String::new(),
            weight: 1.0,
            pass_threshold: 0.9,
            score: 0.25,
            passed: false,
            details: String::new(),
            duration_ms: 0,
            error: Some(CriterionError {
                kind: "out_of_fuel".into(),
                message: "m".into(),
            }),
            judge: None,
            advisory: false,
        };
        let json = serde_json::to_value(&one).unwrap();
        assert_eq!(json["type"], "file_exists");
        assert_eq!(json["error"]["kind"], "out_of_fuel");
        let back: CriterionResult = serde_json::from_value(json).unwrap();
        assert_eq!(back, one);
    }
}
