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
//! turn record); once the CLI's final result reports its own usage total, that total is
//! the figure (as in the turn record: Claude Code's per-message usage carries only the
//! output count of the message's start), each count at least the messages' own sum (see
//! [`usage_floor`]: Claude Code's `error_max_budget_usd` result reports only its first
//! call's usage). A process that prints several final results (Claude Code's follow-up
//! query after a background task ended) is read through its reducer's sums: each
//! `FinalResult` carries the process's usage so far, so the latest is the figure, and the
//! budget is checked again at each. USD is the sum of the messages' own `cost_usd`,
//! else the CLI's final result's total; dollars are never estimated from tokens.

pub(crate) use crate::results::BudgetBreach;
pub use crate::results::BudgetKind;
pub(crate) use crate::results::SoftBudgetWarning;
use harness_kit::{Event, Usage};
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

    /// What the CLI's stream still enforces when the model gateway counts the tokens
    /// (`--gateway`): `max_usd` only (the CLI's reported cost), the token budgets cleared.
    pub(crate) fn without_tokens(self) -> Budgets {
        Budgets {
            max_input_tokens: None,
            max_output_tokens: None,
            max_total_tokens: None,
            ..self
        }
    }

    /// Only the token budgets (`max_usd` cleared).
    pub(crate) fn tokens_only(self) -> Budgets {
        Budgets {
            max_usd: None,
            ..self
        }
    }
}

/// Counts usage and cost as the events arrive and says when a budget runs out.
#[derive(Debug, Clone, Default)]
pub(crate) struct BudgetMeter {
    budgets: Budgets,
    usage: HashMap<String, Usage>,
    cost: HashMap<String, f64>,
    final_cost: Option<f64>,
    final_usage: Option<Usage>,
    events: u64,
    main_calls: u32,
    breach: Option<BudgetBreach>,
}

impl BudgetMeter {
    pub(crate) fn new(budgets: Budgets) -> BudgetMeter {
        BudgetMeter {
            budgets,
            ..BudgetMeter::default()
        }
    }

    /// The breach, once one happened.
    pub(crate) fn breach(&self) -> Option<&BudgetBreach> {
        self.breach.as_ref()
    }

    /// Input, output tokens and USD so far (USD `None` while no cost was reported).
    pub(crate) fn totals(&self) -> (u64, u64, Option<f64>) {
        let (mut input, mut output) = (0u64, 0u64);
        let floor = self
            .final_usage
            .map(|total| usage_floor(total, self.usage.values()).unwrap_or(total));
        let usages: Vec<&Usage> = match &floor {
            Some(total) => vec![total],
            None => self.usage.values().collect(),
        };
        for u in usages {
            // A stream that does not carry cache writes (Gemini CLI) adds none.
            input = input.saturating_add(input_tokens(&self.budgets, u));
            output = output.saturating_add(u.output_tokens);
        }
        // To 1e-10 USD: a sum of reported decimals without float noise.
        let usd = if self.cost.is_empty() {
            self.final_cost
        } else {
            Some(self.cost.values().sum::<f64>())
        }
        .map(|usd| (usd * 1e10).round() / 1e10);
        (input, output, usd)
    }

    /// Takes the next event of the trajectory (with its µs stamp); returns the breach when
    /// this event takes a budget over (once).
    pub(crate) fn observe(&mut self, stamp_us: u64, event: &Event) -> Option<BudgetBreach> {
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
            Event::FinalResult {
                cost_usd, usage, ..
            } => {
                self.final_cost = *cost_usd;
                self.final_usage = *usage;
            }
            _ => return None,
        }
        let (input, output, usd) = self.totals();
        let over = over(&self.budgets, input, output, usd)?;
        self.breach = Some(BudgetBreach {
            budget: over.0,
            actual: over.1,
            limit: over.2,
            event_index: index,
            at_ms: stamp_us / 1000,
            model_calls: self.main_calls,
            figures: None,
        });
        self.breach
    }
}

/// The first budget of `b` that the running figures go *over* (equal is within), as
/// (budget, figure, limit): input, output and total tokens as [`input_tokens`] counts
/// them, then USD (`None`: no cost known, so `max_usd` is not checked).
pub fn over(
    b: &Budgets,
    input: u64,
    output: u64,
    usd: Option<f64>,
) -> Option<(BudgetKind, f64, f64)> {
    [
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
            input.saturating_add(output) as f64,
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
    })
}

/// The input tokens of `u` that count toward a budget: uncached input, plus cache writes
/// with `count_cache_creation` (none when not reported), plus cache reads with
/// `count_cached_input`.
pub fn input_tokens(b: &Budgets, u: &Usage) -> u64 {
    let mut input = u.input_tokens;
    if b.count_cache_creation {
        input = input.saturating_add(u.cache_writes_or_zero());
    }
    if b.count_cached_input {
        input = input.saturating_add(u.cache_read_tokens);
    }
    input
}

/// A final result's usage `total` raised to what the stream's own `messages` already
/// showed, when the messages' sum is larger in any count (input, output, cache reads,
/// cache writes): each count the larger of the two, a lower bound. `None` when the total
/// covers the messages (the usual case: the total is the figure). Claude Code's
/// `error_max_budget_usd` result reports only its first model call's usage, below the sum
/// of the calls its stream showed.
pub(crate) fn usage_floor<'a>(
    total: Usage,
    messages: impl IntoIterator<Item = &'a Usage>,
) -> Option<Usage> {
    let sum = messages
        .into_iter()
        .fold(Usage::default(), |sum, u| sum.saturating_add(u));
    let below = sum.input_tokens > total.input_tokens
        || sum.output_tokens > total.output_tokens
        || sum.cache_read_tokens > total.cache_read_tokens
        || sum.cache_writes_or_zero() > total.cache_writes_or_zero();
    below.then(|| Usage {
        input_tokens: total.input_tokens.max(sum.input_tokens),
        output_tokens: total.output_tokens.max(sum.output_tokens),
        cache_read_tokens: total.cache_read_tokens.max(sum.cache_read_tokens),
        cache_write_tokens: match (total.cache_write_tokens, sum.cache_write_tokens) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        },
    })
}

/// When a harness's stream reports what the budgets count (until harness@0.2.0's
/// `capabilities` declare it per component): `None` for a harness this host does not know.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reporting {
    /// Where the stream reports cost: `None` = nowhere (`max_usd` is refused at load).
    pub cost: Option<ReportedAt>,
    /// Where it reports input tokens.
    pub input: ReportedAt,
    /// Where it reports output tokens.
    pub output: ReportedAt,
}

impl Reporting {
    /// Token budgets, for the parity table.
    pub fn tokens_text(&self) -> String {
        if self.input == self.output {
            self.input.as_str().to_string()
        } else {
            format!(
                "input {}; output {}",
                self.input.as_str(),
                self.output.as_str()
            )
        }
    }
}

/// Where in the stream a figure comes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReportedAt {
    /// With every model call: the budget stops the run between calls.
    EachCall,
    /// Only in the CLI's final result: the budget is checked when the run ends.
    FinalResult,
}

impl ReportedAt {
    /// For the parity table.
    pub fn as_str(self) -> &'static str {
        match self {
            ReportedAt::EachCall => "live, between model calls",
            ReportedAt::FinalResult => {
                "at the end (the stream reports it only in its final result)"
            }
        }
    }
}

/// What the built-in harnesses' streams report (their reducers' docs; measured against
/// the scripted model): Claude Code input tokens per message, but each message's output
/// count is that of its start (1), so output tokens and cost come in its result; Codex and
/// Gemini CLI usage only in their final totals and no cost; OpenCode, its fork Kilo and Pi
/// usage and cost per step / message; Qwen Code usage per call (each reply's last line)
/// and no cost; Letta Code usage per call (`usage_statistics`) and no cost; Cline usage per
/// call and its cost in its final `run_result`; Copilot
/// usage only in its usage file, read after it exits (its final result) and no cost;
/// Continue usage per call, but only in its session file, read after it exits, and no
/// cost. grok-cli reports no usage at all ([`REPORTS_NO_USAGE`]): `None` here, and
/// [`refusal`] refuses its token and USD budgets at load.
pub fn reporting(harness: &str) -> Option<Reporting> {
    use ReportedAt::*;
    Some(match harness {
        "claude-code" => Reporting {
            cost: Some(FinalResult),
            input: EachCall,
            output: FinalResult,
        },
        "codex" | "gemini-cli" | "copilot" | "continue" => Reporting {
            cost: None,
            input: FinalResult,
            output: FinalResult,
        },
        "cline" => Reporting {
            cost: Some(FinalResult),
            input: EachCall,
            output: EachCall,
        },
        "qwen-code" => Reporting {
            cost: None,
            input: EachCall,
            output: EachCall,
        },
        // Letta Code: each request's `usage_statistics`, no cost.
        "letta" => Reporting {
            cost: None,
            input: EachCall,
            output: EachCall,
        },
        "opencode" | "kilo" | "pi" => Reporting {
            cost: Some(EachCall),
            input: EachCall,
            output: EachCall,
        },
        _ => return None,
    })
}

/// The built-in harnesses whose CLI reports no token usage at all (grok-cli's headless
/// output carries none): a token budget could never be found over, so it is refused.
pub const REPORTS_NO_USAGE: &[&str] = &["grok-cli"];

/// Why `harness` cannot enforce these budgets, if it cannot (coder_eval's newer rule:
/// refused, not silently skipped): a token budget (`max_input_tokens`,
/// `max_output_tokens`, `max_total_tokens`) on a harness in [`REPORTS_NO_USAGE`], or
/// `max_usd` on a stream that carries no cost. The reason starts with the field
/// (`run_limits.NAME`), which the caller places at its FILE:LINE:COL.
pub fn refusal(harness: &str, budgets: &Budgets) -> Option<String> {
    if REPORTS_NO_USAGE.contains(&harness) {
        let tokens = [
            ("max_input_tokens", budgets.max_input_tokens),
            ("max_output_tokens", budgets.max_output_tokens),
            ("max_total_tokens", budgets.max_total_tokens),
        ];
        if let Some((name, _)) = tokens.iter().find(|(_, v)| v.is_some()) {
            return Some(format!(
                "run_limits.{name} needs a stream that reports token usage, and {harness}'s \
                 reports none: the budget could never be enforced; drop it (turn_timeout and \
                 max_turns still bound the run)"
            ));
        }
        if budgets.max_usd.is_some() {
            return Some(format!(
                "run_limits.max_usd needs a stream that reports cost, and {harness}'s reports \
                 neither cost nor tokens; drop max_usd"
            ));
        }
        return None;
    }
    budgets.max_usd?;
    match reporting(harness) {
        Some(Reporting { cost: Some(_), .. }) => None,
        Some(_) => Some(format!(
            "run_limits.max_usd needs a stream that reports cost, and {harness}'s reports none \
             (dollars are never estimated from tokens); drop max_usd or budget tokens instead"
        )),
        None => Some(format!(
            "run_limits.max_usd: this host does not know whether {harness}'s stream reports cost"
        )),
    }
}

/// The tool calls that count toward the soft budgets: those that ran. A call the CLI
/// refused or could not run (`denied`) or that never ended (`interrupted`: the host
/// stopped the CLI as it started) did no work, and counting it would make the same run's
/// verdict differ by CLI (Claude Code streams the call it was stopped at, Pi does not).
pub(crate) fn tool_calls_that_ran(calls: &[crate::results::ToolCallRecord]) -> u32 {
    use crate::results::ToolOutcome;
    calls
        .iter()
        .filter(|c| !matches!(c.status, ToolOutcome::Denied | ToolOutcome::Interrupted))
        .count() as u32
}

/// The soft budgets: over them is a warning and a badge, never a stop.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct SoftBudgets {
    /// coder_eval's visible turns: one per tool call that ran, plus one for the final
    /// reply (not model calls, which the summary line calls "turns").
    pub expected_turns: Option<u32>,
    /// Tool calls that ran ([`tool_calls_that_ran`]; sub-agents' included).
    pub expected_tool_calls: Option<u32>,
}

impl SoftBudgets {
    /// The warnings for a run with `tool_calls` tool calls and a final reply or not.
    pub(crate) fn check(&self, tool_calls: u32, final_reply: bool) -> Vec<SoftBudgetWarning> {
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
