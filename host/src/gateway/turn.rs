//! What the gateway's calls make of a turn record: `num_turns` from the main-thread
//! calls, the usage the APIs reported, and the reducer's figures kept as a cross-check.
//! A pure function of the turn record and the recorded calls, so replay (which reads the
//! calls back from the recording's `model_call` records) gives the live run's record.

use super::call::{CallKind, ModelCall};
use crate::limits::budget::{self, Budgets};
use crate::results::{BudgetBreach, BudgetFigures, DiagnosticRecord, TurnRecord, TurnStatus};
use harness_kit::Usage;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

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
    /// side), as the APIs reported it ([`super::ApiUsage`]).
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

/// Applies the gateway's calls to `record`: sets `record.gateway`; `num_turns` becomes
/// the gateway's count (the reducer's is kept in `gateway.reducer_num_turns`, and a
/// difference is a diagnostic); when every successful model request reported its usage,
/// `usage` becomes the APIs' total with `usage_source: gateway` (the CLI's kept beside).
/// Each upstream failure the gateway answered itself (502) is a `gateway_upstream_error`
/// diagnostic (one per distinct message). `cost_usd` stays the CLI's: the gateway never
/// prices tokens. With token `budgets`, the gateway's breach ([`budget_breach`]) becomes
/// the record's `budget` (unless the CLI's stream went over one earlier) and a turn that
/// ended on its own or by the gateway's budget hold is `token_budget_exceeded`.
pub fn apply(record: &mut TurnRecord, calls: &[ModelCall], budgets: &Budgets) {
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
    });
}

/// The first token budget of `budgets` that the gateway's count goes over: every model
/// call's API-reported usage (main and side; a cut answer's too, it was billed), added in
/// the order the answers ended, counted as the CLI's figures are
/// ([`budget::input_tokens`], over and not at). `figures: gateway`, `at_ms` the end of
/// the call that took it over, `event_index` its `seq`, `model_calls` the main-thread
/// turns begun by then. `max_usd` is not checked (the gateway prices nothing).
pub fn budget_breach(calls: &[ModelCall], budgets: &Budgets) -> Option<BudgetBreach> {
    let b = budgets.tokens_only();
    if !b.any() {
        return None;
    }
    let mut ended: Vec<&ModelCall> = calls
        .iter()
        .filter(|c| c.api.is_some() && c.kind != CallKind::Other && c.usage.is_some())
        .collect();
    ended.sort_by_key(|c| (c.end_us.unwrap_or(u64::MAX), c.seq));
    let mut total = Usage::default();
    for c in ended {
        total = total.saturating_add(&c.usage.unwrap_or_default().to_usage());
        let input = budget::input_tokens(&b, &total);
        if let Some((kind, actual, limit)) = budget::over(&b, input, total.output_tokens, None) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gateway::ApiUsage;
    use crate::results::BudgetKind;

    fn call(seq: u64, kind: CallKind, turn: u32, status: Option<u16>) -> ModelCall {
        ModelCall {
            seq,
            us: seq * 1000,
            first_byte_us: status.map(|_| seq * 1000 + 250),
            end_us: status.map(|_| seq * 1000 + 900),
            method: "POST".into(),
            path: "/v1/messages".into(),
            api: Some(coder_eval_scripted_model::Api::Anthropic),
            kind,
            turn: Some(turn),
            counted_turn: None,
            stream: Some(true),
            model: Some("m".into()),
            status,
            held: false,
            over_budget: None,
            stopped: false,
            cut: false,
            refused: false,
            failed: false,
            error: None,
            usage: status.filter(|s| *s == 200).map(|_| ApiUsage {
                input_tokens: Some(10),
                output_tokens: Some(2),
                cache_read_tokens: None,
                cache_write_tokens: Some(1),
            }),
            response_bytes: 100,
            request_body: None,
            response_body: None,
        }
    }

    fn record(num_turns: u32) -> TurnRecord {
        let (mut record, _) = crate::turn::collect::Collector::new(Default::default())
            .finish(crate::turn::finish::TurnEnd::default());
        record.num_turns = num_turns;
        record.usage_source = "cli_result".into();
        record
    }

    #[test]
    fn retries_count_once_side_requests_not_at_all_and_usage_is_the_apis() {
        let calls = [
            call(1, CallKind::Main, 0, Some(429)),
            call(2, CallKind::Main, 0, Some(200)),
            call(3, CallKind::Side, 0, Some(200)),
            call(4, CallKind::Main, 1, Some(200)),
        ];
        let mut r = record(2);
        apply(&mut r, &calls, &Budgets::default());
        let g = r.gateway.as_ref().unwrap();
        assert_eq!((r.num_turns, g.main_calls, g.side_calls), (2, 3, 1));
        assert_eq!(g.error_responses, 1);
        assert_eq!(g.ttft_ms, [0, 0, 0]);
        assert!(r.diagnostics.is_empty());
        assert_eq!(r.usage_source, "gateway");
        assert_eq!(
            r.usage.map(|u| (u.input_tokens, u.cache_write_tokens)),
            Some((30, Some(3)))
        );
        assert_eq!(g.cli_usage_source.as_deref(), Some("cli_result"));
    }

    #[test]
    fn the_summary_has_the_counts_and_the_median_ttft() {
        let mut r = record(2);
        let mut calls = vec![
            call(1, CallKind::Main, 0, Some(200)),
            call(2, CallKind::Side, 0, Some(200)),
            call(3, CallKind::Main, 1, Some(200)),
            call(4, CallKind::Main, 2, Some(200)),
        ];
        for (c, ttft) in calls.iter_mut().zip([900_000, 0, 100_000, 300_000]) {
            c.first_byte_us = Some(c.us + ttft);
        }
        apply(&mut r, &calls, &crate::limits::budget::Budgets::default());
        let s = r.gateway.as_ref().unwrap().summary(&r.usage_source);
        assert_eq!((s.calls, s.main_calls, s.side_calls), (4, 3, 1));
        assert_eq!(s.ttft_median_ms, Some(300));
        assert_eq!(s.usage_source, "gateway");
        let mut r = record(0);
        apply(&mut r, &[], &crate::limits::budget::Budgets::default());
        let s = r.gateway.as_ref().unwrap().summary(&r.usage_source);
        assert_eq!(s.ttft_median_ms, None);
    }

    #[test]
    fn the_model_comes_from_the_requests_when_the_stream_names_none() {
        let mut named = call(2, CallKind::Main, 0, Some(200));
        named.model = Some("gpt-5.5".into());
        let mut side = call(1, CallKind::Side, 0, Some(200));
        side.model = Some("small".into());
        let mut r = record(1);
        apply(
            &mut r,
            &[side.clone(), named.clone()],
            &crate::limits::budget::Budgets::default(),
        );
        assert_eq!(r.model.as_deref(), Some("gpt-5.5"));
        // The stream's own wins.
        let mut r = record(1);
        r.model = Some("from-stream".into());
        apply(
            &mut r,
            &[side, named],
            &crate::limits::budget::Budgets::default(),
        );
        assert_eq!(r.model.as_deref(), Some("from-stream"));
    }

    #[test]
    fn a_disagreeing_stream_is_a_diagnostic_and_the_gateway_count_wins() {
        let mut r = record(3);
        apply(
            &mut r,
            &[call(1, CallKind::Main, 0, Some(200))],
            &Budgets::default(),
        );
        assert_eq!(r.num_turns, 1);
        assert_eq!(r.gateway.as_ref().unwrap().reducer_num_turns, 3);
        assert_eq!(r.diagnostics[0].kind, "gateway_turns_disagree");
    }

    #[test]
    fn held_and_native_caps_count_call_n_plus_1() {
        let mut held = call(3, CallKind::Main, 2, Some(503));
        held.held = true;
        held.usage = None;
        let mut r = record(3);
        r.max_turns_exhausted = true;
        let two = [
            call(1, CallKind::Main, 0, Some(200)),
            call(2, CallKind::Main, 1, Some(200)),
        ];
        apply(
            &mut r,
            &[two[0].clone(), two[1].clone(), held],
            &Budgets::default(),
        );
        assert_eq!(r.num_turns, 3);
        assert!(r.gateway.as_ref().unwrap().held);
        // The CLI's own cap: call 3 never sent, counted all the same.
        let mut r = record(3);
        r.max_turns_exhausted = true;
        apply(&mut r, &two, &Budgets::default());
        assert_eq!(r.num_turns, 3);
        assert!(r.diagnostics.is_empty());
    }

    #[test]
    fn a_stream_cut_by_the_stop_is_a_turn_a_call_refused_by_it_is_not() {
        let mut cut = call(2, CallKind::Main, 1, Some(200));
        cut.stopped = true;
        cut.cut = true;
        let mut refused = call(3, CallKind::Main, 2, Some(503));
        refused.stopped = true;
        refused.first_byte_us = None;
        refused.usage = None;
        let mut r = record(2);
        apply(
            &mut r,
            &[call(1, CallKind::Main, 0, Some(200)), cut, refused],
            &Budgets::default(),
        );
        assert_eq!(r.num_turns, 2);
        assert_eq!(r.gateway.as_ref().unwrap().main_calls, 2);
    }

    #[test]
    fn the_cross_check_message_names_turns_and_calls_apart() {
        // Three main calls, two of them one turn (a retry): two turns, three calls.
        let calls = [
            call(1, CallKind::Main, 0, Some(429)),
            call(2, CallKind::Main, 0, Some(200)),
            call(3, CallKind::Main, 1, Some(200)),
        ];
        let mut r = record(5);
        apply(&mut r, &calls, &crate::limits::budget::Budgets::default());
        let d = r
            .diagnostics
            .iter()
            .find(|d| d.kind == "gateway_turns_disagree")
            .unwrap();
        assert!(
            d.message.contains("counted 2 turn(s)") && d.message.contains("of 3 main-thread"),
            "{}",
            d.message
        );
        assert!(d.message.contains("shows 5"), "{}", d.message);
    }

    #[test]
    fn a_counted_turn_past_the_history_counts_as_a_turn_of_its_own() {
        let mut compacted = call(3, CallKind::Main, 0, Some(200));
        compacted.counted_turn = Some(2);
        let mut r = record(2);
        let calls = [
            call(1, CallKind::Main, 0, Some(200)),
            call(2, CallKind::Main, 1, Some(200)),
            compacted,
        ];
        apply(&mut r, &calls, &Budgets::default());
        assert_eq!(r.num_turns, 3);
    }

    #[test]
    fn an_unreported_usage_keeps_the_clis_and_an_unreachable_upstream_is_one_diagnostic() {
        let mut no_usage = call(1, CallKind::Main, 0, Some(200));
        no_usage.usage = None;
        let mut r = record(1);
        apply(&mut r, &[no_usage], &Budgets::default());
        assert_eq!(r.usage_source, "cli_result");
        assert_eq!(r.gateway.as_ref().unwrap().usage_unreported, 1);
        let refused = |seq| ModelCall {
            error: Some(
                "coder-eval gateway: upstream http://127.0.0.1:9 unreachable: refused".into(),
            ),
            ..call(seq, CallKind::Main, 0, Some(502))
        };
        let mut r = record(1);
        apply(&mut r, &[refused(1), refused(2)], &Budgets::default());
        let kinds: Vec<&str> = r.diagnostics.iter().map(|d| d.kind.as_str()).collect();
        assert_eq!(kinds, ["gateway_upstream_error"]);
    }

    /// The gateway's count goes over in the order the answers ended (a side request's
    /// usage counts), the breach becomes the record's `budget` with `figures: gateway`, a
    /// turn that ended on its own is `token_budget_exceeded`, and the call held for the
    /// budget is no turn.
    #[test]
    fn the_gateways_usage_goes_over_a_budget_in_the_order_the_answers_ended() {
        let budgets = Budgets {
            max_total_tokens: Some(30),
            ..Budgets::default()
        };
        // 12 tokens each (10 in, 2 out); call 2 ends after call 3.
        let mut late = call(2, CallKind::Main, 1, Some(200));
        late.end_us = Some(9_000);
        let mut held = call(4, CallKind::Main, 2, Some(503));
        held.held = true;
        held.over_budget = Some(BudgetKind::MaxTotalTokens);
        held.usage = None;
        let calls = [
            call(1, CallKind::Main, 0, Some(200)),
            late,
            call(3, CallKind::Side, 0, Some(200)),
            held,
        ];
        let breach = budget_breach(&calls, &budgets).expect("36 > 30");
        assert_eq!(breach.budget, BudgetKind::MaxTotalTokens);
        assert_eq!((breach.actual, breach.limit), (36.0, 30.0));
        assert_eq!((breach.event_index, breach.at_ms), (2, 9));
        assert_eq!(breach.model_calls, 2);
        let mut r = record(2);
        r.final_status = TurnStatus::Completed;
        apply(&mut r, &calls, &budgets);
        assert_eq!(r.budget, Some(breach));
        assert_eq!(r.final_status, TurnStatus::TokenBudgetExceeded);
        assert_eq!(r.num_turns, 2, "the held call is no turn");
        assert!(r.gateway.as_ref().unwrap().held, "a budget hold is a hold");
        // At the budget is within it.
        let within = Budgets {
            max_total_tokens: Some(36),
            ..Budgets::default()
        };
        assert_eq!(budget_breach(&calls, &within), None);
    }
}
