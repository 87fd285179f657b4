//! What a held main request records: which call, how many tool calls were handed out
//! before it, and which limit held it.

/// Why the scripted model held a main request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HoldReason {
    /// The request asks for a call past [`ServerConfig::hold_from_turn`](super::ServerConfig::hold_from_turn) (`max_turns`).
    MaxTurns,
    /// The reply holds tool calls that would take those handed out past
    /// [`ServerConfig::hold_past_tool_calls`](super::ServerConfig::hold_past_tool_calls) (`max_tool_calls`).
    MaxToolCalls,
    /// A model call that arrived after the run's usage went over `max_input_tokens` (the
    /// host's model gateway counts it; the scripted model never holds for a budget).
    MaxInputTokens,
    /// As [`HoldReason::MaxInputTokens`], for `max_output_tokens`.
    MaxOutputTokens,
    /// As [`HoldReason::MaxInputTokens`], for `max_total_tokens`.
    MaxTotalTokens,
    /// As [`HoldReason::MaxInputTokens`], for `max_usd` (cost from a price table).
    MaxUsd,
}

/// A main request the scripted model held (not answered while it runs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hold {
    /// Completed assistant turns in the request: it asked for call `turn + 1`.
    pub turn: usize,
    /// Tool calls the server had handed out before this request, over every thread of
    /// the run (a `max_tool_calls` hold: the cap, or less when the reply straddles it).
    pub tool_calls_before: u32,
    /// Which limit held it.
    pub reason: HoldReason,
}

impl Hold {
    /// One line for logs: which call, and why it was held.
    pub fn describe(&self) -> String {
        match self.reason {
            HoldReason::MaxTurns => {
                format!("call {} is past the run's max_turns", self.turn + 1)
            }
            HoldReason::MaxToolCalls => format!(
                "call {}'s reply holds tool calls past the run's max_tool_calls \
                 ({} handed out before it)",
                self.turn + 1,
                self.tool_calls_before
            ),
            HoldReason::MaxInputTokens
            | HoldReason::MaxOutputTokens
            | HoldReason::MaxTotalTokens
            | HoldReason::MaxUsd => format!(
                "call {} arrived after the run went over its {:?} budget",
                self.turn + 1,
                self.reason
            ),
        }
    }
}
