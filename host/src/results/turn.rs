//! The turn record: what one turn of one CLI did, as `replay --json` prints it and as
//! `task.json` embeds it. Serialized with serde; this module is its documentation.
//!
//! Units: every `*_ms` field is whole milliseconds on the host's one monotonic clock,
//! measured from the turn's start (the CLI's spawn; for a plain capture, stamp 0).
//! Tokens are counts; costs are USD. `null` means "not measured / not reported"; `0`
//! means measured and zero.
//!
//! Versioned by [`TURN_RECORD_VERSION`](super::TURN_RECORD_VERSION) (see [`super`]).
//!
//! DESIGN's four time buckets are head, generation, tool and tail; in [`Timing`] they are
//! `harness_startup_ms` (head), `generation_duration_ms`, `tool_union_ms` and
//! `harness_teardown_ms` (tail).

use harness_kit::{Event, Usage};
use serde::{Deserialize, Serialize};

/// One turn: one prompt in, the CLI ran to its end (or was stopped).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TurnRecord {
    /// [`TURN_RECORD_VERSION`](super::TURN_RECORD_VERSION).
    pub record_version: u32,
    /// The harness name (e.g. `claude-code`).
    pub harness: String,
    /// The reducer component used: a file path, or `builtin:<harness>`.
    pub component: String,
    /// The CLI's session id (first `session_started`).
    pub session_id: Option<String>,
    /// The CLI's version as its stream reports it.
    pub cli_version: Option<String>,
    /// The model the CLI reported; with the gateway, when the stream names none, the
    /// model named by the first main-thread request that names one.
    pub model: Option<String>,
    /// How the turn ended.
    pub final_status: TurnStatus,
    /// Main-thread model calls. When a cap stopped the turn, this counts the call that
    /// began past the cap (`max_turns + 1`).
    pub num_turns: u32,
    /// The CLI's own count of turns, when its result gives one.
    pub cli_num_turns: Option<u32>,
    /// The turn was stopped by the `max_turns` cap (the host's backstop or the CLI's own).
    pub max_turns_exhausted: bool,
    /// The turn was stopped by the `max_tool_calls` cap.
    pub max_tool_calls_exhausted: bool,
    /// Every model call seen, main thread and sub-agents, in order.
    pub model_calls: Vec<ModelCallRecord>,
    /// Assistant messages, one per message id (its last copy), in order of appearance.
    pub messages: Vec<MessageRecord>,
    /// Tool calls, in order of their start.
    pub tool_calls: Vec<ToolCallRecord>,
    /// Shell commands the agent ran (tool inputs with a `command` or `cmd`, or Cline's
    /// `commands` list: `harness_kit::shell::shell_command`), in order. A
    /// call the CLI refused or could not run (status `denied`) never ran, and one with no
    /// end (`interrupted`: the host stopped the CLI as it started, the stream cut) is not
    /// known to have run: neither is listed.
    pub commands: Vec<String>,
    /// Token totals of this process: the CLI's own totals when its result reports them,
    /// else the sum of the messages' usage (each message id counted once, a retried
    /// attempt's message included: its tokens were spent). `null` when `usage_source` is
    /// `none`: the stream carried no usage (absent, never 0; `cost.json` says `null` too).
    pub usage: Option<Usage>,
    /// Where `usage` comes from: `cli_result`, `messages`, `cli_result_less_earlier` (a
    /// resumed session's running total less its earlier processes' share), or `none`.
    pub usage_source: String,
    /// Cost in USD of this process: the CLI's reported total read through the harness's
    /// declared totals scope (a resumed session's running total less what its earlier
    /// processes spent), else the sum of per-message costs; `null` when the CLI reports
    /// none, or when a running total cannot be attributed (`totals: ambiguous`; the
    /// reported figure stays in `cli_result`). Never 0 for "unknown".
    pub cost_usd: Option<f64>,
    /// The CLI's final result as it reported it.
    pub cli_result: Option<CliResult>,
    /// Where the turn's wall-clock time went.
    pub timing: Timing,
    /// How the CLI process ended, when known.
    pub exit: Option<ExitRecord>,
    /// Lines and fields the reducer or the host did not understand, kept verbatim.
    pub diagnostics: Vec<DiagnosticRecord>,
    /// Set when the reducer component failed; the record holds what it produced before.
    pub reducer_error: Option<ReducerError>,
    /// Stdout lines read (complete lines; a truncated last line not included).
    pub stdout_lines: u64,
    /// Stdout bytes read, newlines included.
    pub stdout_bytes: u64,
    /// The early-stop watcher of an armed run: the armed criteria, their live verdicts,
    /// and the stop when one fired. Absent when nothing was armed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub early_stop: Option<super::EarlyStopOutcome>,
    /// The budget that stopped the turn, with the figures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<super::BudgetBreach>,
    /// Model requests the CLI retried or abandoned (events@0.2.0 `model-call-retried`), in
    /// order. None of them is a model call: they are not in `model_calls`, not in
    /// `num_turns`, not counted toward `max_turns`, and their wait is not generation time
    /// (`timing.retry_wait_ms`). Omitted when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub retries: Vec<RetryRecord>,
    /// Work the stream shows happened but whose figures it does not carry (events@0.2.0
    /// `unreported`): usage of a step, cost, a sub-agent's events. Each makes the totals
    /// below `partial`. Omitted when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unreported: Vec<UnreportedRecord>,
    /// Whether `usage` and `cost_usd` cover everything the turn did: `partial` when some
    /// work went unreported (see `unreported`), `ambiguous` when the CLI's reported total
    /// may include earlier processes of a resumed session and the earlier spend is not
    /// known (then `cost_usd` is `null`). Omitted when `complete`.
    #[serde(default, skip_serializing_if = "TotalsStatus::is_complete")]
    pub totals: TotalsStatus,
    /// What the model gateway saw of the turn (`run --gateway`): its call counts, the
    /// APIs' usage, times to first token, and the reducer's `num_turns` as a cross-check
    /// ([`super::GatewayTurn`]). Absent without the gateway.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gateway: Option<super::GatewayTurn>,
}

impl TurnRecord {
    /// The agent's final answer, for criteria that grade it (`classification_match`, the
    /// judges): the CLI result's text; else, unless the CLI reported a failure, the last
    /// main-thread message. A failed turn has no answer: its last words are not one (field
    /// case B38: an API error after a first message).
    pub fn final_text(&self) -> Option<&str> {
        if let Some(result) = &self.cli_result {
            if let Some(text) = &result.text {
                return Some(text);
            }
            if !result.success {
                return None;
            }
        }
        if self.final_status == TurnStatus::CliError {
            return None;
        }
        self.messages
            .iter()
            .rfind(|m| m.parent_call_id.is_none())
            .map(|m| m.text.as_str())
    }
}

/// Whether a total covers everything it should (`cost.json`'s `cost_status` and
/// `usage_status`, the turn record's `totals`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TotalsStatus {
    /// Every part was reported.
    #[default]
    Complete,
    /// Some work was not reported: the figure covers only what was (a lower bound).
    Partial,
    /// Nothing was reported: the figure is `null`.
    NotReported,
    /// The CLI reported a figure whose scope cannot be told (a running total that may
    /// include an earlier process of the session): the figure is `null`.
    Ambiguous,
}

impl TotalsStatus {
    /// `true` for [`TotalsStatus::Complete`].
    pub(crate) fn is_complete(&self) -> bool {
        *self == TotalsStatus::Complete
    }

    /// The status of a sum of parts: any ambiguous part makes it ambiguous; all parts
    /// not reported, not reported; all complete, complete; anything else, partial.
    pub(crate) fn combine(parts: impl IntoIterator<Item = TotalsStatus>) -> TotalsStatus {
        let (mut any, mut all_complete, mut all_missing) = (false, true, true);
        for part in parts {
            any = true;
            if part == TotalsStatus::Ambiguous {
                return TotalsStatus::Ambiguous;
            }
            all_complete &= part == TotalsStatus::Complete;
            all_missing &= part == TotalsStatus::NotReported;
        }
        match (any, all_complete, all_missing) {
            (false, _, _) | (_, _, true) => TotalsStatus::NotReported,
            (_, true, _) => TotalsStatus::Complete,
            _ => TotalsStatus::Partial,
        }
    }
}

/// A model request the CLI retried, or an attempt abandoned for another.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RetryRecord {
    /// ms from the turn's start to the retry's announcement (or the line that showed it).
    pub at_ms: u64,
    /// 1-based stdout line that showed it.
    pub line: u64,
    /// The CLI's attempt number (1 = the first retry), when reported.
    pub attempt: Option<u32>,
    /// ms the CLI said it would wait, when reported.
    pub delay_ms: Option<u64>,
    /// HTTP status of the failed attempt, when reported.
    pub status: Option<u32>,
    /// The error as the CLI reported it.
    pub error: Option<String>,
    /// `true` when the CLI announced the retry; `false` when the reducer inferred it.
    pub announced: bool,
    /// The abandoned attempt's message id, when the stream showed one.
    pub abandoned_message_id: Option<String>,
    /// The sub-agent's parent tool call; `null` on the main thread.
    pub parent_call_id: Option<String>,
    /// Whether the stream had shown the failed attempt as a model call (then un-counted).
    pub call_started: bool,
}

/// Work whose figures the stream does not carry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UnreportedRecord {
    /// What is missing.
    pub kind: harness_kit::UnreportedKind,
    /// The tool call (sub-agent) or message the gap belongs to, when known.
    pub call_id: Option<String>,
    /// What is missing and why.
    pub reason: String,
    /// 1-based stdout line that showed it.
    pub line: u64,
    /// ms from the turn's start.
    pub at_ms: u64,
}

/// How a turn ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TurnStatus {
    /// The CLI reported success.
    Completed,
    /// The CLI reported a failure (its result says why).
    CliError,
    /// The `max_turns` cap stopped the turn (a clean stop).
    MaxTurnsExhausted,
    /// The `max_tool_calls` cap stopped the turn (a clean stop).
    MaxToolCallsExhausted,
    /// The turn or task timeout fired (a failure; the partial turn is kept).
    Timeout,
    /// The stream ended without the CLI's final result.
    Incomplete,
    /// The reducer component failed; the record is partial.
    ReducerFailed,
    /// The early-stop watcher stopped the turn (a clean stop, like a cap): the run is
    /// gated on its armed criteria.
    EarlyStopped,
    /// A token budget stopped the turn (a clean stop).
    TokenBudgetExceeded,
    /// The USD budget stopped the turn (a clean stop).
    CostBudgetExceeded,
    /// Time-budget mode: a resumed session was stopped at the deadline (a clean stop:
    /// the criteria decide).
    TimeBudgetReached,
}

/// One model API call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelCallRecord {
    /// 1-based position among the main thread's calls; `null` for a sub-agent's call.
    pub main_index: Option<u32>,
    /// The provider's message id, when known.
    pub message_id: Option<String>,
    /// The tool call that started the sub-agent; `null` on the main thread.
    pub parent_call_id: Option<String>,
    /// ms from the turn's start to the call's first output.
    pub started_ms: u64,
    /// Main thread only: ms of this call's window (its first output to the next main
    /// call's, or to the last output) not covered by any tool call.
    pub generation_ms: Option<u64>,
}

/// One assistant message (the last copy of its message id).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MessageRecord {
    pub message_id: String,
    pub parent_call_id: Option<String>,
    pub text: String,
    /// Usage of the model call, counted once per message id.
    pub usage: Option<Usage>,
    /// USD, when the CLI reports a per-message cost.
    pub cost_usd: Option<f64>,
    /// ms from the turn's start to the message's first line.
    pub first_ms: u64,
}

/// How a tool call ended, as recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolOutcome {
    Ok,
    Error,
    Unknown,
    /// Never executed: the CLI refused it (a permission rule, a declined approval, a
    /// sandbox policy) or could not run it (a tool it does not have). Such a call is not
    /// in `commands`.
    Denied,
    /// No end was seen before the turn ended (the CLI was stopped, or the stream cut).
    Interrupted,
}

/// One tool call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCallRecord {
    pub call_id: String,
    pub name: String,
    /// The tool input (JSON; a string if the CLI's input was not valid JSON).
    pub input: serde_json::Value,
    /// The sub-agent's parent tool call; `null` on the main thread.
    pub parent_call_id: Option<String>,
    pub status: ToolOutcome,
    pub exit_code: Option<i32>,
    pub output_excerpt: String,
    /// ms from the turn's start.
    pub started_ms: u64,
    /// ms from the turn's start; `null` when interrupted.
    pub finished_ms: Option<u64>,
    /// `finished_ms - started_ms`; for an interrupted call, up to the turn's end.
    pub duration_ms: u64,
}

/// The CLI's own final result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CliResult {
    pub success: bool,
    pub error_kind: Option<String>,
    pub error_message: Option<String>,
    pub max_turns_reached: bool,
    pub num_turns: Option<u32>,
    /// USD, as reported (Claude Code: a running total for the process).
    pub cost_usd: Option<f64>,
    /// The CLI's own duration claim, ms (its clock, kept as data).
    pub duration_ms: Option<u64>,
    pub text: Option<String>,
    pub usage: Option<Usage>,
}

/// The turn's wall clock, tiled: `harness_startup_ms + generation_duration_ms +
/// tool_union_ms + harness_teardown_ms == turn_duration_ms` exactly, whenever all four
/// are measured.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Timing {
    /// Turn start to turn end (the CLI's exit, or the stop).
    pub turn_duration_ms: u64,
    /// Head: turn start to the first model output.
    pub harness_startup_ms: Option<u64>,
    /// Model windows (first output to last activity) minus tool time.
    pub generation_duration_ms: Option<u64>,
    /// The union of tool intervals (overlapping calls count once).
    pub tool_union_ms: Option<u64>,
    /// Tail: last activity (model output or tool end) to turn end.
    pub harness_teardown_ms: Option<u64>,
    /// The plain sum of tool durations (> `tool_union_ms` when calls overlap).
    pub tool_sum_ms: u64,
    /// Main-thread time spent on retried model requests (the abandoned attempt and the
    /// wait until the next attempt began), outside tool time; a retry before the first
    /// output is taken out of the head. Neither generation nor start-up: when set,
    /// the tiling is `harness_startup_ms + generation_duration_ms + tool_union_ms +
    /// retry_wait_ms + harness_teardown_ms == turn_duration_ms`. Omitted when there was
    /// no retry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_wait_ms: Option<u64>,
}

/// How the CLI process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExitRecord {
    /// ms from the turn's start.
    pub at_ms: u64,
    pub code: Option<i32>,
    pub signal: Option<i32>,
}

/// A line or field not understood.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DiagnosticRecord {
    /// 1-based stdout line number (for `recording_unreadable`, the recording file's
    /// line); 0 = not tied to a line.
    pub line: u64,
    /// ms from the turn's start.
    pub at_ms: u64,
    pub kind: String,
    pub message: String,
    /// The line or field as seen (lossy UTF-8, at most 64 KiB).
    pub raw: String,
}

/// The reducer component's failure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReducerError {
    /// `out_of_fuel`, `deadline`, `out_of_memory`, `trap`, ...
    pub kind: String,
    /// The full message, naming the component.
    pub message: String,
    /// The 1-based stdout line being reduced when it failed (a last line without a
    /// newline, handed to `finish`, counts as a line); `null` when the call reduced no
    /// line: `finish` after the last line, or a side file. The message then ends with the
    /// place: "(in `finish`, after the last line of stdout)" or "(on the side file `PATH`,
    /// after the CLI exited)". Turn record 1 wrote `0` there, which reads as `null`.
    #[serde(default, deserialize_with = "zero_is_none")]
    pub line: Option<u64>,
}

/// Reads a line number where turn record 1 wrote `0` for "no line" as `None`.
fn zero_is_none<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    Ok(Option::<u64>::deserialize(d)?.filter(|&n| n != 0))
}

/// One normalized event with the host's stamp: the trajectory's unit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StampedEvent {
    /// 1-based stdout line that produced it (0 = end of stream / host-made).
    pub line: u64,
    /// µs from the turn's start.
    pub stamp_us: u64,
    pub event: Event,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A failure in no line is `"line": null`; turn record 1's `0` (its "at the end")
    /// reads as `null`, a real line as itself.
    #[test]
    fn a_reducer_error_without_a_line_is_null_and_an_old_zero_reads_as_null() {
        let err = ReducerError {
            kind: "trap".into(),
            message: "m".into(),
            line: None,
        };
        let json = serde_json::to_value(&err).unwrap();
        assert_eq!(json["line"], serde_json::Value::Null);
        let read = |line: &str| -> ReducerError {
            serde_json::from_str(&format!(r#"{{"kind":"trap","message":"m","line":{line}}}"#))
                .unwrap()
        };
        assert_eq!(read("0").line, None);
        assert_eq!(read("null").line, None);
        assert_eq!(read("7").line, Some(7));
    }
}
