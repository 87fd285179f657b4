//! Token and USD budgets (`run_limits.max_input_tokens`, `max_output_tokens`,
//! `max_total_tokens`, `max_usd`, `count_cached_input`, `count_cache_creation`: coder_eval's
//! names and defaults), enforced live between model calls from the normalized usage, and
//! the soft budgets `expected_turns` / `expected_tool_calls` (a warning, never a stop).
//!
//! Counting (coder_eval's): input = uncached input tokens, plus cache writes when
//! `count_cache_creation`, plus cache reads when `count_cached_input`; total = input +
//! output. A budget is exceeded when the running figure goes *over* it (equal is within).
//! Every model call of the run counts, sub-agents' included (the agent spent them). A
//! message's usage is taken once per message id (the last report of it wins, as in the
//! turn record). USD is the sum of the messages' own `cost_usd`, else the CLI's final
//! result's total; dollars are never estimated from tokens.

use harness_kit::{Event, Usage};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// The budgets of a task (from `run_limits:`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Budgets {
    /// Input tokens allowed over the run.
    pub max_input_tokens: Option<u64>,
    /// Output tokens allowed over the run.
    pub max_output_tokens: Option<u64>,
    /// Input plus output tokens allowed over the run.
    pub max_total_tokens: Option<u64>,
    /// USD allowed over the run.
    pub max_usd: Option<f64>,
    /// Cache reads count as input (default false: cached reads are nearly free).
    pub count_cached_input: bool,
    /// Cache writes count as input (default false). Codex reports its fresh prompt slice
    /// here, so a Codex input budget needs it.
    pub count_cache_creation: bool,
}

impl Budgets {
    /// Whether any budget is set.
    pub fn any(&self) -> bool {
        self.max_input_tokens.is_some()
            || self.max_output_tokens.is_some()
            || self.max_total_tokens.is_some()
            || self.max_usd.is_some()
    }
}

/// Which budget ran out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BudgetKind {
    MaxInputTokens,
    MaxOutputTokens,
    MaxTotalTokens,
    MaxUsd,
}

impl BudgetKind {
    /// The `run_limits` field.
    pub fn as_str(self) -> &'static str {
        match self {
            BudgetKind::MaxInputTokens => "max_input_tokens",
            BudgetKind::MaxOutputTokens => "max_output_tokens",
            BudgetKind::MaxTotalTokens => "max_total_tokens",
            BudgetKind::MaxUsd => "max_usd",
        }
    }

    /// A token budget (else the USD one).
    pub fn is_tokens(self) -> bool {
        self != BudgetKind::MaxUsd
    }
}

/// A budget that ran out, as `task.json` records it (`budget`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct BudgetBreach {
    pub budget: BudgetKind,
    /// The running figure that went over: tokens, or USD.
    pub actual: f64,
    /// The budget: tokens, or USD.
    pub limit: f64,
    /// The 0-based index in the trajectory of the event that took it over.
    pub event_index: u64,
    /// ms from the turn's start to that event.
    pub at_ms: u64,
    /// Main-thread model calls begun by then.
    pub model_calls: u32,
}

/// Counts usage and cost as the events arrive and says when a budget runs out.
#[derive(Debug, Clone, Default)]
pub struct BudgetMeter {
    budgets: Budgets,
    usage: HashMap<String, Usage>,
    cost: HashMap<String, f64>,
    final_cost: Option<f64>,
    events: u64,
    main_calls: u32,
    breach: Option<BudgetBreach>,
}

impl BudgetMeter {
    pub fn new(budgets: Budgets) -> BudgetMeter {
        BudgetMeter {
            budgets,
            ..BudgetMeter::default()
        }
    }

    /// The breach, once one happened.
    pub fn breach(&self) -> Option<&BudgetBreach> {
        self.breach.as_ref()
    }

    /// Input, output tokens and USD so far (USD `None` while no cost was reported).
    pub fn totals(&self) -> (u64, u64, Option<f64>) {
        let (mut input, mut output) = (0u64, 0u64);
        for u in self.usage.values() {
            input += u.input_tokens;
            if self.budgets.count_cache_creation {
                input += u.cache_write_tokens;
            }
            if self.budgets.count_cached_input {
                input += u.cache_read_tokens;
            }
            output += u.output_tokens;
        }
        let usd = if self.cost.is_empty() {
            self.final_cost
        } else {
            Some(self.cost.values().sum())
        };
        (input, output, usd)
    }

    /// Takes the next event of the trajectory (with its µs stamp); returns the breach when
    /// this event takes a budget over (once).
    pub fn observe(&mut self, stamp_us: u64, event: &Event) -> Option<BudgetBreach> {
        let index = self.events;
        self.events += 1;
        if self.breach.is_some() || !self.budgets.any() {
            return None;
        }
        match event {
            Event::ModelCallStarted {
                parent_call_id: None,
                ..
            } => {
                self.main_calls += 1;
                return None;
            }
            Event::AssistantMessage {
                message_id,
                usage,
                cost_usd,
                ..
            } => {
                if let Some(u) = usage {
                    self.usage.insert(message_id.clone(), *u);
                }
                if let Some(c) = cost_usd {
                    self.cost.insert(message_id.clone(), *c);
                }
            }
            Event::FinalResult { cost_usd, .. } => self.final_cost = *cost_usd,
            _ => return None,
        }
        let (input, output, usd) = self.totals();
        let b = self.budgets;
        let over = [
            (
                BudgetKind::MaxInputTokens,
                input as f64,
                b.max_input_tokens.map(|n| n as f64),
            ),
            (
                BudgetKind::MaxOutputTokens,
                output as f64,
                b.max_output_tokens.map(|n| n as f64),
            ),
            (
                BudgetKind::MaxTotalTokens,
                (input + output) as f64,
                b.max_total_tokens.map(|n| n as f64),
            ),
            (
                BudgetKind::MaxUsd,
                usd.unwrap_or(0.0),
                b.max_usd.filter(|_| usd.is_some()),
            ),
        ]
        .into_iter()
        .find_map(|(kind, actual, limit)| {
            limit
                .filter(|l| actual > *l)
                .map(|limit| (kind, actual, limit))
        })?;
        self.breach = Some(BudgetBreach {
            budget: over.0,
            actual: over.1,
            limit: over.2,
            event_index: index,
            at_ms: stamp_us / 1000,
            model_calls: self.main_calls,
        });
        self.breach
    }
}

/// The soft budgets: over them is a warning and a badge, never a stop.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SoftBudgets {
    /// coder_eval's visible turns: one per tool call, plus one for the final reply.
    pub expected_turns: Option<u32>,
    /// Tool calls (sub-agents' included, as `max_tool_calls` counts them).
    pub expected_tool_calls: Option<u32>,
}

/// One soft budget gone over, as `task.json` records it (`soft_budgets`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SoftBudgetWarning {
    /// `expected_turns` or `expected_tool_calls`.
    pub budget: String,
    pub expected: u32,
    pub actual: u32,
}

impl SoftBudgets {
    /// The warnings for a run with `tool_calls` tool calls and a final reply or not.
    pub fn check(&self, tool_calls: u32, final_reply: bool) -> Vec<SoftBudgetWarning> {
        let turns = tool_calls + u32::from(final_reply);
        [
            ("expected_turns", self.expected_turns, turns),
            ("expected_tool_calls", self.expected_tool_calls, tool_calls),
        ]
        .into_iter()
        .filter_map(|(name, expected, actual)| {
            expected
                .filter(|e| actual > *e)
                .map(|expected| SoftBudgetWarning {
                    budget: name.to_string(),
                    expected,
                    actual,
                })
        })
        .collect()
    }
}

#[cfg(test)]
mod tests;
