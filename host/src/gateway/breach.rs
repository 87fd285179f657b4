//! When the gateway's own count of the APIs' usage goes over a token budget: a pure
//! function of the recorded calls, so replay gives the live run's breach.

use super::call::{CallKind, ModelCall};
use crate::limits::budget::{self, Budgets};
use crate::results::{BudgetBreach, BudgetFigures};
use harness_kit::Usage;
use std::collections::BTreeSet;

/// The first budget of `budgets` that the gateway's count goes over: every model
/// call's API-reported usage (main and side; a cut answer's too, it was billed), added in
/// the order the answers ended, counted as the CLI's figures are
/// ([`budget::input_tokens`], over and not at). `figures: gateway`, `at_ms` the end of
/// the call that took it over, `event_index` its `seq`, `model_calls` the main-thread
/// turns begun by then. `max_usd` is checked only when the calls were priced with a price
/// table (some call has `cost_usd` or `unpriced`), on the sum of their `cost_usd` (an
/// unpriced call adds nothing).
pub(crate) fn budget_breach(calls: &[ModelCall], budgets: &Budgets) -> Option<BudgetBreach> {
    let priced = calls
        .iter()
        .any(|c| c.cost_usd.is_some() || c.unpriced.is_some());
    let b = match priced {
        true => *budgets,
        false => budgets.tokens_only(),
    };
    if !b.any() {
        return None;
    }
    let mut ended: Vec<&ModelCall> = calls
        .iter()
        .filter(|c| c.api.is_some() && c.kind != CallKind::Other && c.usage.is_some())
        .collect();
    ended.sort_by_key(|c| (c.end_us.unwrap_or(u64::MAX), c.seq));
    let mut total = Usage::default();
    let mut usd = 0.0;
    for c in ended {
        total = total.saturating_add(&c.usage.unwrap_or_default().to_usage());
        usd += c.cost_usd.unwrap_or(0.0);
        let input = budget::input_tokens(&b, &total);
        let usd = b.max_usd.map(|_| usd);
        if let Some((kind, actual, limit)) = budget::over(&b, input, total.output_tokens, usd) {
            let at_us = c.end_us.unwrap_or(c.us);
            let turns: BTreeSet<u32> = calls
                .iter()
                .filter(|m| m.kind == CallKind::Main && !m.held && m.us <= at_us)
                .filter(|m| !(m.stopped && m.first_byte_us.is_none()))
                .filter_map(|m| m.turn_counted())
                .collect();
            return Some(BudgetBreach {
                budget: kind,
                actual,
                limit,
                event_index: c.seq,
                at_ms: at_us / 1000,
                model_calls: turns.len() as u32,
                figures: Some(BudgetFigures::Gateway),
            });
        }
    }
    None
}
