//! [`StopReason`]: why the host ended a turn before the CLI did. The one stop type: the
//! collector returns it when a cap fires, the live loop decides it, the recording stores
//! it (`{"t":"stop","reason":…}`), replay reads it back, and `task.json` reports it.

use serde::{Deserialize, Serialize};

/// Why the host ended a turn before the CLI ended it. Serialized in snake_case
/// (`max_turns`, `turn_timeout`, ...), the same spelling in `task.json` and recordings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// `max_turns` fired: main-thread model call `max_turns + 1` began.
    MaxTurns,
    /// `max_tool_calls` fired: tool call `max_tool_calls + 1` started, or (against the
    /// scripted model) the reply carrying it was held, so it never ran.
    MaxToolCalls,
    /// `turn_timeout` passed.
    TurnTimeout,
    /// `task_timeout` passed.
    TaskTimeout,
    /// The host was interrupted: SIGINT (Ctrl-C), SIGTERM or SIGHUP (`crate::interrupt`).
    /// Recordings written before this name read `cancelled`, which still reads as this.
    #[serde(alias = "cancelled")]
    Interrupted,
    /// The CLI printed its final result but did not exit in time.
    ResultGrace,
    /// The CLI exited but a descendant held its pipes.
    LeakedPipes,
    /// The armed criteria's live verdicts settled the armed gate (`stop_early`): a clean
    /// stop; the turn record's `early_stop` says which trigger, on which event.
    EarlyStop,
    /// `max_input_tokens` was exceeded (the turn record's `budget` has the figures).
    MaxInputTokens,
    /// `max_output_tokens` was exceeded.
    MaxOutputTokens,
    /// `max_total_tokens` was exceeded.
    MaxTotalTokens,
    /// `max_usd` was exceeded.
    MaxUsd,
    /// Time-budget mode: a resumed session reached the deadline (a clean stop; a first
    /// session that reaches it is a `task_timeout`).
    TimeBudget,
}

impl StopReason {
    /// Every reason, in declaration order.
    pub const ALL: [StopReason; 13] = [
        StopReason::MaxTurns,
        StopReason::MaxToolCalls,
        StopReason::TurnTimeout,
        StopReason::TaskTimeout,
        StopReason::Interrupted,
        StopReason::ResultGrace,
        StopReason::LeakedPipes,
        StopReason::EarlyStop,
        StopReason::MaxInputTokens,
        StopReason::MaxOutputTokens,
        StopReason::MaxTotalTokens,
        StopReason::MaxUsd,
        StopReason::TimeBudget,
    ];

    /// The snake_case name used in `task.json` and recordings.
    pub fn as_str(self) -> &'static str {
        match self {
            StopReason::MaxTurns => "max_turns",
            StopReason::MaxToolCalls => "max_tool_calls",
            StopReason::TurnTimeout => "turn_timeout",
            StopReason::TaskTimeout => "task_timeout",
            StopReason::Interrupted => "interrupted",
            StopReason::ResultGrace => "result_grace",
            StopReason::LeakedPipes => "leaked_pipes",
            StopReason::EarlyStop => "early_stop",
            StopReason::MaxInputTokens => "max_input_tokens",
            StopReason::MaxOutputTokens => "max_output_tokens",
            StopReason::MaxTotalTokens => "max_total_tokens",
            StopReason::MaxUsd => "max_usd",
            StopReason::TimeBudget => "time_budget",
        }
    }

    /// Whether this stop makes the turn a timeout (a failure).
    pub(crate) fn is_timeout(self) -> bool {
        matches!(self, StopReason::TurnTimeout | StopReason::TaskTimeout)
    }
}

impl std::fmt::Display for StopReason {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_serialized_spelling_is_as_str() {
        for reason in StopReason::ALL {
            let json = serde_json::to_string(&reason).unwrap();
            assert_eq!(json, format!("\"{}\"", reason.as_str()));
            assert_eq!(serde_json::from_str::<StopReason>(&json).unwrap(), reason);
        }
        let timeouts: Vec<_> = StopReason::ALL
            .into_iter()
            .filter(|r| r.is_timeout())
            .collect();
        assert_eq!(timeouts, [StopReason::TurnTimeout, StopReason::TaskTimeout]);
        // The older spelling of an interrupt still reads.
        assert_eq!(
            serde_json::from_str::<StopReason>("\"cancelled\"").unwrap(),
            StopReason::Interrupted
        );
    }
}
