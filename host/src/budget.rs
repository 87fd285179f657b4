//! coder_eval's budget caps (`run_limits.max_input_tokens`, `max_output_tokens`,
//! `max_total_tokens`, `max_usd`), checked once the turn has ended against what the CLI
//! reported. coder_eval checks them after each turn and a task here is one turn, so a
//! breach means the same: the task is `TOKEN_BUDGET_EXCEEDED` or `COST_BUDGET_EXCEEDED`
//! (both failures), whatever the criteria say.

use crate::limits::RunLimitsSpec;
use crate::results::TurnRecord;
use serde::{Deserialize, Serialize};

/// The budget check of one task (`task.json` `budget`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct BudgetRecord {
    /// Input tokens counted against the budgets (cache tokens per `count_cached_input`,
    /// `count_cache_creation`); `null` when the CLI reported no usage.
    pub input_tokens: Option<u64>,
    /// Output tokens; `null` when the CLI reported no usage.
    pub output_tokens: Option<u64>,
    /// USD; `null` when the CLI reported no cost.
    pub cost_usd: Option<f64>,
    /// The first budget exceeded, as a sentence; `null` when none was.
    pub exceeded: Option<String>,
    /// Budgets set but not checkable (no usage or no cost reported), by key.
    pub unchecked: Vec<String>,
}

/// Which budget a breach is of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Breach {
    Tokens,
    Cost,
}

/// Checks the budgets the task sets; `None` when it sets none.
pub fn check(limits: &RunLimitsSpec, turn: &TurnRecord) -> Option<(BudgetRecord, Option<Breach>)> {
    let any = limits.max_input_tokens.is_some()
        || limits.max_output_tokens.is_some()
        || limits.max_total_tokens.is_some()
        || limits.max_usd.is_some();
    if !any {
        return None;
    }
    let mut record = BudgetRecord::default();
    let reported = turn.usage_source != "none";
    if reported {
        let u = &turn.usage;
        let mut input = u.input_tokens;
        if limits.count_cached_input {
            input += u.cache_read_tokens;
        }
        if limits.count_cache_creation {
            input += u.cache_write_tokens;
        }
        record.input_tokens = Some(input);
        record.output_tokens = Some(u.output_tokens);
    }
    record.cost_usd = turn.cost_usd;
    let mut breach = None;
    let token_caps = [
        (
            "max_input_tokens",
            limits.max_input_tokens,
            record.input_tokens,
        ),
        (
            "max_output_tokens",
            limits.max_output_tokens,
            record.output_tokens,
        ),
        (
            "max_total_tokens",
            limits.max_total_tokens,
            record
                .input_tokens
                .zip(record.output_tokens)
                .map(|(i, o)| i + o),
        ),
    ];
    for (key, cap, used) in token_caps {
        let Some(cap) = cap else { continue };
        match used {
            None => record.unchecked.push(key.to_string()),
            Some(used) if used > cap && breach.is_none() => {
                record.exceeded = Some(format!(
                    "run_limits.{key} {cap} exceeded: the run used {used} tokens"
                ));
                breach = Some(Breach::Tokens);
            }
            Some(_) => {}
        }
    }
    if let Some(cap) = limits.max_usd {
        match record.cost_usd {
            None => record.unchecked.push("max_usd".to_string()),
            Some(cost) if cost > cap && breach.is_none() => {
                record.exceeded = Some(format!(
                    "run_limits.max_usd {cap} exceeded: the run cost {cost:.4} USD"
                ));
                breach = Some(Breach::Cost);
            }
            Some(_) => {}
        }
    }
    Some((record, breach))
}
