//! Who owns time and limits: the task's run limits, the caps the collector counts, the
//! turn's deadline, and every grace period and timeout of the host, each named with why
//! it has its value.
//!
//! A limit takes these shapes, all made here from [`RunLimitsSpec`] (the task file's
//! `run_limits:`): [`Caps`] (counted by the collector, also read back from a recording's
//! header), the harness's [`RunLimits`] (passed to a CLI that enforces some natively),
//! the deadline of a turn ([`RunLimitsSpec::deadline`]) and the [`LimitsRecord`] of
//! `task.json`. How the host stops what it starts is one [`StopPolicy`].
//!
//! The rooms: this file holds `run_limits:` and the shapes made from it; `stop` the turn's
//! deadlines and every grace period and timeout of the host; `duration` how a task file
//! writes a duration; [`budget`] the token and USD budgets.

pub mod budget;
mod duration;
mod stop;
#[cfg(test)]
mod tests;

pub(crate) use duration::MAX_DURATION_SECS;
pub(crate) use duration::{task_timeout, turn_timeout};
pub(crate) use stop::{
    CLI_VERSION_TIMEOUT, DOCKER_REMOVE_TIMEOUT, Deadlines, GATEWAY_CONNECT_TIMEOUT,
    GATEWAY_SHUTDOWN_GRACE, IMPORT_CHECK_TIMEOUT_SECS, INSTALL_TIMEOUT, JUDGE_REQUEST_TIMEOUT,
    OTLP_CONNECT_TIMEOUT, OTLP_EXPORT_TIMEOUT, PYLINT_TIMEOUT_SECS, PYTEST_TIMEOUT_SECS,
    REFERENCE_COMPARISON_TIMEOUT,
};
pub use stop::{EXIT_WRITE_GRACE, ISOLATE_FORWARD_AFTER, VIEW_SHUTDOWN_GRACE};
pub(crate) use stop::{RUN_COMMAND_TIMEOUT_SECS, StopPolicy};

use crate::results::{LimitsRecord, StopReason};
use harness_kit::{LimitKind, RunLimits};
use serde::{Deserialize, Deserializer};
use std::time::{Duration, Instant};

/// `run_limits:`. Durations in the file are seconds, or strings with a unit. The token
/// and USD budgets, the soft budgets and the early-stop settings carry coder_eval's names
/// and defaults (see [`budget`] and `turn::early_stop`); a budget of zero or less is an
/// error naming its field.
#[derive(Debug, Clone, Copy, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunLimitsSpec {
    /// Main-thread model calls: call N+1 beginning stops the turn. At least 1.
    #[serde(default, deserialize_with = "max_turns")]
    pub max_turns: Option<u32>,
    /// Resolved tool calls: tool call N+1 starting stops the turn. At least 1.
    #[serde(default, deserialize_with = "max_tool_calls")]
    pub max_tool_calls: Option<u32>,
    /// How long the turn may run, from the CLI's spawn.
    #[serde(default, deserialize_with = "turn_timeout")]
    pub turn_timeout: Option<Duration>,
    /// How long the whole task may run (setup and launch included), from its start.
    #[serde(default, deserialize_with = "task_timeout")]
    pub task_timeout: Option<Duration>,
    /// Input tokens allowed over the run (see [`budget::Budgets`]).
    #[serde(default, deserialize_with = "max_input_tokens")]
    pub max_input_tokens: Option<u64>,
    /// Output tokens allowed over the run.
    #[serde(default, deserialize_with = "max_output_tokens")]
    pub max_output_tokens: Option<u64>,
    /// Input plus output tokens allowed over the run.
    #[serde(default, deserialize_with = "max_total_tokens")]
    pub max_total_tokens: Option<u64>,
    /// USD allowed over the run; needs a harness whose stream reports cost.
    #[serde(default, deserialize_with = "max_usd")]
    pub max_usd: Option<f64>,
    /// Cache reads count toward the input and total budgets (default false).
    #[serde(default)]
    pub count_cached_input: bool,
    /// Cache writes count toward the input and total budgets (default false).
    #[serde(default)]
    pub count_cache_creation: bool,
    /// Soft budget: visible turns (tool calls, plus one for the final reply); over it is a
    /// warning and a badge, never a stop.
    #[serde(default, deserialize_with = "expected_turns")]
    pub expected_turns: Option<u32>,
    /// Soft budget: tool calls; over it is a warning and a badge, never a stop.
    #[serde(default, deserialize_with = "expected_tool_calls")]
    pub expected_tool_calls: Option<u32>,
    /// `false`: the kill switch, every criterion's `stop_early` block is disarmed for this
    /// run. `true`: the older master arm, which arms the criteria that say `stop_when:`.
    /// Absent: the `stop_early` blocks decide.
    #[serde(default)]
    pub stop_early: Option<bool>,
    /// The weighted bar of early stop (0 < t ≤ 1; default 1.0): the triggers' bound, and
    /// the gate of a run an early stop cut short (over the armed criteria only).
    #[serde(default, deserialize_with = "gate_threshold")]
    pub stop_early_gate_threshold: Option<f64>,
}

/// The default `stop_early_gate_threshold` (strict AND over the armed criteria).
pub(crate) const DEFAULT_GATE_THRESHOLD: f64 = 1.0;

fn at_least_one<'de, D: Deserializer<'de>, T: TryFrom<u64>>(
    d: D,
    field: &str,
    unit: &str,
) -> Result<Option<T>, D::Error> {
    // Read as any YAML value first: `max_output_tokens: abc` is told in the field's own
    // words (a whole number of tokens), not serde's "expected f64".
    let Some(value) = Option::<serde_yaml_ng::Value>::deserialize(d)? else {
        return Ok(None);
    };
    let Some(n) = value.as_f64() else {
        let shown = serde_yaml_ng::to_string(&value)
            .map(|s| s.trim().to_string())
            .unwrap_or_default();
        return Err(serde::de::Error::custom(format!(
            "{field} must be a whole number of {unit}, at least 1; got `{shown}`"
        )));
    };
    if !(n.is_finite() && n >= 1.0 && n.fract() == 0.0) {
        return Err(serde::de::Error::custom(format!(
            "{field} must be a whole number of {unit}, at least 1; got {n}"
        )));
    }
    T::try_from(n as u64)
        .map(Some)
        .map_err(|_| serde::de::Error::custom(format!("{field} {n} is too large")))
}

fn max_input_tokens<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    at_least_one(d, "max_input_tokens", "tokens")
}
fn max_output_tokens<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    at_least_one(d, "max_output_tokens", "tokens")
}
fn max_total_tokens<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    at_least_one(d, "max_total_tokens", "tokens")
}
fn max_turns<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u32>, D::Error> {
    at_least_one(d, "max_turns", "model calls")
}
fn max_tool_calls<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u32>, D::Error> {
    at_least_one(d, "max_tool_calls", "tool calls")
}
fn expected_turns<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u32>, D::Error> {
    at_least_one(d, "expected_turns", "turns")
}
fn expected_tool_calls<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u32>, D::Error> {
    at_least_one(d, "expected_tool_calls", "tool calls")
}

fn max_usd<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    let Some(usd) = Option::<f64>::deserialize(d)? else {
        return Ok(None);
    };
    if !(usd.is_finite() && usd > 0.0) {
        return Err(serde::de::Error::custom(format!(
            "max_usd must be a positive amount of USD, got {usd}"
        )));
    }
    Ok(Some(usd))
}

fn gate_threshold<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    let Some(t) = Option::<f64>::deserialize(d)? else {
        return Ok(None);
    };
    if !(t.is_finite() && t > 0.0 && t <= 1.0) {
        return Err(serde::de::Error::custom(format!(
            "stop_early_gate_threshold must be above 0 and at most 1, got {t} (0 would pass \
             the armed gate whatever the armed criteria decide)"
        )));
    }
    Ok(Some(t))
}

impl RunLimitsSpec {
    /// The caps the collector enforces.
    pub fn caps(&self) -> Caps {
        Caps {
            max_turns: self.max_turns,
            max_tool_calls: self.max_tool_calls,
        }
    }

    /// The limits told to the CLI: all of them when `native` (the CLI enforces those it
    /// can, the host keeps its backstop for every one), none otherwise (the host's
    /// backstop alone).
    pub(crate) fn to_cli(self, native: bool) -> RunLimits {
        if !native {
            return RunLimits::default();
        }
        RunLimits {
            max_turns: self.max_turns,
            max_tool_calls: self.max_tool_calls,
            turn_timeout_ms: self.turn_timeout.map(|d| d.as_millis() as u64),
            budgets: harness_kit::BudgetLimits {
                max_input_tokens: self.max_input_tokens,
                max_output_tokens: self.max_output_tokens,
                max_total_tokens: self.max_total_tokens,
                max_usd: self.max_usd,
                count_cached_input: self.count_cached_input,
                count_cache_creation: self.count_cache_creation,
            },
        }
    }

    /// The token and USD budgets.
    pub fn budgets(&self) -> budget::Budgets {
        budget::Budgets {
            max_input_tokens: self.max_input_tokens,
            max_output_tokens: self.max_output_tokens,
            max_total_tokens: self.max_total_tokens,
            max_usd: self.max_usd,
            count_cached_input: self.count_cached_input,
            count_cache_creation: self.count_cache_creation,
        }
    }

    /// The soft budgets.
    pub(crate) fn soft_budgets(&self) -> budget::SoftBudgets {
        budget::SoftBudgets {
            expected_turns: self.expected_turns,
            expected_tool_calls: self.expected_tool_calls,
        }
    }

    /// `stop_early_gate_threshold`, or its default.
    pub fn gate_threshold(&self) -> f64 {
        self.stop_early_gate_threshold
            .unwrap_or(DEFAULT_GATE_THRESHOLD)
    }

    /// Whether the task sets the limit of `kind`.
    pub(crate) fn is_set(&self, kind: LimitKind) -> bool {
        match kind {
            LimitKind::MaxTurns => self.max_turns.is_some(),
            LimitKind::MaxToolCalls => self.max_tool_calls.is_some(),
            LimitKind::TurnTimeout => self.turn_timeout.is_some(),
            LimitKind::MaxInputTokens => self.max_input_tokens.is_some(),
            LimitKind::MaxOutputTokens => self.max_output_tokens.is_some(),
            LimitKind::MaxTotalTokens => self.max_total_tokens.is_some(),
            LimitKind::MaxUsd => self.max_usd.is_some(),
        }
    }

    /// The limits as `task.json` records them; `native` = the ones the CLI enforced itself.
    pub fn record(&self, native: &[LimitKind]) -> LimitsRecord {
        LimitsRecord {
            max_turns: self.max_turns,
            max_tool_calls: self.max_tool_calls,
            turn_timeout_ms: self.turn_timeout.map(|d| d.as_millis() as u64),
            task_timeout_ms: self.task_timeout.map(|d| d.as_millis() as u64),
            native: native.iter().map(|l| limit_name(*l).to_string()).collect(),
            max_input_tokens: self.max_input_tokens,
            max_output_tokens: self.max_output_tokens,
            max_total_tokens: self.max_total_tokens,
            max_usd: self.max_usd,
            count_cached_input: self.count_cached_input,
            count_cache_creation: self.count_cache_creation,
            expected_turns: self.expected_turns,
            expected_tool_calls: self.expected_tool_calls,
            stop_early: self.stop_early,
            stop_early_gate_threshold: self.stop_early_gate_threshold,
        }
    }

    /// When the turn that starts at `turn_start`, in the task that started at
    /// `task_start`, must end, and why: the earlier of its turn and task timeouts (the turn
    /// timeout on a tie).
    pub(crate) fn deadline(
        &self,
        task_start: Instant,
        turn_start: Instant,
    ) -> Option<(Instant, StopReason)> {
        // A deadline past what an `Instant` can hold is no deadline (the loader refuses
        // durations over MAX_DURATION_SECS; this keeps a limit built in code from panicking).
        let turn = self
            .turn_timeout
            .and_then(|d| turn_start.checked_add(d))
            .map(|at| (at, StopReason::TurnTimeout));
        let task = self
            .task_timeout
            .and_then(|d| task_start.checked_add(d))
            .map(|at| (at, StopReason::TaskTimeout));
        match (turn, task) {
            (Some(a), Some(b)) => Some(if a.0 <= b.0 { a } else { b }),
            (a, b) => a.or(b),
        }
    }
}

/// The WIT name of a limit, as task files spell it.
pub fn limit_name(kind: LimitKind) -> &'static str {
    match kind {
        LimitKind::MaxTurns => "max_turns",
        LimitKind::MaxToolCalls => "max_tool_calls",
        LimitKind::TurnTimeout => "turn_timeout",
        LimitKind::MaxInputTokens => "max_input_tokens",
        LimitKind::MaxOutputTokens => "max_output_tokens",
        LimitKind::MaxTotalTokens => "max_total_tokens",
        LimitKind::MaxUsd => "max_usd",
    }
}

/// The run limits the collector enforces (see `turn::collect`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Caps {
    /// Main-thread model calls allowed; call N+1 fires [`StopReason::MaxTurns`].
    pub max_turns: Option<u32>,
    /// Tool calls allowed; call N+1 fires [`StopReason::MaxToolCalls`].
    pub max_tool_calls: Option<u32>,
}

impl Caps {
    /// The caps the collector enforces from the CLI's stream. With the model gateway in
    /// front (`gateway`), `max_turns` is the gateway's alone: it counts the main-thread
    /// requests it sees and holds call N+1, so a stream that shows one reply's parallel
    /// tool calls as separate replies (Codex) cannot fire the cap inside that reply and
    /// leave a tool that ran out of the record. `max_tool_calls` stays the stream's.
    pub(crate) fn on_stream(self, gateway: bool) -> Caps {
        Caps {
            max_turns: self.max_turns.filter(|_| !gateway),
            ..self
        }
    }
}
