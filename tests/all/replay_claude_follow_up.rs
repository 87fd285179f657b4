//! Claude Code 2.1.332's follow-up query: a background task (a `run_in_background` Bash
//! call, a `Monitor`, an async `Agent` call) that ends after the final reply makes the
//! CLI start another query in the same process, with a second `system/init`, more model
//! calls and a second `result`. That result's `usage` and `num_turns` are its own query's;
//! `total_cost_usd` and `modelUsage` are the process's running totals. The trial's
//! recordings (`tests/corpus/live/claude/{bg2,err1,sub1}-2.1.332.*`, trial14c) replayed
//! through the host: the turn's usage and turns are the results' sums, its cost the last
//! running total, and a budget sees all of it. The right values are computed here from
//! the files' own `result` lines, apart from the reducer.

use crate::support::corpus;
use coder_eval::Usage;
use coder_eval::results::{BudgetKind, TotalsStatus, TurnRecord, TurnStatus};
use coder_eval::turn::replay::{ReplayOptions, replay};
use serde_json::Value;

fn replay_claude(rel: &str) -> TurnRecord {
    let path = corpus(rel);
    replay(&path, &ReplayOptions::new("claude-code"))
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The `result` lines of a plain capture.
fn results(rel: &str) -> Vec<Value> {
    std::fs::read_to_string(corpus(rel))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["type"] == "result")
        .collect()
}

fn sum(results: &[Value], pick: impl Fn(&Value) -> &Value) -> u64 {
    results.iter().map(|v| pick(v).as_u64().unwrap()).sum()
}

#[test]
fn claude_a_follow_up_query_adds_its_usage_and_turns() {
    for (name, main_thread_only) in [
        ("bg2-2.1.332", true),
        ("err1-2.1.332", true),
        ("sub1-2.1.332", false),
        // 2.1.197 (the earlier pin) starts the follow-up query just the same.
        ("bg2-2.1.197", true),
    ] {
        let capture = format!("live/claude/{name}.jsonl");
        let results = results(&capture);
        assert_eq!(results.len(), 2, "{name}: the recording holds two results");
        let input = sum(&results, |v| &v["usage"]["input_tokens"]);
        let output = sum(&results, |v| &v["usage"]["output_tokens"]);
        let last = &results[1];
        let model_usage = last["modelUsage"]
            .as_object()
            .unwrap()
            .values()
            .next()
            .unwrap();
        if main_thread_only {
            // No sub-agent: the process's modelUsage is every call, and the results add
            // up to it (bg2: 37372 + 12932 = 50304 input, 119 + 112 = 231 output).
            assert_eq!(
                (input, output),
                (
                    model_usage["inputTokens"].as_u64().unwrap(),
                    model_usage["outputTokens"].as_u64().unwrap()
                ),
                "{name}"
            );
        }
        for file in [
            capture.clone(),
            format!("live/claude/{name}.recording.jsonl"),
        ] {
            let r = replay_claude(&file);
            assert_eq!(
                r.usage,
                Some(Usage {
                    input_tokens: input,
                    output_tokens: output,
                    cache_read_tokens: 0,
                    cache_write_tokens: Some(0),
                }),
                "{file}"
            );
            assert_eq!(r.usage_source, "cli_result", "{file}");
            assert_eq!(
                r.cli_num_turns.map(u64::from),
                Some(sum(&results, |v| &v["num_turns"])),
                "{file}"
            );
            // The cost is the last result's running total, not a sum.
            assert_eq!(r.cost_usd, last["total_cost_usd"].as_f64(), "{file}");
            let kinds: Vec<&str> = r.diagnostics.iter().map(|d| d.kind.as_str()).collect();
            assert!(!kinds.contains(&"unknown_subtype"), "{file}: {kinds:?}");
            if main_thread_only {
                assert!(r.unreported.is_empty(), "{file}: {:?}", r.unreported);
                assert_eq!(r.totals, TotalsStatus::Complete, "{file}");
            } else {
                // sub1's sub-agents' tokens are in modelUsage only: partial, at least the
                // main thread's two queries.
                assert_eq!(r.totals, TotalsStatus::Partial, "{file}");
                assert!(
                    input < model_usage["inputTokens"].as_u64().unwrap(),
                    "{file}"
                );
            }
        }
    }
}

/// bg2 (`run_limits: {max_output_tokens: 150}`): the follow-up query's reply takes the
/// run's output over the budget (119 + 112 = 231 > 150), so the turn is
/// `token_budget_exceeded`, as the control run without the background call is (2.1.332,
/// and 2.1.197, recorded with this fix live: the host stopped it at that result).
#[test]
fn claude_a_budget_sees_the_follow_up_query() {
    for version in ["2.1.332", "2.1.197"] {
        a_budget_sees_the_follow_up_query(version);
    }
}

fn a_budget_sees_the_follow_up_query(version: &str) {
    let rel = &format!("live/claude/bg2-{version}.recording.jsonl");
    let header: Value = serde_json::from_str(
        std::fs::read_to_string(corpus(rel))
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    let limit = header["budgets"]["max_output_tokens"].as_f64().unwrap();
    let output = sum(
        &results("live/claude/bg2-2.1.332.jsonl"),
        |v| &v["usage"]["output_tokens"],
    );
    assert!(
        output as f64 > limit,
        "{version}: the recording's run went over"
    );
    let r = replay_claude(rel);
    assert_eq!(r.final_status, TurnStatus::TokenBudgetExceeded, "{version}");
    let breach = r.budget.as_ref().unwrap();
    assert_eq!(
        (breach.budget, breach.actual, breach.limit),
        (BudgetKind::MaxOutputTokens, output as f64, limit),
        "{version}"
    );
}
