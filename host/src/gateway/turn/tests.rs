//! Tests of [`super::apply`], [`super::apply_priced`] and [`super::budget_breach`].

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
        cost_usd: None,
        unpriced: None,
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
    apply(&mut r, &calls, &Budgets::default());
    let s = r.gateway.as_ref().unwrap().summary(&r.usage_source);
    assert_eq!((s.calls, s.main_calls, s.side_calls), (4, 3, 1));
    assert_eq!(s.ttft_median_ms, Some(300));
    assert_eq!(s.usage_source, "gateway");
    let mut r = record(0);
    apply(&mut r, &[], &Budgets::default());
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
    apply(&mut r, &[side.clone(), named.clone()], &Budgets::default());
    assert_eq!(r.model.as_deref(), Some("gpt-5.5"));
    // The stream's own wins.
    let mut r = record(1);
    r.model = Some("from-stream".into());
    apply(&mut r, &[side, named], &Budgets::default());
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
    apply(&mut r, &calls, &Budgets::default());
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
        error: Some("coder-eval gateway: upstream http://127.0.0.1:9 unreachable: refused".into()),
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

fn table() -> crate::gateway::PriceTable {
    crate::gateway::PriceTable::parse(
        "m: {input: 1, output: 10, cache_write: 2}\n",
        std::path::Path::new("prices.yaml"),
    )
    .unwrap()
}

/// A call is priced only when billed: one with usage gets `cost_usd`, a 2xx whose usage
/// is unknown and a model not in the table get `unpriced` (never 0), and a held call or
/// an error answer without usage gets neither.
#[test]
fn only_billed_calls_are_priced_and_an_unknown_cost_is_absent() {
    let t = table();
    let mut ok = call(1, CallKind::Main, 0, Some(200));
    ok.price_with(&t);
    // 10 in × 1 + 2 out × 10 + 1 cache write × 2, per million.
    assert_eq!((ok.cost_usd, ok.unpriced.as_deref()), (Some(32e-6), None));
    let mut unknown = call(2, CallKind::Main, 1, Some(200));
    unknown.usage = None;
    unknown.price_with(&t);
    assert_eq!(unknown.cost_usd, None);
    assert!(
        unknown
            .unpriced
            .as_deref()
            .is_some_and(|w| w.contains("no usage")),
        "{unknown:?}"
    );
    let mut other_model = call(3, CallKind::Side, 1, Some(200));
    other_model.model = Some("big".into());
    other_model.price_with(&t);
    assert!(
        other_model
            .unpriced
            .as_deref()
            .is_some_and(|w| w.contains("`big`") && w.contains("prices.yaml")),
        "{other_model:?}"
    );
    let mut held = call(4, CallKind::Main, 2, Some(503));
    held.held = true;
    held.price_with(&t);
    let mut limited = call(5, CallKind::Main, 2, Some(429));
    limited.price_with(&t);
    for c in [&held, &limited] {
        assert_eq!((c.cost_usd, c.unpriced.as_ref()), (None, None), "{c:?}");
    }
}

/// With a table the gateway view has the priced total, `cost_source: price_table`, the
/// file, and `cost_partial` when a billed call went unpriced; the turn's `cost_usd`
/// stays the CLI's. Without a table it says it did not price.
#[test]
fn a_priced_turn_has_the_sum_of_its_calls_and_says_when_it_is_partial() {
    let t = table();
    let mut calls = vec![
        call(1, CallKind::Main, 0, Some(200)),
        call(2, CallKind::Side, 0, Some(200)),
    ];
    calls.iter_mut().for_each(|c| c.price_with(&t));
    let mut r = record(1);
    r.cost_usd = Some(0.5);
    apply_priced(&mut r, &calls, &Budgets::default(), Some("prices.yaml"));
    let g = r.gateway.clone().unwrap();
    assert_eq!(g.cost_usd, Some(64e-6));
    assert_eq!(g.cost_source, "price_table");
    assert_eq!(g.price_table.as_deref(), Some("prices.yaml"));
    assert_eq!((g.unpriced_calls, g.cost_partial), (0, false));
    assert_eq!(r.cost_usd, Some(0.5), "the CLI's cost is kept");
    let mut big = call(3, CallKind::Main, 1, Some(200));
    big.model = Some("big".into());
    big.price_with(&t);
    calls.push(big.clone());
    apply_priced(&mut r, &calls, &Budgets::default(), Some("prices.yaml"));
    let g = r.gateway.clone().unwrap();
    assert_eq!(
        (g.cost_usd, g.unpriced_calls, g.cost_partial),
        (Some(64e-6), 1, true)
    );
    // Every billed call unpriced: absent, not 0.
    apply_priced(&mut r, &[big], &Budgets::default(), Some("prices.yaml"));
    assert_eq!(r.gateway.as_ref().unwrap().cost_usd, None);
    // No table: not priced.
    apply(&mut r, &calls[..2], &Budgets::default());
    let g = r.gateway.unwrap();
    assert_eq!((g.cost_usd, g.cost_source.as_str()), (None, "not_priced"));
    let json = serde_json::to_value(&g).unwrap();
    assert_eq!(json["cost_source"], "not_priced");
    assert!(json.get("cost_usd").is_none());
}

/// `max_usd` is checked on the priced calls' cost (only when priced) and its breach
/// makes the turn `cost_budget_exceeded`.
#[test]
fn max_usd_goes_over_on_the_priced_cost_only_when_the_calls_were_priced() {
    let budgets = Budgets {
        max_usd: Some(50e-6),
        ..Budgets::default()
    };
    let unpriced = [
        call(1, CallKind::Main, 0, Some(200)),
        call(2, CallKind::Main, 1, Some(200)),
    ];
    assert_eq!(budget_breach(&unpriced, &budgets), None, "nothing priced");
    let mut calls = unpriced.clone();
    calls.iter_mut().for_each(|c| c.price_with(&table()));
    let breach = budget_breach(&calls, &budgets).expect("64e-6 > 50e-6");
    assert_eq!(breach.budget, BudgetKind::MaxUsd);
    assert_eq!((breach.event_index, breach.limit), (2, 50e-6));
    let mut r = record(2);
    r.final_status = TurnStatus::Completed;
    apply_priced(&mut r, &calls, &budgets, Some("prices.yaml"));
    assert_eq!(r.final_status, TurnStatus::CostBudgetExceeded);
}
