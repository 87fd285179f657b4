use super::*;

fn message(id: &str, input: u64, output: u64, read: u64, write: u64, cost: Option<f64>) -> Event {
    Event::AssistantMessage {
        message_id: id.into(),
        parent_call_id: None,
        text: String::new(),
        usage: Some(Usage {
            input_tokens: input,
            output_tokens: output,
            cache_read_tokens: read,
            cache_write_tokens: Some(write),
        }),
        cost_usd: cost,
    }
}

fn call() -> Event {
    Event::ModelCallStarted {
        message_id: None,
        parent_call_id: None,
    }
}

/// Feeds the events; the breach and the index it fired at.
fn run(budgets: Budgets, events: &[Event]) -> Option<BudgetBreach> {
    let mut meter = BudgetMeter::new(budgets);
    let mut out = None;
    for (i, e) in events.iter().enumerate() {
        if let Some(b) = meter.observe(i as u64 * 1000, e) {
            assert!(out.is_none(), "fires once");
            out = Some(b);
        }
    }
    out
}

#[test]
fn over_not_at() {
    let b = Budgets {
        max_output_tokens: Some(100),
        ..Budgets::default()
    };
    let events = [
        call(),
        message("a", 10, 60, 0, 0, None),
        call(),
        message("b", 10, 40, 0, 0, None),
    ];
    assert_eq!(run(b, &events), None, "100 is within 100");
    let mut more = events.to_vec();
    more.extend([call(), message("c", 1, 1, 0, 0, None)]);
    let hit = run(b, &more).unwrap();
    assert_eq!(hit.budget, BudgetKind::MaxOutputTokens);
    assert_eq!((hit.actual, hit.limit), (101.0, 100.0));
    assert_eq!(hit.event_index, 5);
    assert_eq!(hit.model_calls, 3);
}

#[test]
fn cache_counts_only_when_asked() {
    let events = [call(), message("a", 10, 0, 500, 300, None)];
    let b = Budgets {
        max_input_tokens: Some(100),
        ..Budgets::default()
    };
    assert_eq!(run(b, &events), None);
    let b2 = Budgets {
        count_cache_creation: true,
        ..b
    };
    let hit = run(b2, &events).unwrap();
    assert_eq!(hit.actual, 310.0);
    let b3 = Budgets {
        count_cached_input: true,
        count_cache_creation: true,
        ..b
    };
    assert_eq!(run(b3, &events).unwrap().actual, 810.0);
    let total = Budgets {
        max_total_tokens: Some(20),
        ..Budgets::default()
    };
    let hit = run(total, &[call(), message("a", 10, 11, 0, 0, None)]).unwrap();
    assert_eq!(hit.budget, BudgetKind::MaxTotalTokens);
    assert_eq!(hit.actual, 21.0);
}

#[test]
fn a_repeated_message_counts_once() {
    // Claude Code repeats a message's usage on each content block.
    let b = Budgets {
        max_output_tokens: Some(50),
        ..Budgets::default()
    };
    let events = [
        call(),
        message("a", 1, 30, 0, 0, None),
        message("a", 1, 30, 0, 0, None),
    ];
    assert_eq!(run(b, &events), None);
}

#[test]
fn usd_from_messages_else_the_final_result() {
    let b = Budgets {
        max_usd: Some(0.10),
        ..Budgets::default()
    };
    let events = [
        call(),
        message("a", 1, 1, 0, 0, Some(0.06)),
        call(),
        message("b", 1, 1, 0, 0, Some(0.05)),
    ];
    let hit = run(b, &events).unwrap();
    assert_eq!(hit.budget, BudgetKind::MaxUsd);
    assert!((hit.actual - 0.11).abs() < 1e-12);
    assert_eq!(hit.event_index, 3);
    // No cost anywhere: never a breach (max_usd is refused at load on such a harness).
    let none = [call(), message("a", 1_000_000, 1, 0, 0, None)];
    assert_eq!(run(b, &none), None);
    // Only a final total (Claude Code).
    let fin = Event::FinalResult {
        success: true,
        error_kind: None,
        error_message: None,
        max_turns_reached: false,
        num_turns: Some(1),
        cost_usd: Some(0.2),
        duration_ms: None,
        text: None,
        usage: None,
    };
    let hit = run(b, &[call(), message("a", 1, 1, 0, 0, None), fin]).unwrap();
    assert_eq!((hit.budget, hit.event_index), (BudgetKind::MaxUsd, 2));
}

#[test]
fn usage_only_in_the_final_result_counts_at_the_end() {
    // Codex and Gemini CLI: no per-message usage, the result's totals.
    let b = Budgets {
        max_total_tokens: Some(100),
        ..Budgets::default()
    };
    let fin = Event::FinalResult {
        success: true,
        error_kind: None,
        error_message: None,
        max_turns_reached: false,
        num_turns: Some(2),
        cost_usd: None,
        duration_ms: None,
        text: None,
        usage: Some(Usage {
            input_tokens: 90,
            output_tokens: 20,
            cache_read_tokens: 0,
            cache_write_tokens: Some(0),
        }),
    };
    let hit = run(b, &[call(), call(), fin]).unwrap();
    assert_eq!(
        (hit.budget, hit.actual, hit.event_index),
        (BudgetKind::MaxTotalTokens, 110.0, 2)
    );
}

#[test]
fn max_usd_is_refused_where_no_cost_is_reported() {
    let b = Budgets {
        max_usd: Some(1.0),
        ..Budgets::default()
    };
    for h in ["codex", "gemini-cli"] {
        let why = refusal(h, &b).unwrap();
        assert!(why.contains("max_usd") && why.contains(h), "{why}");
    }
    for h in ["claude-code", "opencode", "pi"] {
        assert_eq!(refusal(h, &b), None, "{h}");
    }
    assert!(refusal("my-cli", &b).is_some());
    assert_eq!(refusal("codex", &Budgets::default()), None);
}

#[test]
fn soft_budgets_warn_over_only() {
    let s = SoftBudgets {
        expected_turns: Some(3),
        expected_tool_calls: Some(2),
    };
    assert_eq!(s.check(2, false), []);
    let w = s.check(3, true);
    assert_eq!(w.len(), 2);
    assert_eq!(
        (w[0].budget.as_str(), w[0].expected, w[0].actual),
        ("expected_turns", 3, 4)
    );
    assert_eq!(
        (w[1].budget.as_str(), w[1].actual),
        ("expected_tool_calls", 3)
    );
    assert_eq!(s.check(2, true).len(), 0, "3 visible turns are within 3");
}

#[test]
fn the_results_own_total_wins_over_the_messages() {
    // Claude Code: each message's usage has the output count of its start (1); the
    // result has the true total.
    let b = Budgets {
        max_output_tokens: Some(20),
        ..Budgets::default()
    };
    let mut events = Vec::new();
    for id in ["a", "b", "c"] {
        events.push(call());
        events.push(message(id, 100, 1, 0, 0, None));
    }
    assert_eq!(run(b, &events), None, "3 output tokens by the messages");
    events.push(Event::FinalResult {
        success: true,
        error_kind: None,
        error_message: None,
        max_turns_reached: false,
        num_turns: Some(3),
        cost_usd: None,
        duration_ms: None,
        text: None,
        usage: Some(Usage {
            input_tokens: 300,
            output_tokens: 45,
            cache_read_tokens: 0,
            cache_write_tokens: Some(0),
        }),
    });
    let hit = run(b, &events).unwrap();
    assert_eq!((hit.actual, hit.event_index), (45.0, 6));
}

#[test]
fn a_final_usage_below_the_messages_counts_the_messages() {
    // Claude Code stopped by its own --max-budget-usd: the error_max_budget_usd result
    // reports the first call's usage (19054 input), the stream showed two calls.
    let b = Budgets {
        max_input_tokens: Some(30_000),
        ..Budgets::default()
    };
    let fin = |input| Event::FinalResult {
        success: false,
        error_kind: Some("error_max_budget_usd".into()),
        error_message: None,
        max_turns_reached: false,
        num_turns: Some(2),
        cost_usd: None,
        duration_ms: None,
        text: None,
        usage: Some(Usage {
            input_tokens: input,
            output_tokens: 20,
            cache_read_tokens: 0,
            cache_write_tokens: Some(0),
        }),
    };
    let mut meter = BudgetMeter::new(b);
    meter.observe(0, &message("a", 19054, 1, 0, 0, None));
    meter.observe(1000, &message("b", 9000, 1, 0, 0, None));
    meter.observe(2000, &fin(19054));
    assert_eq!(
        meter.totals(),
        (28054, 20, None),
        "the messages' input, the result's output"
    );
    assert!(meter.breach().is_none());
    let events = [
        call(),
        message("a", 19054, 1, 0, 0, None),
        call(),
        message("b", 19160, 1, 0, 0, None),
        fin(19054),
    ];
    // Over 30000 already at the second message; the result does not take it back.
    assert_eq!(run(b, &events).map(|h| h.actual), Some(38214.0));
    // A result that covers the messages is the figure, unchanged.
    let total = Usage {
        input_tokens: 40_000,
        output_tokens: 20,
        cache_read_tokens: 0,
        cache_write_tokens: None,
    };
    let m = Usage {
        input_tokens: 19054,
        output_tokens: 1,
        cache_read_tokens: 0,
        cache_write_tokens: None,
    };
    assert_eq!(usage_floor(total, [&m, &m]), None);
    let low = Usage {
        input_tokens: 19054,
        ..total
    };
    assert_eq!(
        usage_floor(low, [&m, &m]).map(|u| (u.input_tokens, u.output_tokens)),
        Some((38108, 20))
    );
}

/// Trial 16u M2: a tool call that never ran (interrupted as the host stopped the CLI,
/// or denied) does not count toward expected_tool_calls / expected_turns.
#[test]
fn a_tool_call_that_never_ran_does_not_count() {
    use crate::results::{ToolCallRecord, ToolOutcome};
    let call = |status| ToolCallRecord {
        call_id: "c".into(),
        name: "Bash".into(),
        input: serde_json::Value::Null,
        parent_call_id: None,
        status,
        exit_code: None,
        output_excerpt: String::new(),
        started_ms: 0,
        finished_ms: None,
        duration_ms: 0,
    };
    let calls = [
        call(ToolOutcome::Ok),
        call(ToolOutcome::Error),
        call(ToolOutcome::Interrupted),
        call(ToolOutcome::Denied),
    ];
    assert_eq!(tool_calls_that_ran(&calls), 2);
    let s = SoftBudgets {
        expected_turns: Some(2),
        expected_tool_calls: Some(2),
    };
    assert_eq!(s.check(tool_calls_that_ran(&calls), false), []);
}

/// grok-cli reports no usage: each token budget, and max_usd, is refused, naming the field
/// (so the load error is placed at its line); without budgets it runs.
#[test]
fn token_budgets_are_refused_where_no_usage_is_reported() {
    for (name, b) in [
        (
            "max_input_tokens",
            Budgets {
                max_input_tokens: Some(1),
                ..Budgets::default()
            },
        ),
        (
            "max_output_tokens",
            Budgets {
                max_output_tokens: Some(1),
                ..Budgets::default()
            },
        ),
        (
            "max_total_tokens",
            Budgets {
                max_total_tokens: Some(100),
                ..Budgets::default()
            },
        ),
        (
            "max_usd",
            Budgets {
                max_usd: Some(1.0),
                ..Budgets::default()
            },
        ),
    ] {
        let why = refusal("grok-cli", &b).unwrap_or_else(|| panic!("{name} accepted"));
        assert!(why.starts_with(&format!("run_limits.{name} ")), "{why}");
        assert!(why.contains("grok-cli"), "{why}");
        assert!(!why.contains("does not know"), "{why}");
        // A harness that reports usage keeps its token budgets.
        if name != "max_usd" {
            assert_eq!(refusal("continue", &b), None, "{name}");
        }
    }
    assert_eq!(refusal("grok-cli", &Budgets::default()), None);
}
