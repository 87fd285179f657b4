//! One model call as the gateway saw it: the live state ([`CallState`], stamped on the
//! gateway's clock) and the record it becomes ([`ModelCall`], stamped from the turn's
//! start), with the usage the API reported ([`ApiUsage`]; [`super::scan`] reads it from
//! the response as it streams past).

use coder_eval_scripted_model::Api;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::time::Instant;

/// The most of a response body a call record keeps with `--gateway-bodies` (bytes; the
/// rest is counted in `response_bytes`, not kept).
pub(crate) const BODY_KEEP_BYTES: usize = 1 << 20;

/// What a request was, by the rule in [`super`]'s docs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CallKind {
    /// A main-thread model call (it offered tools).
    Main,
    /// A side request (no tools; non-streaming Gemini `generateContent`).
    Side,
    /// Not a model call (token counting, model listing, anything else).
    Other,
}

/// Token counts as the API itself reported them (`null` = not reported). Vendor fields:
/// Anthropic `input_tokens` (without cache), `output_tokens`, `cache_read_input_tokens`,
/// `cache_creation_input_tokens`; OpenAI Responses `input_tokens` (with cache),
/// `output_tokens`, `input_tokens_details.cached_tokens`; Chat Completions
/// `prompt_tokens`, `completion_tokens`, `prompt_tokens_details.cached_tokens`; Gemini
/// `promptTokenCount`, `candidatesTokenCount` + `thoughtsTokenCount`,
/// `cachedContentTokenCount`. A streamed answer's last report of a field wins (Anthropic's
/// `message_delta` output count is cumulative).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApiUsage {
    /// Input tokens, as the vendor counts them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_tokens: Option<u64>,
    /// Output tokens (Gemini: candidates plus thoughts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<u64>,
    /// Input tokens read from the prompt cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_read_tokens: Option<u64>,
    /// Input tokens written to the prompt cache (Anthropic).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_write_tokens: Option<u64>,
}

impl ApiUsage {
    pub(super) fn is_empty(&self) -> bool {
        *self == ApiUsage::default()
    }

    /// As the host's usage shape: a count not reported adds 0, except cache writes,
    /// which stay `None` (absent is not zero).
    pub(crate) fn to_usage(self) -> harness_kit::Usage {
        harness_kit::Usage {
            input_tokens: self.input_tokens.unwrap_or(0),
            output_tokens: self.output_tokens.unwrap_or(0),
            cache_read_tokens: self.cache_read_tokens.unwrap_or(0),
            cache_write_tokens: self.cache_write_tokens,
        }
    }

    /// Reads the usage object of one JSON value (an SSE event's data or a whole body)
    /// into `self`; returns whether it held one.
    pub(crate) fn merge_from(&mut self, v: &Value) -> bool {
        let obj = [
            v.get("usage"),
            v.get("message").and_then(|m| m.get("usage")),
            v.get("response").and_then(|r| r.get("usage")),
            v.get("usageMetadata"),
        ]
        .into_iter()
        .flatten()
        .find(|u| u.is_object());
        let Some(u) = obj else { return false };
        let n = |path: &[&str]| {
            let mut cur = u;
            for key in path {
                cur = cur.get(key)?;
            }
            cur.as_u64()
        };
        let set = |slot: &mut Option<u64>, value: Option<u64>| {
            if value.is_some() {
                *slot = value;
            }
        };
        set(
            &mut self.input_tokens,
            n(&["input_tokens"])
                .or_else(|| n(&["prompt_tokens"]))
                .or_else(|| n(&["promptTokenCount"])),
        );
        let gemini_out = match (n(&["candidatesTokenCount"]), n(&["thoughtsTokenCount"])) {
            (None, None) => None,
            (a, b) => Some(a.unwrap_or(0) + b.unwrap_or(0)),
        };
        set(
            &mut self.output_tokens,
            n(&["output_tokens"])
                .or_else(|| n(&["completion_tokens"]))
                .or(gemini_out),
        );
        set(
            &mut self.cache_read_tokens,
            n(&["cache_read_input_tokens"])
                .or_else(|| n(&["input_tokens_details", "cached_tokens"]))
                .or_else(|| n(&["prompt_tokens_details", "cached_tokens"]))
                .or_else(|| n(&["cachedContentTokenCount"])),
        );
        set(
            &mut self.cache_write_tokens,
            n(&["cache_creation_input_tokens"]),
        );
        true
    }
}

/// One request through the gateway, as a `model_call` record of the recording. Stamps
/// are µs from the turn's start, on the host's one monotonic clock.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelCall {
    /// 1-based arrival order.
    pub seq: u64,
    /// µs: the request arrived at the gateway.
    pub us: u64,
    /// µs: the first byte of the response body arrived from upstream (time to first
    /// token = `first_byte_us - us`); `null` when none did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_byte_us: Option<u64>,
    /// µs: the response ended (or failed, or the CLI went away); `null` for a call still
    /// open (held, stalled) when the gateway closed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_us: Option<u64>,
    /// HTTP method.
    pub method: String,
    /// Path as requested (the query, which may hold a key, is not kept).
    pub path: String,
    /// The model-call API, for a model call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api: Option<Api>,
    /// Main thread, side request, or other.
    pub kind: CallKind,
    /// A model call's completed assistant turns (it asks for call `turn + 1`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn: Option<u32>,
    /// A main call's counted turn when it is larger than `turn`: the main calls answered
    /// before it arrived (its history shrank: compaction, trimming; see the module doc).
    /// `num_turns` and the `max_turns` hold use it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counted_turn: Option<u32>,
    /// An SSE answer was asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<bool>,
    /// The model asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The status the CLI got (the upstream's, or the gateway's own 502/503); `null` when
    /// none was sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// Held: never forwarded. Past `max_turns`, or, with `over_budget`, a model call that
    /// arrived once the gateway's count had gone over a budget.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub held: bool,
    /// With `held`: the budget (`max_input_tokens`, `max_output_tokens`,
    /// `max_total_tokens`) the gateway's figures had gone over when this call arrived.
    /// Such a call is no turn of the agent's (unlike a `max_turns` hold's call N+1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub over_budget: Option<crate::results::BudgetKind>,
    /// Arrived after the host stopped the run (early stop, cap, budget, deadline): never
    /// forwarded, answered `503` at shutdown. Not a turn of the agent's. Also set on a
    /// call under way at the stop: one awaiting its answer (dropped upstream, then as
    /// above) or one whose answer was streaming (cut: `response_bytes` were forwarded).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub stopped: bool,
    /// With `stopped`: the call was under way at the stop and cut, so it *was* forwarded
    /// (the upstream saw it): its upstream request was dropped before the answer began
    /// (then answered `503` at close), or its streaming answer was cut (`response_bytes`
    /// reached the CLI). `stopped` without `cut`: never forwarded.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cut: bool,
    /// Refused by the gateway itself, never forwarded: a path not in canonical form, a
    /// model call whose body it cannot read (an encoding it does not inflate, not JSON,
    /// over the size cap). `error` says why; the status is the gateway's own 4xx.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub refused: bool,
    /// The answer failed inside its 2xx body (Anthropic `event: error`, Responses
    /// `response.failed`, a Chat or Gemini error chunk): not an answered turn, so the
    /// CLI's retry keeps its turn; counted in `error_responses`, and `error` says what was
    /// seen. Its reported usage still counts toward the budgets (the API may bill it).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub failed: bool,
    /// What went wrong at the gateway (upstream unreachable, stream cut, a refusal, an
    /// answer whose usage could not be read), when anything.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The usage the API reported in the response; `null` when it reported none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<ApiUsage>,
    /// With `--price-table`: this call's cost, USD, its API-reported `usage` times its
    /// model's prices ([`super::PriceTable::price`]); absent when not priced (see
    /// `unpriced`), or without a table.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// With `--price-table`: why a billed call has no `cost_usd` (its model is not in the
    /// table, a cache price is missing, its answer reported no usage). Absent for a call
    /// that was priced, and for one never billed (held, refused, stopped on arrival, an
    /// error answer without usage).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unpriced: Option<String>,
    /// Response body bytes passed to the CLI.
    pub response_bytes: u64,
    /// The request body (JSON, secrets redacted), with `--gateway-bodies` only; over
    /// [`BODY_KEEP_BYTES`] of JSON text, a string of its first [`BODY_KEEP_BYTES`] and a
    /// note of its length.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_body: Option<Value>,
    /// The response body (lossy UTF-8, at most [`BODY_KEEP_BYTES`], secrets redacted),
    /// with `--gateway-bodies` only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_body: Option<String>,
}

impl ModelCall {
    /// Whether the request went upstream: not held, not refused by the gateway, and not
    /// refused by the host's stop on arrival (a call cut under way was forwarded).
    pub fn forwarded(&self) -> bool {
        !self.held && !self.refused && (!self.stopped || self.cut)
    }

    /// The turn this call counts as (`counted_turn`, else `turn`).
    pub(crate) fn turn_counted(&self) -> Option<u32> {
        self.counted_turn.or(self.turn)
    }

    /// Prices this call with `table` (sets `cost_usd` or `unpriced`): a call whose answer
    /// reported usage, or a 2xx model call whose usage is unknown (billed, not priced);
    /// a call never billed (held, refused, not forwarded, an error answer without usage)
    /// or a request that is no model call is left as it is.
    pub(crate) fn price_with(&mut self, table: &super::PriceTable) {
        if self.kind == CallKind::Other || !self.forwarded() {
            return;
        }
        let billed_unknown = self.usage.is_none()
            && !self.held
            && self.status.is_some_and(|s| (200..300).contains(&s));
        let usage = match (self.usage, billed_unknown) {
            (Some(u), _) => u,
            (None, true) => ApiUsage::default(),
            (None, false) => return,
        };
        match table.price(self.api, self.model.as_deref(), &usage) {
            super::Priced::Usd(usd) => self.cost_usd = Some(usd),
            super::Priced::Unpriced(why) => self.unpriced = Some(why),
        }
    }

    /// Time to first token, µs.
    pub(crate) fn ttft_us(&self) -> Option<u64> {
        self.first_byte_us.map(|f| f.saturating_sub(self.us))
    }
}

/// A call while it runs, stamped on the gateway's clock.
#[derive(Debug, Clone)]
pub(crate) struct CallState {
    pub seq: u64,
    pub started: Instant,
    pub first_byte: Option<Instant>,
    pub ended: Option<Instant>,
    pub method: String,
    pub path: String,
    pub api: Option<Api>,
    pub kind: CallKind,
    pub turn: Option<usize>,
    pub counted_turn: Option<usize>,
    /// The counted turn this call holds in the gateway's open turns while it is forwarded
    /// (see `Shared::open_turns`); taken when the call ends.
    pub open_turn: Option<usize>,
    pub stream: Option<bool>,
    pub model: Option<String>,
    pub status: Option<u16>,
    pub held: bool,
    pub over_budget: Option<crate::results::BudgetKind>,
    pub stopped: bool,
    pub cut: bool,
    pub refused: bool,
    pub failed: bool,
    pub error: Option<String>,
    pub usage: ApiUsage,
    pub response_bytes: u64,
    pub request_body: Option<Value>,
    pub response_body: Option<Vec<u8>>,
    /// Secrets to redact from kept bodies.
    pub secrets: Vec<String>,
}

impl CallState {
    pub(crate) fn new(seq: u64, method: &str, path: &str) -> CallState {
        CallState {
            seq,
            started: Instant::now(),
            first_byte: None,
            ended: None,
            method: method.to_string(),
            path: path.to_string(),
            api: None,
            kind: CallKind::Other,
            turn: None,
            counted_turn: None,
            open_turn: None,
            stream: None,
            model: None,
            status: None,
            held: false,
            over_budget: None,
            stopped: false,
            cut: false,
            refused: false,
            failed: false,
            error: None,
            usage: ApiUsage::default(),
            response_bytes: 0,
            request_body: None,
            response_body: None,
            secrets: Vec::new(),
        }
    }

    /// The record, stamps in µs from `t0` (a moment before `t0` is stamped 0).
    pub(crate) fn to_record(&self, t0: Instant) -> ModelCall {
        let us = |at: Instant| at.saturating_duration_since(t0).as_micros() as u64;
        let response_body = self
            .response_body
            .as_ref()
            .map(|b| redact(&String::from_utf8_lossy(b), &self.secrets));
        let request_body = self.request_body.as_ref().map(|v| {
            let text = redact(&v.to_string(), &self.secrets);
            serde_json::from_str(&text).unwrap_or(Value::String(text))
        });
        ModelCall {
            seq: self.seq,
            us: us(self.started),
            first_byte_us: self.first_byte.map(us),
            end_us: self.ended.map(us),
            method: self.method.clone(),
            path: self.path.clone(),
            api: self.api,
            kind: self.kind,
            turn: self.turn.map(|t| t as u32),
            counted_turn: self.counted_turn.map(|t| t as u32),
            stream: self.stream,
            model: self.model.clone(),
            status: self.status,
            held: self.held,
            over_budget: self.over_budget,
            stopped: self.stopped,
            cut: self.cut,
            refused: self.refused,
            failed: self.failed,
            error: self.error.clone(),
            usage: (!self.usage.is_empty()).then_some(self.usage),
            cost_usd: None,
            unpriced: None,
            response_bytes: self.response_bytes,
            request_body,
            response_body,
        }
    }
}

/// `text` with every secret value replaced by `[redacted]`.
pub(crate) fn redact(text: &str, secrets: &[String]) -> String {
    let mut out = text.to_string();
    for secret in secrets.iter().filter(|s| s.len() >= 4) {
        out = out.replace(secret.as_str(), "[redacted]");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redaction_replaces_every_copy() {
        let secrets = vec!["sk-live-123456".to_string()];
        assert_eq!(
            redact(
                "{\"k\":\"sk-live-123456\",\"j\":\"sk-live-123456\"}",
                &secrets
            ),
            "{\"k\":\"[redacted]\",\"j\":\"[redacted]\"}"
        );
    }
}
