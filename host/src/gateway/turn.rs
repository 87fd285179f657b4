//! What the gateway's calls make of a turn record: `num_turns` from the main-thread
//! calls, the usage the APIs reported, and the reducer's figures kept as a cross-check.
//! A pure function of the turn record and the recorded calls, so replay (which reads the
//! calls back from the recording's `model_call` records) gives the live run's record.

use super::breach::budget_breach;
use super::call::{CallKind, ModelCall};
use crate::limits::budget::Budgets;
pub(crate) use crate::results::GatewayTurn;
use crate::results::{DiagnosticRecord, TurnRecord, TurnStatus};
use harness_kit::Usage;
use std::collections::BTreeSet;

/// Applies the gateway's calls to `record`: sets `record.gateway`; `num_turns` becomes
/// the gateway's count (the reducer's is kept in `gateway.reducer_num_turns`, and a
/// difference is a diagnostic); when every successful model request reported its usage,
/// `usage` becomes the APIs' total with `usage_source: gateway` (the CLI's kept beside).
/// Each upstream failure the gateway answered itself (502) is a `gateway_upstream_error`
/// diagnostic (one per distinct message). `cost_usd` stays the CLI's: the gateway prices
/// tokens only with a price table, in `gateway.cost_usd`. With token `budgets`, the gateway's breach ([`budget_breach`]) becomes
/// the record's `budget` (unless the CLI's stream went over one earlier) and a turn that
/// ended on its own or by the gateway's budget hold is `token_budget_exceeded`.
/// Without a price table: [`apply_priced`] with none.
#[cfg(test)]
pub(crate) fn apply(record: &mut TurnRecord, calls: &[ModelCall], budgets: &Budgets) {
    apply_priced(record, calls, budgets, None);
}

/// As [`apply`], the calls having been priced with the price table `price_table` (its
/// file as given; `None`: no table): `gateway.cost_usd` is the sum of the calls'
/// `cost_usd`, `cost_source: price_table`, `cost_partial` when some billed call went
/// unpriced. A `max_usd` breach on the priced cost is `cost_budget_exceeded`.
pub(crate) fn apply_priced(
    record: &mut TurnRecord,
    calls: &[ModelCall],
    budgets: &Budgets,
    price_table: Option<&str>,
) {
    // A call the host's stop kept from being answered (never forwarded, or dropped before
    // its answer began) is no turn of the agent's; one whose answer was streaming when the
    // stop cut it is (the model was called and its answer began). Nor is a call held for a
    // budget.
    let main: Vec<&ModelCall> = calls
        .iter()
        .filter(|c| {
            c.kind == CallKind::Main
                && !(c.stopped && c.first_byte_us.is_none())
                && c.over_budget.is_none()
        })
        .collect();
    let turns: BTreeSet<u32> = main.iter().filter_map(|c| c.turn_counted()).collect();
    // Held for `max_turns` (a main call) or for a budget (`over_budget`).
    let held = calls.iter().any(|c| c.held);
    // A CLI's own cap stops it before it sends call N+1, which DESIGN counts all the same
    // (`num_turns = max_turns + 1`): the gateway saw N calls and no held one.
    let native_cap = record.max_turns_exhausted && !main.iter().any(|c| c.held);
    let num_turns = turns.len() as u32 + u32::from(native_cap);
    let mut usage = Usage::default();
    let mut usage_unreported = 0;
    for c in calls.iter().filter(|c| c.kind != CallKind::Other) {
        match c.usage {
            Some(u) => {
                usage.input_tokens += u.input_tokens.unwrap_or(0);
                usage.output_tokens += u.output_tokens.unwrap_or(0);
                usage.cache_read_tokens += u.cache_read_tokens.unwrap_or(0);
                if let Some(n) = u.cache_write_tokens {
                    *usage.cache_write_tokens.get_or_insert(0) += n;
                }
            }
            None if c.status.is_some_and(|s| (200..300).contains(&s)) && !c.held => {
                usage_unreported += 1;
            }
            None => {}
        }
    }
    if usage_unreported > 0 && budgets.tokens_only().any() {
        record.diagnostics.push(DiagnosticRecord {
            line: 0,
            at_ms: 0,
            kind: "gateway_budget_unchecked".into(),
            message: format!(
                "a token budget is set, but {usage_unreported} answered model call(s) \
                 reported no usage (or usage the gateway could not read): their tokens \
                 could not be counted against it (gateway.usage_unreported)"
            ),
            raw: String::new(),
        });
    }
    let reducer_num_turns = record.num_turns;
    // On a held run the host's stop added the held call to the stream's count: no
    // cross-check is left to make.
    if reducer_num_turns != num_turns && !held {
        record.diagnostics.push(DiagnosticRecord {
            line: 0,
            at_ms: 0,
            kind: "gateway_turns_disagree".into(),
            message: format!(
                "the gateway counted {num_turns} turn(s) (distinct counted turns of {} \
                 main-thread model call(s)), the CLI's stream shows {reducer_num_turns}: \
                 num_turns is the gateway's, the stream's count is in \
                 gateway.reducer_num_turns",
                main.len()
            ),
            raw: String::new(),
        });
    }
    // One diagnostic per distinct message: upstream failures the gateway answered (502),
    // requests it refused (never forwarded), answers that failed mid-stream, and answers whose usage it could not read.
    let mut seen = BTreeSet::new();
    for c in calls {
        let kind = if c.status == Some(502) {
            "gateway_upstream_error"
        } else if c.refused {
            "gateway_refused"
        } else if c.failed {
            "gateway_answer_failed"
        } else if c.kind != CallKind::Other
            && c.usage.is_none()
            && c.status.is_some_and(|s| (200..300).contains(&s))
            && c.error
                .as_deref()
                .is_some_and(|e| e.contains("usage is unknown"))
        {
            "gateway_usage_unknown"
        } else {
            continue;
        };
        if let Some(message) = &c.error
            && seen.insert(message.clone())
        {
            record.diagnostics.push(DiagnosticRecord {
                line: 0,
                at_ms: c.us / 1000,
                kind: kind.into(),
                message: message.clone(),
                raw: String::new(),
            });
        }
    }
    record.num_turns = num_turns;
    // A stream that names no model (Codex, OpenCode): the requests do.
    if record.model.is_none() {
        record.model = main.iter().find_map(|c| c.model.clone());
    }
    if let Some(breach) = budget_breach(calls, budgets)
        && record.budget.is_none_or(|b| b.at_ms > breach.at_ms)
    {
        record.budget = Some(breach);
        if matches!(
            record.final_status,
            TurnStatus::Completed | TurnStatus::Incomplete | TurnStatus::CliError
        ) {
            record.final_status = if breach.budget.is_tokens() {
                TurnStatus::TokenBudgetExceeded
            } else {
                TurnStatus::CostBudgetExceeded
            };
        }
    }
    let has_model_calls = calls.iter().any(|c| {
        c.kind != CallKind::Other && !c.held && c.status.is_some_and(|s| (200..300).contains(&s))
    });
    let (cli_usage, cli_usage_source) = if usage_unreported == 0 && has_model_calls {
        let kept = (
            record.usage,
            std::mem::replace(&mut record.usage_source, "gateway".into()),
        );
        record.usage = Some(usage);
        (kept.0, Some(kept.1))
    } else {
        (None, None)
    };
    let priced: Vec<f64> = calls.iter().filter_map(|c| c.cost_usd).collect();
    let unpriced_calls = calls.iter().filter(|c| c.unpriced.is_some()).count() as u32;
    let cost_usd = match price_table {
        // Absent is not zero: only a sum of priced calls, or no billed call at all.
        Some(_) if !priced.is_empty() || unpriced_calls == 0 => {
            Some((priced.iter().sum::<f64>() * 1e10).round() / 1e10)
        }
        _ => None,
    };
    record.gateway = Some(GatewayTurn {
        calls: calls.len() as u32,
        main_calls: main.len() as u32,
        side_calls: calls.iter().filter(|c| c.kind == CallKind::Side).count() as u32,
        num_turns,
        reducer_num_turns,
        held,
        error_responses: calls
            .iter()
            .filter(|c| c.failed || c.status.is_some_and(|s| s >= 400))
            .count() as u32,
        ttft_ms: main
            .iter()
            .filter_map(|c| c.ttft_us())
            .map(|us| us / 1000)
            .collect(),
        usage,
        usage_unreported,
        cli_usage,
        cli_usage_source,
        cost_usd,
        cost_source: match price_table {
            Some(_) => "price_table".into(),
            None => "not_priced".into(),
        },
        price_table: price_table.map(str::to_string),
        unpriced_calls: if price_table.is_some() {
            unpriced_calls
        } else {
            0
        },
        cost_partial: price_table.is_some() && unpriced_calls > 0,
    });
}

#[cfg(test)]
mod tests;
