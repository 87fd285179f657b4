//! Who owns time and limits: the task's run limits, the caps the collector counts, the
//! turn's deadline, and every grace period and timeout of the host, each named with why
//! it has its value.
//!
//! A limit takes these shapes, all made here from [`RunLimitsSpec`] (the task file's
//! `run_limits:`): [`Caps`] (counted by the collector, also read back from a recording's
//! header), the harness's [`RunLimits`] (passed to a CLI that enforces some natively),
//! the deadline of a turn ([`RunLimitsSpec::deadline`]) and the [`LimitsRecord`] of
//! `task.json`. How the host stops what it starts is one [`StopPolicy`].

pub mod budget;

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
pub const DEFAULT_GATE_THRESHOLD: f64 = 1.0;

fn at_least_one<'de, D: Deserializer<'de>, T: TryFrom<u64>>(
    d: D,
    field: &str,
    unit: &str,
) -> Result<Option<T>, D::Error> {
    let Some(n) = Option::<f64>::deserialize(d)? else {
        return Ok(None);
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
    pub fn to_cli(&self, native: bool) -> RunLimits {
        if !native {
            return RunLimits::default();
        }
        RunLimits {
            max_turns: self.max_turns,
            max_tool_calls: self.max_tool_calls,
            turn_timeout_ms: self.turn_timeout.map(|d| d.as_millis() as u64),
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
    pub fn soft_budgets(&self) -> budget::SoftBudgets {
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
    pub fn is_set(&self, kind: LimitKind) -> bool {
        match kind {
            LimitKind::MaxTurns => self.max_turns.is_some(),
            LimitKind::MaxToolCalls => self.max_tool_calls.is_some(),
            LimitKind::TurnTimeout => self.turn_timeout.is_some(),
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
    pub fn deadline(
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

/// A live turn's stop rules.
#[derive(Debug, Clone, Copy)]
pub struct Deadlines {
    /// When the turn must end, with the reason if it does not (see
    /// [`RunLimitsSpec::deadline`]).
    pub deadline: Option<(Instant, StopReason)>,
    /// How the host stops what it started.
    pub policy: StopPolicy,
}

/// How the host stops the processes it starts, and how long it waits for what. Every stop
/// is SIGTERM to the whole process group (and the marked processes that left it), a
/// grace, then SIGKILL rescanned until nothing is alive (`process::stop_tree`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StopPolicy {
    /// SIGTERM → SIGKILL grace when the host stops a running CLI (a cap, a timeout,
    /// Ctrl-C, a late exit) or a shell step that timed out: long enough for a CLI to
    /// flush its session files and answer its children, short enough that a stuck one
    /// does not hold a suite.
    pub kill_grace: Duration,
    /// After the CLI printed its final result, how long it may take to exit before its
    /// group is stopped ([`StopReason::ResultGrace`]): CLIs flush telemetry and session
    /// state after their result; 5 s covers the slowest seen (Gemini CLI) several times.
    pub result_grace: Duration,
    /// After the CLI exited, how long descendants may still hold its stdout or stderr
    /// before they are stopped ([`StopReason::LeakedPipes`]): a backgrounded process the
    /// agent left writing to the pipe would otherwise keep the turn open forever.
    pub leak_grace: Duration,
    /// After the scripted model holds a call past `max_turns`, how long the stream may
    /// still bring the lines of the calls before it (in flight in the pipe) before the
    /// cap fires. The CLI cannot do anything new meanwhile: it waits for an answer that
    /// will not come. Only the tool calls of lines later than this go uncounted (kept in
    /// the trajectory): the number of turns is the scripted model's own count of the
    /// calls it answered, not what the stream has shown by then.
    pub held_settle: Duration,
    /// SIGTERM → SIGKILL grace for a sweep of what is left once the leader has gone (the
    /// end-of-turn sweep, the stop after leaked pipes, the end of a shell step): what is
    /// left is a stray, not the CLI at work, so it gets no more than a moment.
    pub sweep_grace: Duration,
    /// How long the SIGKILL rescan keeps finding and killing survivors (a forker deaf to
    /// SIGTERM) before it gives up; a process in uninterruptible sleep cannot be killed
    /// sooner, and the host must not hang on one.
    pub give_up: Duration,
}

impl StopPolicy {
    /// The policy of every run.
    pub const DEFAULT: StopPolicy = StopPolicy {
        kill_grace: Duration::from_secs(2),
        result_grace: Duration::from_secs(5),
        leak_grace: Duration::from_secs(1),
        held_settle: Duration::from_millis(200),
        sweep_grace: Duration::from_millis(200),
        give_up: Duration::from_secs(5),
    };
}

impl Default for StopPolicy {
    fn default() -> Self {
        StopPolicy::DEFAULT
    }
}

/// How long an agent CLI's `--version` may take. It only prints a line; a CLI that hangs
/// there (a first-run prompt, a network check) must not hold the task.
pub const CLI_VERSION_TIMEOUT: Duration = Duration::from_secs(30);

/// The default `timeout` of a `run_command` criterion, seconds (coder_eval's 30); the
/// criterion's own `timeout` can lengthen it.
pub const RUN_COMMAND_TIMEOUT_SECS: f64 = 30.0;

/// `turn_timeout`: a [`duration`] whose errors name the field.
pub(crate) fn turn_timeout<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
    named_duration(d, "turn_timeout")
}

/// `task_timeout`: a [`duration`] whose errors name the field.
pub(crate) fn task_timeout<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
    named_duration(d, "task_timeout")
}

fn named_duration<'de, D: Deserializer<'de>>(
    d: D,
    field: &str,
) -> Result<Option<Duration>, D::Error> {
    duration(d).map_err(|e| serde::de::Error::custom(format!("{field}: {e}")))
}

/// A duration: a number of seconds, or "1500ms", "90s", "5m", "1h"; positive, at most
/// [`MAX_DURATION_SECS`].
pub(crate) fn duration<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Raw {
        Seconds(f64),
        Text(String),
    }
    let Some(raw) = Option::<Raw>::deserialize(d)? else {
        return Ok(None);
    };
    let secs = match raw {
        Raw::Seconds(s) => s,
        Raw::Text(text) => parse_duration(&text).map_err(serde::de::Error::custom)?,
    };
    if !(secs.is_finite() && secs > 0.0) {
        return Err(serde::de::Error::custom(format!(
            "a duration must be positive, got {secs}"
        )));
    }
    if secs > MAX_DURATION_SECS {
        return Err(serde::de::Error::custom(format!(
            "a duration must be at most 30 days ({MAX_DURATION_SECS} s), got {secs} s"
        )));
    }
    Ok(Some(Duration::from_secs_f64(secs)))
}

/// The longest duration a task file may give (30 days, in seconds): beyond it a timeout
/// is a typo, and far beyond it a deadline would not fit in an `Instant`.
pub const MAX_DURATION_SECS: f64 = 30.0 * 24.0 * 3600.0;

fn parse_duration(text: &str) -> Result<f64, String> {
    let text = text.trim();
    let (number, scale) = if let Some(n) = text.strip_suffix("ms") {
        (n, 0.001)
    } else if let Some(n) = text.strip_suffix('s') {
        (n, 1.0)
    } else if let Some(n) = text.strip_suffix('m') {
        (n, 60.0)
    } else if let Some(n) = text.strip_suffix('h') {
        (n, 3600.0)
    } else {
        (text, 1.0)
    };
    number
        .trim()
        .parse::<f64>()
        .map(|n| n * scale)
        .map_err(|_| {
            format!("`{text}` is not a duration (seconds, or e.g. \"90s\", \"5m\", \"1500ms\")")
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cap_of_zero_is_refused_naming_the_field() {
        for field in ["max_turns", "max_tool_calls"] {
            let err = serde_yaml_ng::from_str::<RunLimitsSpec>(&format!("{field}: 0"))
                .unwrap_err()
                .to_string();
            assert!(
                err.contains(&format!("{field} must be a whole number")),
                "{err}"
            );
        }
        let ok: RunLimitsSpec = serde_yaml_ng::from_str("max_turns: 3").unwrap();
        assert_eq!(ok.max_turns, Some(3));
    }

    #[test]
    fn the_deadline_is_the_earlier_timeout() {
        let task_start = Instant::now();
        let turn_start = task_start + Duration::from_secs(10);
        let limits = |turn: Option<u64>, task: Option<u64>| RunLimitsSpec {
            turn_timeout: turn.map(Duration::from_secs),
            task_timeout: task.map(Duration::from_secs),
            ..Default::default()
        };
        assert_eq!(limits(None, None).deadline(task_start, turn_start), None);
        assert_eq!(
            limits(Some(5), None).deadline(task_start, turn_start),
            Some((turn_start + Duration::from_secs(5), StopReason::TurnTimeout))
        );
        // The task started 10 s before the turn: its 12 s end first.
        assert_eq!(
            limits(Some(5), Some(12)).deadline(task_start, turn_start),
            Some((
                task_start + Duration::from_secs(12),
                StopReason::TaskTimeout
            ))
        );
        // A tie goes to the turn timeout.
        assert_eq!(
            limits(Some(5), Some(15)).deadline(task_start, turn_start),
            Some((turn_start + Duration::from_secs(5), StopReason::TurnTimeout))
        );
    }

    #[test]
    fn native_limits_or_the_backstop_alone() {
        let spec = RunLimitsSpec {
            max_turns: Some(3),
            turn_timeout: Some(Duration::from_millis(1500)),
            ..Default::default()
        };
        assert_eq!(spec.to_cli(true).max_turns, Some(3));
        assert_eq!(spec.to_cli(true).turn_timeout_ms, Some(1500));
        assert_eq!(spec.to_cli(false).max_turns, None);
        assert!(spec.is_set(LimitKind::MaxTurns) && !spec.is_set(LimitKind::MaxToolCalls));
        assert_eq!(spec.record(&[LimitKind::MaxTurns]).native, ["max_turns"]);
    }

    #[test]
    fn durations_read_with_or_without_a_unit() {
        assert_eq!(parse_duration("1500ms"), Ok(1.5));
        assert_eq!(parse_duration(" 90s"), Ok(90.0));
        assert_eq!(parse_duration("5m"), Ok(300.0));
        assert_eq!(parse_duration("2"), Ok(2.0));
        assert!(parse_duration("soon").is_err());
    }

    #[test]
    fn a_huge_duration_is_a_load_error_and_no_deadline_overflows() {
        for (yaml, field) in [
            ("turn_timeout: 1e20", "turn_timeout"),
            ("task_timeout: 1e19", "task_timeout"),
            ("turn_timeout: \"99999999999999h\"", "turn_timeout"),
            ("task_timeout: 2592001", "task_timeout"),
        ] {
            let err = serde_yaml_ng::from_str::<RunLimitsSpec>(yaml).unwrap_err();
            let err = err.to_string();
            assert!(err.contains("at most 30 days"), "{yaml}: {err}");
            assert!(err.contains(field), "{yaml}: {err}");
        }
        let max: RunLimitsSpec = serde_yaml_ng::from_str("task_timeout: 2592000").unwrap();
        assert_eq!(max.task_timeout, Some(Duration::from_secs(2_592_000)));
        // A limit built in code past what an Instant holds: no deadline, no panic.
        let huge = RunLimitsSpec {
            turn_timeout: Some(Duration::MAX),
            task_timeout: Some(Duration::MAX),
            ..RunLimitsSpec::default()
        };
        let now = Instant::now();
        assert_eq!(huge.deadline(now, now), None);
    }
}
