//! Per-attempt figures from the totals a CLI reports. Each harness component declares,
//! per CLI version, how its final result's cost ([`TotalsBasis::scope`], harness@0.2.0
//! `totals`) and its usage ([`TotalsBasis::usage_scope`], `usage-totals`) accumulate
//! ([`TotalsScope`]); the host knows whether the process it ran resumed a session
//! ([`Launch`]) and what the session's earlier processes spent. The two figures are read
//! the same way, each through its own scope (one CLI can keep them apart: Claude Code
//! from 2.1.277 restores the session's cost on resume, not its usage):
//!
//! | scope | launch | this attempt's figure |
//! |---|---|---|
//! | per call, per process | any | as reported (per call: the host sums the messages) |
//! | per session | a fresh session | as reported |
//! | per session | resumed, earlier spend known | reported − earlier spend |
//! | per session | resumed, earlier spend unknown | ambiguous: cost `null` (the messages' own costs when they carry them); usage the messages' when they carry it, else the reported running total labelled `cli_result_session_total` (`cost.json`: `null`, `ambiguous`) |
//!
//! Dollars are never estimated from tokens.

use super::Collector;
use crate::results::{DiagnosticRecord, TotalsStatus};
use crate::turn::timing::ms;
use harness_kit::{TotalsScope, Usage};

/// Whether the CLI process started a session or resumed one.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) enum Launch {
    /// Not known (a plain capture): taken as a fresh session.
    #[default]
    Unknown,
    /// The process started a new session.
    Fresh,
    /// The process resumed a session; what the session had spent before it, when known.
    Resumed {
        earlier_cost_usd: Option<f64>,
        earlier_usage: Option<Usage>,
    },
    /// A recording made before its header said: the process resumed a session when its
    /// argv names the session id the stream reports (the host passed no session id to a
    /// fresh process then); the earlier spend is unknown.
    FromArgv(Vec<String>),
}

/// How to read the CLI's reported totals for this turn.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TotalsBasis {
    /// How the reported cost accumulates (harness@0.2.0 `totals`).
    pub(crate) scope: TotalsScope,
    /// How the reported usage accumulates (harness@0.2.0 `usage-totals`).
    pub(crate) usage_scope: TotalsScope,
    pub(crate) launch: Launch,
}

impl Default for TotalsBasis {
    /// Per process, as the host read every CLI before harness@0.2.0.
    fn default() -> TotalsBasis {
        TotalsBasis {
            scope: TotalsScope::PerProcess,
            usage_scope: TotalsScope::PerProcess,
            launch: Launch::Unknown,
        }
    }
}

/// The figures of this attempt.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct AttemptTotals {
    /// `None` when no usage was reported (`usage_source` `none`).
    pub(crate) usage: Option<Usage>,
    /// `cli_result`, `messages`, `cli_result_less_earlier`, `cli_result_session_total`
    /// (a running total whose earlier part is unknown: ambiguous) or `none`.
    pub(crate) usage_source: &'static str,
    pub(crate) cost_usd: Option<f64>,
    /// `Ambiguous` when a reported running total (cost or usage) could not be attributed.
    pub(crate) status: TotalsStatus,
    pub(crate) note: Option<String>,
}

/// What a reported running total includes beyond this process.
enum Earlier<T> {
    Nothing,
    Known(T),
    Unknown,
}

impl TotalsBasis {
    /// What a figure read through `scope` includes of the session's earlier processes;
    /// `known` picks that figure's earlier spend from a resumed launch.
    fn earlier<T: Copy>(
        &self,
        scope: TotalsScope,
        session_id: Option<&str>,
        known: impl Fn(&Launch) -> Option<T>,
    ) -> Earlier<T> {
        if scope != TotalsScope::PerSession {
            return Earlier::Nothing;
        }
        match &self.launch {
            Launch::Unknown | Launch::Fresh => Earlier::Nothing,
            launch @ Launch::Resumed { .. } => match known(launch) {
                Some(before) => Earlier::Known(before),
                None => Earlier::Unknown,
            },
            Launch::FromArgv(argv) => match session_id {
                Some(id) if argv.iter().any(|a| a == id) => Earlier::Unknown,
                _ => Earlier::Nothing,
            },
        }
    }
}

impl Collector {
    /// How this turn's reported totals accumulate (the harness's declared scopes for the
    /// CLI's version) and whether the process resumed a session.
    pub(crate) fn totals_basis(&mut self, basis: TotalsBasis) {
        self.totals = basis;
    }

    /// This attempt's usage and cost (see the module's table).
    pub(in crate::turn) fn attempt_totals(&self) -> AttemptTotals {
        let reported_usage = self.cli_result.as_ref().and_then(|r| r.usage);
        let reported_cost = self.cli_result.as_ref().and_then(|r| r.cost_usd);
        // Every message's figures, the abandoned attempts' included (spent all the same).
        let spent = self.retries.spent.iter();
        let per_message: Vec<Usage> = (self.messages.iter().map(|m| m.usage))
            .chain(spent.clone().map(|s| s.0))
            .flatten()
            .collect();
        let message_usage = (!per_message.is_empty()).then(|| {
            per_message
                .iter()
                .fold(Usage::default(), |t, u| t.saturating_add(u))
        });
        let costs: Vec<f64> = (self.messages.iter().map(|m| m.cost_usd))
            .chain(spent.map(|s| s.1))
            .flatten()
            .collect();
        let message_cost = (!costs.is_empty()).then(|| costs.iter().sum::<f64>());
        let from_messages = || match message_usage {
            Some(u) => (Some(u), "messages"),
            None => (None, "none"),
        };
        let session_id = self.session.as_ref().and_then(|s| s.session_id.as_deref());
        let basis = &self.totals;
        let mut ambiguous = false;
        let mut notes = Vec::new();

        let earlier_cost = basis.earlier(basis.scope, session_id, |l| match l {
            Launch::Resumed {
                earlier_cost_usd, ..
            } => *earlier_cost_usd,
            _ => None,
        });
        let cost_usd = match earlier_cost {
            Earlier::Nothing => reported_cost.or(message_cost),
            Earlier::Known(before) => {
                let cost_usd = match reported_cost {
                    Some(total) => Some(round_usd((total - before).max(0.0))),
                    None => message_cost,
                };
                if let Some(total) = reported_cost {
                    notes.push(format!(
                        "the CLI reported the session's running total ${total}; this process \
                         spent {} (the session's earlier processes: ${before})",
                        dollars(cost_usd),
                    ));
                }
                cost_usd
            }
            Earlier::Unknown => {
                if let Some(total) = reported_cost {
                    ambiguous |= message_cost.is_none();
                    notes.push(format!(
                        "this process resumed session `{}`, and the CLI reports the \
                         session's running total (${total}), which includes the spend of its \
                         earlier processes; that spend is not known here, so this run's cost \
                         is unknown",
                        session_id.unwrap_or("?")
                    ));
                }
                message_cost
            }
        };

        let earlier_usage = basis.earlier(basis.usage_scope, session_id, |l| match l {
            Launch::Resumed { earlier_usage, .. } => *earlier_usage,
            _ => None,
        });
        let (usage, usage_source) = match (earlier_usage, reported_usage) {
            (_, None) => from_messages(),
            (Earlier::Nothing, Some(u)) => (Some(u), "cli_result"),
            (Earlier::Known(before), Some(u)) => (Some(less(u, before)), "cli_result_less_earlier"),
            (Earlier::Unknown, Some(u)) => match message_usage {
                Some(m) => (Some(m), "messages"),
                None => {
                    ambiguous = true;
                    notes.push(format!(
                        "this process resumed session `{}`, and the CLI reports the \
                         session's running token usage, which includes its earlier \
                         processes' usage; that is not known here, so this run's usage is \
                         unknown (the reported total is kept, labelled \
                         `cli_result_session_total`)",
                        session_id.unwrap_or("?")
                    ));
                    (Some(u), "cli_result_session_total")
                }
            },
        };
        AttemptTotals {
            usage,
            usage_source,
            cost_usd,
            status: if ambiguous {
                TotalsStatus::Ambiguous
            } else {
                TotalsStatus::Complete
            },
            note: (!notes.is_empty()).then(|| notes.join("; ")),
        }
    }
}

/// The diagnostic that explains an attributed or ambiguous running total.
pub(in crate::turn) fn cumulative_note(at_us: u64, note: String) -> DiagnosticRecord {
    DiagnosticRecord {
        line: 0,
        at_ms: ms(at_us),
        kind: "cumulative_total".into(),
        message: note,
        raw: String::new(),
    }
}

/// To 1e-10 USD: a difference of two reported decimals without the float noise.
fn round_usd(usd: f64) -> f64 {
    (usd * 1e10).round() / 1e10
}

fn dollars(usd: Option<f64>) -> String {
    usd.map_or("unknown".into(), |d| format!("${d}"))
}

#[cfg(test)]
#[test]
fn a_sum_of_huge_counts_saturates() {
    // Found by tests/all/fuzz_reducers.rs: an OpenCode line reporting u64::MAX output
    // tokens, summed with another, overflowed (a panic in debug, a wrapped total in
    // release).
    let huge = Usage {
        input_tokens: u64::MAX,
        output_tokens: u64::MAX - 1,
        cache_read_tokens: 7,
        cache_write_tokens: Some(u64::MAX),
    };
    let one = Usage {
        input_tokens: 1,
        output_tokens: 5,
        cache_read_tokens: 1,
        cache_write_tokens: Some(1),
    };
    let sum = huge.saturating_add(&one);
    assert_eq!(sum.input_tokens, u64::MAX);
    assert_eq!(sum.output_tokens, u64::MAX);
    assert_eq!(sum.cache_read_tokens, 8);
    assert_eq!(sum.cache_write_tokens, Some(u64::MAX));
    // A figure no report carried stays unknown; one that some carried is their sum.
    let unknown = Usage {
        cache_write_tokens: None,
        ..one
    };
    assert_eq!(unknown.saturating_add(&unknown).cache_write_tokens, None);
    assert_eq!(unknown.saturating_add(&one).cache_write_tokens, Some(1));
}

fn less(a: Usage, b: Usage) -> Usage {
    Usage {
        input_tokens: a.input_tokens.saturating_sub(b.input_tokens),
        output_tokens: a.output_tokens.saturating_sub(b.output_tokens),
        cache_read_tokens: a.cache_read_tokens.saturating_sub(b.cache_read_tokens),
        cache_write_tokens: match (a.cache_write_tokens, b.cache_write_tokens) {
            (Some(a), Some(b)) => Some(a.saturating_sub(b)),
            (a, _) => a,
        },
    }
}
