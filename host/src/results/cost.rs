//! `cost.json`: what one task cost, beside its `task.json`
//! (`DIR/<task_id>/<harness>/cost.json`), and the summary of it that `task.json` and
//! `run.json` carry ([`CostSummary`]). Version [`COST_RECORD_VERSION`] (`cost_version`).
//!
//! ```json
//! {
//!   "cost_version": 1,
//!   "task_id": "fix-tests", "harness": "claude-code",
//!   "total_cost_usd": 0.019305,            // USD over every attempt, or null
//!   "usage": {"input_tokens": 6, ...},     // tokens over every attempt, or null
//!   "cost_status": "complete",             // complete | partial | not_reported | ambiguous
//!   "usage_status": "complete",
//!   "reasons": [],                         // why a status is not complete, for people
//!   "attempts": [ { ... one per launch of the CLI, see CostAttempt ... } ]
//! }
//! ```
//!
//! Rules:
//! - **Dollars are never estimated from tokens**: a CLI that reports no cost gives
//!   `null` and `not_reported`.
//! - **Absent is not zero**: a figure nobody reported is `null`, never 0.
//! - **A resumed session is not counted twice**: each attempt's figures are what that
//!   process spent, its cost read through the harness's declared totals scope
//!   (harness@0.2.0 `totals`: per call, per process, or the session's running total) and
//!   its usage through its own (`usage-totals`: Claude Code from 2.1.277 restores the
//!   session's cost on resume but not its usage); a running total whose earlier part is
//!   unknown is `ambiguous` (`null`). `turn.usage`, `turn.cost_usd` and `turn.totals` in
//!   `task.json` are the same figures for the last launch, read the same way.
//! - The statuses of a sum: any part `ambiguous` → `ambiguous` (`null`); every part
//!   `not_reported` → `not_reported` (`null`); every part `complete` → `complete`;
//!   otherwise `partial`, and the figure is the sum of what was reported (a lower bound).
//! - Written atomically (temporary file, then rename); writing it never changes the
//!   task's outcome (a failure to write is a warning on stderr).
//!
//! - With `run --gateway --price-table FILE`, `gateway_cost` (each attempt's and the
//!   sum) is the gateway's own figure: the APIs' reported usage times the table's prices,
//!   `cost_source: price_table` naming the file, `partial` when a billed call could not
//!   be priced. The figures above stay the CLI's; without a table there is none.
//!
//! History: 1: first version; `attempts[].usage_totals_scope` added later (optional);
//! `gateway_cost` (top level and per attempt) added later (optional).

use super::turn::{CliResult, TotalsStatus, TurnRecord};
use harness_kit::{TotalsScope, UnreportedKind, Usage};
use serde::{Deserialize, Serialize};

/// The version of `cost.json`'s shape.
pub const COST_RECORD_VERSION: u32 = 1;

/// `cost.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CostRecord {
    /// [`COST_RECORD_VERSION`].
    pub cost_version: u32,
    pub task_id: String,
    pub harness: String,
    /// USD over every attempt, rounded to 1e-10 (a sum of reported decimals without float
    /// noise); `null` when `cost_status` is `not_reported` or `ambiguous`, or `partial`
    /// with no figure at all (the host stopped the CLI before it reported cost).
    pub total_cost_usd: Option<f64>,
    /// Tokens over every attempt; `null` when `usage_status` is `not_reported` or
    /// `ambiguous`.
    pub usage: Option<Usage>,
    pub cost_status: TotalsStatus,
    pub usage_status: TotalsStatus,
    /// Why a status is not `complete` (each attempt's reasons, prefixed by its number).
    pub reasons: Vec<String>,
    /// One per launch of the CLI, in order.
    pub attempts: Vec<CostAttempt>,
    /// With `--price-table`: the gateway's priced cost over the attempts that have one
    /// (their `gateway_cost` summed, statuses combined); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gateway_cost: Option<GatewayCost>,
}

/// The model gateway's cost of one attempt, or of a task: its calls' API-reported usage
/// times the prices of a user-supplied price table (`run --gateway --price-table`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GatewayCost {
    /// USD, rounded to 1e-10; a lower bound when `cost_status` is `partial`; `null` when
    /// no billed call could be priced.
    pub cost_usd: Option<f64>,
    /// Always `price_table`: the gateway never estimates a cost without one.
    pub cost_source: String,
    /// The table's file, as given to `--price-table`.
    pub price_table: String,
    /// `complete`, `partial` (some billed call unpriced: its `model_call` record's
    /// `unpriced` says why) or `not_reported` (none priced).
    pub cost_status: TotalsStatus,
}

impl GatewayCost {
    /// The gateway's cost of `turn`, when its calls were priced with a table.
    pub fn of(turn: &TurnRecord) -> Option<GatewayCost> {
        let g = turn.gateway.as_ref()?;
        let price_table = g.price_table.clone()?;
        let cost_status = match (g.cost_usd, g.cost_partial) {
            (None, _) => TotalsStatus::NotReported,
            (Some(_), true) => TotalsStatus::Partial,
            (Some(_), false) => TotalsStatus::Complete,
        };
        Some(GatewayCost {
            cost_usd: g.cost_usd,
            cost_source: g.cost_source.clone(),
            price_table,
            cost_status,
        })
    }
}

/// One launch of the CLI.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CostAttempt {
    /// 1-based.
    pub attempt: u32,
    /// The CLI's session id, as its stream reported it.
    pub session_id: Option<String>,
    /// Whether this launch resumed an earlier session.
    pub resumed: bool,
    /// What the CLI was launched with.
    pub settings: AttemptSettings,
    /// Seconds the agent ran (the turn's wall clock: spawn to exit or stop); `null` when
    /// it never ran.
    pub agent_seconds: Option<f64>,
    /// Why the CLI could not be launched or run, when it could not.
    pub launcher_error: Option<String>,
    /// How the CLI's reported cost accumulates (harness@0.2.0 `totals`), when asked.
    pub totals_scope: Option<TotalsScope>,
    /// How the CLI's reported token usage accumulates (harness@0.2.0 `usage-totals`),
    /// when asked; absent in records written before it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage_totals_scope: Option<TotalsScope>,
    /// USD this launch spent.
    pub cost_usd: Option<f64>,
    /// Tokens this launch used.
    pub usage: Option<Usage>,
    pub cost_status: TotalsStatus,
    pub usage_status: TotalsStatus,
    /// Why a status is not `complete`.
    pub reasons: Vec<String>,
    /// With `--price-table`: the gateway's priced cost of this launch ([`GatewayCost`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gateway_cost: Option<GatewayCost>,
    /// The figures exactly as the CLI reported them.
    pub provider_reports: ProviderReports,
}

/// The settings of one launch.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AttemptSettings {
    /// The model the task asked for.
    pub requested_model: Option<String>,
    /// The model the CLI reported.
    pub model: Option<String>,
    /// The CLI's version (`--version`).
    pub cli_version: Option<String>,
    /// The exact argv.
    pub argv: Vec<String>,
    pub max_turns: Option<u32>,
    pub max_tool_calls: Option<u32>,
    /// The launch's timeout, ms (a time-budget session's: the time left of the budget
    /// when it began).
    pub timeout_ms: Option<u64>,
}

/// The cost and usage figures as the CLI reported them, before any reading.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ProviderReports {
    /// The final result's figures (a running total, per `totals_scope`).
    pub cli_result: Option<ReportedTotals>,
    /// Each assistant message's figures, for the messages that carried any.
    pub messages: Vec<ReportedMessage>,
}

/// A final result's figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReportedTotals {
    pub cost_usd: Option<f64>,
    pub usage: Option<Usage>,
    pub num_turns: Option<u32>,
    /// ms, by the CLI's clock.
    pub duration_ms: Option<u64>,
}

/// One message's figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReportedMessage {
    pub message_id: String,
    pub usage: Option<Usage>,
    pub cost_usd: Option<f64>,
}

/// The summary of `cost.json` that `task.json` (`cost`) and `run.json` rows carry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CostSummary {
    pub total_cost_usd: Option<f64>,
    pub usage: Option<Usage>,
    pub cost_status: TotalsStatus,
    pub usage_status: TotalsStatus,
    pub attempts: usize,
}

impl CostAttempt {
    /// The attempt numbered `attempt` that ran as `turn` (`None`: it never ran, then
    /// `launcher_error` says why). `turn.cost_usd` and `turn.usage` are already this
    /// process's figures (the collector read them through `totals_scope`).
    pub fn new(
        attempt: u32,
        turn: Option<&TurnRecord>,
        settings: AttemptSettings,
        totals_scope: Option<TotalsScope>,
        launcher_error: Option<String>,
    ) -> CostAttempt {
        let Some(turn) = turn else {
            let reason = format!(
                "the CLI did not run: {}",
                launcher_error.as_deref().unwrap_or("no turn")
            );
            return CostAttempt {
                attempt,
                session_id: None,
                resumed: false,
                settings,
                agent_seconds: None,
                launcher_error,
                totals_scope,
                usage_totals_scope: None,
                cost_usd: None,
                usage: None,
                cost_status: TotalsStatus::NotReported,
                usage_status: TotalsStatus::NotReported,
                reasons: vec![reason],
                gateway_cost: None,
                provider_reports: ProviderReports::default(),
            };
        };
        let mut reasons: Vec<String> = turn
            .unreported
            .iter()
            .map(|u| {
                let what = match u.kind {
                    UnreportedKind::Usage => "usage",
                    UnreportedKind::Cost => "cost",
                    UnreportedKind::SubagentWork => "sub-agent work",
                };
                match &u.call_id {
                    Some(id) => format!("unreported {what} (`{id}`): {}", u.reason),
                    None => format!("unreported {what}: {}", u.reason),
                }
            })
            .collect();
        let partial = !turn.unreported.is_empty();
        let (cost_usd, cost_status) = match (turn.cost_usd, turn.totals) {
            (None, TotalsStatus::Ambiguous) => {
                reasons.extend(
                    turn.diagnostics
                        .iter()
                        .filter(|d| d.kind == "cumulative_total")
                        .map(|d| d.message.clone()),
                );
                (None, TotalsStatus::Ambiguous)
            }
            (None, _) => {
                reasons.push("the CLI reported no cost (never estimated from tokens)".into());
                (None, TotalsStatus::NotReported)
            }
            (Some(usd), _) if partial => (Some(usd), TotalsStatus::Partial),
            (Some(usd), _) => (Some(usd), TotalsStatus::Complete),
        };
        let (usage, usage_status) = match turn.usage_source.as_str() {
            "none" => {
                reasons.push("the CLI reported no token usage".into());
                (None, TotalsStatus::NotReported)
            }
            "cli_result_session_total" => {
                reasons.push(
                    "a resumed launch reports the session's running token usage, and what \
                     its earlier launches used is not known: not counted"
                        .into(),
                );
                (None, TotalsStatus::Ambiguous)
            }
            _ if partial => (turn.usage, TotalsStatus::Partial),
            _ => (turn.usage, TotalsStatus::Complete),
        };
        CostAttempt {
            attempt,
            session_id: turn.session_id.clone(),
            resumed: false,
            settings: AttemptSettings {
                model: turn.model.clone(),
                ..settings
            },
            agent_seconds: Some(turn.timing.turn_duration_ms as f64 / 1000.0),
            launcher_error,
            totals_scope,
            usage_totals_scope: None,
            cost_usd,
            usage,
            cost_status,
            usage_status,
            reasons,
            gateway_cost: GatewayCost::of(turn),
            provider_reports: ProviderReports {
                cli_result: turn.cli_result.as_ref().map(reported),
                messages: turn
                    .messages
                    .iter()
                    .filter(|m| m.usage.is_some() || m.cost_usd.is_some())
                    .map(|m| ReportedMessage {
                        message_id: m.message_id.clone(),
                        usage: m.usage,
                        cost_usd: m.cost_usd,
                    })
                    .collect(),
            },
        }
    }
}

fn reported(r: &CliResult) -> ReportedTotals {
    ReportedTotals {
        cost_usd: r.cost_usd,
        usage: r.usage,
        num_turns: r.num_turns,
        duration_ms: r.duration_ms,
    }
}

impl CostRecord {
    /// The record of a task whose CLI was launched as `attempts` (in order): the totals
    /// are their sums, with the statuses combined (see the module's rules).
    pub fn new(task_id: &str, harness: &str, attempts: Vec<CostAttempt>) -> CostRecord {
        let cost_status = TotalsStatus::combine(attempts.iter().map(|a| a.cost_status));
        let usage_status = TotalsStatus::combine(attempts.iter().map(|a| a.usage_status));
        let known = |status: TotalsStatus| {
            !matches!(status, TotalsStatus::NotReported | TotalsStatus::Ambiguous)
        };
        // A partial cost none of whose attempts has a figure stays unknown, never 0.
        let any_cost = attempts.iter().any(|a| a.cost_usd.is_some());
        let total_cost_usd = (known(cost_status) && any_cost).then(|| {
            let sum: f64 = attempts.iter().filter_map(|a| a.cost_usd).sum();
            (sum * 1e10).round() / 1e10
        });
        // Likewise a partial usage none of whose attempts has a figure (the host's stop cut
        // off a CLI that reports usage only at the end): unknown, never 0.
        let any_usage = attempts.iter().any(|a| a.usage.is_some());
        let usage = (known(usage_status) && any_usage).then(|| {
            attempts
                .iter()
                .filter_map(|a| a.usage)
                .fold(Usage::default(), |t, u| t.saturating_add(&u))
        });
        let reasons = attempts
            .iter()
            .flat_map(|a| {
                a.reasons
                    .iter()
                    .map(move |r| format!("attempt {}: {r}", a.attempt))
            })
            .collect();
        let priced: Vec<&GatewayCost> = attempts
            .iter()
            .filter_map(|a| a.gateway_cost.as_ref())
            .collect();
        let gateway_cost = priced.first().map(|first| {
            let any = priced.iter().any(|g| g.cost_usd.is_some());
            GatewayCost {
                cost_usd: any.then(|| {
                    let sum: f64 = priced.iter().filter_map(|g| g.cost_usd).sum();
                    (sum * 1e10).round() / 1e10
                }),
                cost_source: first.cost_source.clone(),
                price_table: first.price_table.clone(),
                cost_status: TotalsStatus::combine(priced.iter().map(|g| g.cost_status)),
            }
        });
        CostRecord {
            cost_version: COST_RECORD_VERSION,
            task_id: task_id.to_string(),
            harness: harness.to_string(),
            total_cost_usd,
            usage,
            cost_status,
            usage_status,
            reasons,
            attempts,
            gateway_cost,
        }
    }

    /// What `task.json` and `run.json` carry of it.
    pub fn summary(&self) -> CostSummary {
        CostSummary {
            total_cost_usd: self.total_cost_usd,
            usage: self.usage,
            cost_status: self.cost_status,
            usage_status: self.usage_status,
            attempts: self.attempts.len(),
        }
    }
}

#[cfg(test)]
mod tests;
