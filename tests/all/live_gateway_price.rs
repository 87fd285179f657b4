//! `run --gateway --price-table FILE` on Claude Code with the scripted model as the
//! upstream: each model call priced from the API's own usage, the turn's gateway view
//! with the total and `cost_source: price_table`, and a bad table or a table without
//! `--gateway` refused before any agent starts.

use crate::live_claude::{assert_replay_matches, run_task};
use crate::support::{bin, root, scratch};
use coder_eval::gateway::{CallKind, ModelCall};
use coder_eval::results::TaskStatus;
use std::path::Path;
use std::process::Command;

const MODEL: &str = "claude-sonnet-4-5";

fn model_calls(path: &Path) -> Vec<ModelCall> {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines()
        .filter(|l| l.starts_with(r#"{"t":"model_call""#))
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Every main call (of `MODEL`) costs its usage times the table's prices; a call of a
/// model not in the table (Claude Code's side requests may name another) has no cost and
/// says why; the gateway view sums the priced calls and says `partial` when any went
/// unpriced; the CLI's own cost is kept as the turn's `cost_usd`.
#[test]
fn claude_code_through_the_gateway_is_priced_with_the_table() {
    let out = scratch("live-gateway-price");
    let table = out.join("prices.yaml");
    std::fs::write(
        &table,
        format!("{MODEL}: {{input: 3, output: 15, cache_read: 0.3, cache_write: 3.75}}\n"),
    )
    .unwrap();
    let table_arg = table.display().to_string();
    let r = run_task(
        "tasks/scenarios/hello/task.yaml",
        "claude-code",
        &out,
        &["--gateway", "--model", MODEL, "--price-table", &table_arg],
    );
    assert_eq!(r.status, TaskStatus::Success, "{:?}", r.error);
    let calls = model_calls(&out.join("hello/claude-code/recording.jsonl"));
    let main: Vec<&ModelCall> = calls.iter().filter(|c| c.kind == CallKind::Main).collect();
    assert!(!main.is_empty(), "{calls:#?}");
    for c in &main {
        assert_eq!(c.model.as_deref(), Some(MODEL), "{c:#?}");
        let u = c.usage.expect("the scripted model reports usage");
        let want = (u.input_tokens.unwrap_or(0) as f64 * 3.0
            + u.output_tokens.unwrap_or(0) as f64 * 15.0
            + u.cache_read_tokens.unwrap_or(0) as f64 * 0.3
            + u.cache_write_tokens.unwrap_or(0) as f64 * 3.75)
            / 1e6;
        let got = c.cost_usd.expect("a main call is priced");
        assert!((got - want).abs() < 1e-9, "{got} != {want}: {c:#?}");
    }
    for c in calls.iter().filter(|c| c.model.as_deref() != Some(MODEL)) {
        if let Some(why) = &c.unpriced {
            assert!(why.contains(&table_arg), "{why}");
        }
        assert_eq!(c.cost_usd, None, "{c:#?}");
    }
    let t = r.turn.as_ref().unwrap();
    let g = t.gateway.as_ref().expect("the gateway's view");
    assert_eq!(g.cost_source, "price_table");
    assert_eq!(g.price_table.as_deref(), Some(table_arg.as_str()));
    let sum: f64 = calls.iter().filter_map(|c| c.cost_usd).sum();
    assert!((g.cost_usd.unwrap() - sum).abs() < 1e-9, "{g:#?}");
    let unpriced = calls.iter().filter(|c| c.unpriced.is_some()).count() as u32;
    assert_eq!((g.unpriced_calls, g.cost_partial), (unpriced, unpriced > 0));
    // cost.json has the same total beside the CLI's own figure.
    let cost = crate::live_cost::cost_record(&out.join("hello/claude-code"));
    let gc = cost.gateway_cost.expect("cost.json's gateway_cost");
    assert_eq!(
        (gc.cost_usd, gc.cost_source.as_str()),
        (g.cost_usd, "price_table")
    );
    assert_eq!(gc.price_table, table_arg);
    assert_eq!(cost.total_cost_usd.is_some(), t.cost_usd.is_some());
    assert_replay_matches(&out, &r);
}

/// A bad table is refused before any agent starts (exit 2, `FILE:LINE:COL`), and so is
/// `--price-table` without `--gateway`.
#[test]
fn a_bad_price_table_or_one_without_the_gateway_is_refused() {
    let out = scratch("live-gateway-price-bad");
    let table = out.join("bad.yaml");
    std::fs::write(
        &table,
        "m: {input: 1, output: 2}\nn: {input: 1, ouput: 2}\n",
    )
    .unwrap();
    let task = root().join("tasks/scenarios/hello/task.yaml");
    let run = |extra: &[&str]| {
        Command::new(bin())
            .arg("run")
            .arg(&task)
            .args(["--harness", "claude-code", "--out"])
            .arg(out.join("runs"))
            .args(extra)
            .output()
            .unwrap()
    };
    let table_arg = table.display().to_string();
    let bad = run(&["--gateway", "--price-table", &table_arg]);
    let err = String::from_utf8_lossy(&bad.stderr);
    assert_eq!(bad.status.code(), Some(2), "{err}");
    assert!(err.contains(&format!("{table_arg}:2:")), "{err}");
    assert!(err.contains("ouput"), "{err}");
    assert!(!out.join("runs/hello").exists(), "no agent started");
    let alone = run(&["--price-table", &table_arg]);
    let err = String::from_utf8_lossy(&alone.stderr);
    assert_eq!(alone.status.code(), Some(2), "{err}");
    assert!(err.contains("--gateway"), "{err}");
}
