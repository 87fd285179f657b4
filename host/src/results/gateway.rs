//! The model gateway's figures (`run --gateway`): its view of one turn
//! ([`GatewayTurn`], `task.json` → `turn.gateway`) and of one task in `run.json`
//! ([`GatewaySummary`]). `gateway::turn` fills them from the recorded calls.

use harness_kit::Usage;
use serde::{Deserialize, Serialize};

/// The gateway's view of one turn (`task.json` → `turn.gateway`). Counts are requests;
/// times are ms on the turn's clock.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GatewayTurn {
    /// Every request the CLI sent through the gateway.
    pub calls: u32,
    /// Main-thread model requests (retries and a held call included).
    pub main_calls: u32,
    /// Side requests (no tools offered; non-streaming Gemini `generateContent`).
    pub side_calls: u32,
    /// Distinct turn indices among the main-thread requests: the turn's `num_turns` when
    /// the gateway is on (a retried call counts once; a held call counts, as `max_turns + 1`;
    /// when the CLI's own `max_turns` cap stopped it before it sent call N+1, that call is
    /// counted too, as DESIGN counts it).
    pub num_turns: u32,
    /// `num_turns` as the reducer counted it from the CLI's stream (the cross-check; a
    /// disagreement is a `gateway_turns_disagree` diagnostic). On a held run (`held`) it
    /// includes the held call, which the host's stop adds to the stream's count, so it is
    /// no cross-check there and no diagnostic fires.
    pub reducer_num_turns: u32,
    /// A model call was held at the gateway (never forwarded): a main call past
    /// `max_turns`, or a call for a token budget (that call's `over_budget` says which).
    pub held: bool,
    /// Requests answered with an error status (≥ 400, the gateway's own 502/503 included)
    /// or whose 2xx answer failed mid-stream (a call's `failed`).
    pub error_responses: u32,
    /// Time to first token of each main-thread request that got an answer body, in order
    /// (ms: first response byte − request arrival).
    pub ttft_ms: Vec<u64>,
    /// Token usage summed over every model request whose answer reported it (main and
    /// side), as the APIs reported it (`gateway::ApiUsage`).
    pub usage: Usage,
    /// Successful (2xx) model requests whose answer reported no usage: when any, `usage`
    /// above is partial and the turn's `usage` stays the CLI's.
    pub usage_unreported: u32,
    /// The CLI's own usage and its source, kept beside the gateway's when the turn's
    /// `usage` is the gateway's (`usage_source: gateway`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cli_usage: Option<Usage>,
    /// Where `cli_usage` came from (`cli_result`, `messages`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cli_usage_source: Option<String>,
    /// With `--price-table`: USD over the calls priced (each `model_call` record's `cost_usd`); a
    /// lower bound when `cost_partial`; absent without a table, or when every billed call
    /// went unpriced. The turn's `cost_usd` stays the CLI's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// `price_table` when the calls were priced with `--price-table` (named in
    /// `price_table`), `not_priced` without one: the gateway never estimates a cost.
    #[serde(default = "not_priced")]
    pub cost_source: String,
    /// The price table's file as given to `--price-table`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub price_table: Option<String>,
    /// Billed calls that could not be priced (each record's `unpriced` says why: a model
    /// not in the table, a missing cache price, usage unknown); when any, `cost_usd` is
    /// partial.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unpriced_calls: u32,
    /// `cost_usd` leaves out `unpriced_calls` calls (a lower bound).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cost_partial: bool,
}

fn not_priced() -> String {
    "not_priced".into()
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// The gateway's figures of one task in `run.json` (`rows[].gateway`) and `report.html`:
/// requests seen, main and side, the median time to first response byte of the answered
/// main calls, and where the turn's usage came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GatewaySummary {
    /// Every request through the gateway ([`GatewayTurn::calls`]).
    pub calls: u32,
    /// Main-thread model requests ([`GatewayTurn::main_calls`]).
    pub main_calls: u32,
    /// Side requests ([`GatewayTurn::side_calls`]).
    pub side_calls: u32,
    /// The median of [`GatewayTurn::ttft_ms`] (ms; the lower middle of an even count);
    /// absent when no main call was answered.
    pub ttft_median_ms: Option<u64>,
    /// The turn's `usage_source`: `gateway` when the APIs' usage was taken, else the
    /// CLI's source.
    pub usage_source: String,
}

impl GatewayTurn {
    /// This turn's [`GatewaySummary`], `usage_source` being the turn record's.
    pub fn summary(&self, usage_source: &str) -> GatewaySummary {
        let mut ttft = self.ttft_ms.clone();
        ttft.sort_unstable();
        GatewaySummary {
            calls: self.calls,
            main_calls: self.main_calls,
            side_calls: self.side_calls,
            ttft_median_ms: (!ttft.is_empty()).then(|| ttft[(ttft.len() - 1) / 2]),
            usage_source: usage_source.to_string(),
        }
    }
}
