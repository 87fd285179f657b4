//! The documented machine output: `task.json`, `run.json` and the turn record (what
//! `replay --json` prints and `task.json` embeds). Serde types only; this module imports
//! nothing from the live loop, so it could become a crate of its own the day an outside
//! tool parses these files.
//!
//! Layout under `coder-eval run --out DIR` (default `runs/<UTC timestamp>/`):
//!
//! ```text
//! DIR/run.json                              the suite: one row per task × harness ([`RunSummary`])
//! DIR/junit.xml                             the suite as JUnit XML (`run::junit`)
//! DIR/report.html                           the suite as one HTML page (`run::report`)
//! DIR/<task_id>/<harness>/task.json         one task's result ([`TaskResult`])
//! DIR/<task_id>/<harness>/recording.jsonl   the raw stream (`turn::recording`)
//! DIR/<task_id>/<harness>/stderr.log        the CLI's stderr, whole
//! DIR/<task_id>/<harness>/workspace/        the agent's workspace, kept for inspection
//! DIR/<task_id>/<harness>/home/             the CLI's private HOME
//! ```
//!
//! Both JSON files are written atomically (temporary file, then rename). Units: `*_ms`
//! whole milliseconds, `*_us` microseconds, scores 0–1, costs USD. `null` means "not
//! measured / not reported"; `0` means measured and zero.
//!
//! # Versions
//!
//! `task.json` and `run.json` carry `result_version` ([`TASK_RESULT_VERSION`]), the turn
//! record `record_version` ([`TURN_RECORD_VERSION`]). A change that a reader of the
//! previous version could misread (a field removed, renamed, retyped or given another
//! meaning) takes the next version; an added field that is omitted when it has no value
//! does not, so a file written before it reads the same.
//!
//! History:
//! - `task.json` 1: first version. Later, within 1: `error_kind` (the kind of an ERROR's
//!   `error`), written only when set; a criterion's `judge` (its judge's prompt, verdict,
//!   usage and cost), written only for judges; `run.json`'s `suite_thresholds`, written
//!   only when a criterion sets any; `time_budget` (time-budget mode's sessions), written
//!   only for such a task.
//! - turn record 1: first version.

mod criterion;
mod judge;
mod live;
mod session;
mod stop;
mod suite;
mod task;
mod turn;

pub use criterion::{CriterionError, CriterionResult, TaskStatus};
pub use judge::{JudgeRecord, JudgeUsage, JudgeVerdict};
pub use live::{
    ArmedGate, ArmedRecord, BudgetBreach, BudgetKind, EarlyStopOutcome, EarlyStopReason,
    EarlyStopRecord, SoftBudgetWarning,
};
pub use session::{SessionRecord, SessionsEnd, TimeBudgetRecord};
pub use stop::StopReason;
pub use suite::{SuiteThresholdResult, ThresholdCheck};
pub use task::{
    CliInfo, LimitsRecord, Paths, RunRow, RunSummary, StepRecord, StopRecord, TaskResult,
};
pub use turn::{
    CliResult, DiagnosticRecord, ExitRecord, MessageRecord, ModelCallRecord, ReducerError,
    StampedEvent, Timing, ToolCallRecord, ToolOutcome, TurnRecord, TurnStatus,
};

use serde::Serialize;
use std::path::Path;

/// The version of the shape of `task.json` and `run.json`.
pub const TASK_RESULT_VERSION: u32 = 1;
/// The version of the turn record's shape.
pub const TURN_RECORD_VERSION: u32 = 1;

/// Writes `value` as pretty JSON to `path` atomically (a temporary file, then a rename).
pub fn write_json_atomically<T: Serialize>(path: &Path, value: &T) -> std::io::Result<()> {
    let tmp = path.with_extension("json.tmp");
    let mut text = serde_json::to_vec_pretty(value).map_err(std::io::Error::other)?;
    text.push(b'\n');
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, path)
}
