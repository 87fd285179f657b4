//! The gateway's own answers, for a request it does not forward or cannot: a refusal
//! (`4xx`), a call left unanswered until the gateway closes (held past `max_turns` or a
//! budget, or refused by the host's stop: `503`), and the vendor-shaped error bodies.

use super::passing::Guard;
use crate::limits::budget::BudgetKind;
use axum::body::Body;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use coder_eval_scripted_model::Api;
use serde_json::{Value, json};
use std::time::Instant;

/// Answers a request the gateway refuses (never forwarded) with `status` and a
/// vendor-shaped error carrying `message`, and marks the record.
pub(super) fn refuse(mut guard: Guard, api: Option<Api>, status: u16, message: String) -> Response {
    let call = &mut guard.state;
    call.refused = true;
    call.status = Some(status);
    call.error = Some(message.clone());
    call.ended = Some(Instant::now());
    json_response(status, &error_body(api, status, &message))
}

/// Why a model call is left unanswered until the gateway closes.
pub(super) enum Unanswered {
    /// Held past `max_turns`: asks for call `turn + 1`.
    Held(usize),
    /// Held because the gateway's count had gone over this budget.
    OverBudget(BudgetKind),
    /// The host stopped the run before the call arrived: never forwarded.
    Stopped,
    /// The host stopped the run while the call was forwarded and its answer had not
    /// begun: the upstream request was dropped.
    StoppedUnderWay,
}

/// The one path of a call that is never answered while the gateway runs (held past
/// `max_turns`, or refused by the host's stop): marks the record, waits for the gateway
/// to close, then answers `503` with a vendor-shaped error saying why.
pub(super) async fn unanswered_until_close(
    mut guard: Guard,
    api: Option<Api>,
    why: Unanswered,
) -> Response {
    let message = match why {
        Unanswered::Held(turn) => {
            guard.state.held = true;
            format!(
                "coder-eval gateway: call {} was held (past max_turns) and never forwarded",
                turn + 1
            )
        }
        Unanswered::OverBudget(kind) => {
            guard.state.held = true;
            guard.state.over_budget = Some(kind);
            format!(
                "coder-eval gateway: the run went over {} (the APIs' own usage, counted at \
                 the gateway): this call was held and never forwarded",
                kind.as_str()
            )
        }
        Unanswered::Stopped => {
            guard.state.stopped = true;
            format!(
                "coder-eval gateway: {}",
                coder_eval_scripted_model::STOPPED_ERROR
            )
        }
        Unanswered::StoppedUnderWay => {
            guard.state.stopped = true;
            guard.state.cut = true;
            "coder-eval gateway: the host stopped the run (early stop, cap, budget or \
             deadline) before the upstream answered: the request was dropped upstream, not \
             answered"
                .to_string()
        }
    };
    if !matches!(why, Unanswered::Held(_) | Unanswered::OverBudget(_)) {
        guard.state.error = Some(message.clone());
    }
    let _ = guard
        .shared
        .closing
        .subscribe()
        .wait_for(|closing| *closing)
        .await;
    let call = &mut guard.state;
    call.status = Some(503);
    call.ended = Some(Instant::now());
    json_response(503, &error_body(api, 503, &message))
}

/// The hold a budget makes (the turn loop stops with that budget's reason).
pub(super) fn hold_reason(kind: BudgetKind) -> coder_eval_scripted_model::HoldReason {
    use coder_eval_scripted_model::HoldReason;
    match kind {
        BudgetKind::MaxInputTokens => HoldReason::MaxInputTokens,
        BudgetKind::MaxOutputTokens => HoldReason::MaxOutputTokens,
        BudgetKind::MaxTotalTokens => HoldReason::MaxTotalTokens,
        BudgetKind::MaxUsd => HoldReason::MaxUsd,
    }
}

/// A vendor-shaped error body, so the CLI reports the gateway's message as it reports
/// its vendor's.
pub(super) fn error_body(api: Option<Api>, status: u16, message: &str) -> Value {
    match api {
        Some(Api::Anthropic) => json!({"type": "error",
            "error": {"type": if status == 503 { "overloaded_error" } else { "api_error" },
                      "message": message}}),
        Some(Api::Gemini) => json!({"error": {"code": status, "message": message,
            "status": if status == 503 { "UNAVAILABLE" } else { "INTERNAL" }}}),
        _ => json!({"error": {"message": message, "type": "server_error", "code": null}}),
    }
}

pub(super) fn json_response(status: u16, body: &Value) -> Response {
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_GATEWAY);
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        Body::from(body.to_string()),
    )
        .into_response()
}
