//! The documented machine output: `task.json`, `run.json` and the turn record (what
//! `replay --json` prints and `task.json` embeds). Its serde types, how they are written
//! (atomically: `atomic.rs`; a long turn record's pretty JSON on two threads: `print.rs`)
//! and where (a unit's result folder: `unit.rs`); this module
//! imports nothing from the rest of the host (the gateway's figures and the loader's notes live
//! here, and `gateway` and `task` re-export them; `layering_tests` in `lib.rs` holds it
//! to that), so it could become a crate of its own the day an outside tool parses these
//! files.
//!
//! Layout under `coder-eval run --out DIR` (default `runs/<UTC timestamp>/`):
//!
//! ```text
//! DIR/run.json                              the suite: one row per task × harness ([`RunSummary`])
//! DIR/junit.xml                             the suite as JUnit XML (`run::junit`)
//! DIR/report.html                           the suite as one HTML page (`run::report`)
//! DIR/<task_id>/<harness>/task.json         one task's result ([`TaskResult`])
//! DIR/<task_id>/<harness>/cost.json         what it cost, per launch of the CLI ([`CostRecord`], `cost.rs`)
//! DIR/<task_id>/<harness>/recording.jsonl   the raw stream (`turn::recording`)
//! DIR/<task_id>/<harness>/stderr.log        the CLI's stderr, whole
//! DIR/<task_id>/<harness>/workspace/        the agent's workspace, kept for inspection
//! DIR/<task_id>/<harness>/home/             the CLI's private HOME
//! ```
//!
//! Not here: the machine output of `suite/`, the files that steer runs rather than report
//! them, versioned or shaped beside the code that reads them back:
//! - `plan.json` (`coder-eval plan --out FILE`): the resolved work units
//!   (`suite::plan::Plan`, `plan_version`: `suite::plan::PLAN_VERSION`);
//! - `DIR/shard.json` in a shard's folder (and a merged run's): the plan id and the
//!   units the shard runs (`suite::shard::ShardRecord`);
//! - `DIR/invocation.json`: how the run was started, for `run --resume`
//!   (`suite::resume::Invocation`, its name `suite::folders::INVOCATION_FILE`).
//!
//! An experiment puts each variant's units under `DIR/<variant>/`, and replicates
//! (`--repeats N`) each get a folder `r00`, `r01`, … below `<harness>/` ([`UnitId`]).
//!
//! Both JSON files are written atomically ([`write_atomically`]: a uniquely named
//! temporary file in the same folder, synced, then renamed; none is left behind), each
//! `task.json` as its task ends, and `run.json` again as tasks end (at most once per 2 s,
//! none after an interrupt) and once at the end, so a host that is killed leaves the tasks
//! finished by the last rewrite listed (`unfinished` counts the rest; each task's
//! `task.json` is there). Units: `*_ms`
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
//!   only when a criterion sets any. `task.json`'s `variant`, `replicate` and `lineage`,
//!   `run.json`'s rows' `variant` and `replicate`, its `experiment` and `statistics`:
//!   written only for experiments and repeats; `cli.containment` (`pid_namespace` or
//!   `process_group`), written when a CLI ran on the host; `run.json`'s `unfinished`,
//!   written only while tasks are missing. The stop reason of an interrupted run is
//!   spelled `interrupted` (SIGINT, SIGTERM or SIGHUP); files written before spell it
//!   `cancelled` (Ctrl-C only), which still reads as `interrupted`.
//!   Also within 1: `cost` (the summary of `cost.json`) in `task.json` and in each
//!   `run.json` row, written only when the task launched its CLI; `time_budget`
//!   (time-budget mode's sessions), written only for such a task.
//! - turn record 1: first version. Later, within 1, each written only when set:
//!   `retries`, `unreported`, `totals` (when not complete), `timing.retry_wait_ms`; a
//!   tool call's status `denied`.
//! - turn record 2: `reducer_error.line` is `null` when the failing reducer call reduced
//!   no stdout line (`finish` after the last line, or a side file; the message ends with
//!   the place); version 1 wrote `0` there, which reads as `null`.
//! - `cost.json` 1: first version (`cost_version`).

mod atomic;
mod cost;
mod criterion;
mod gateway;
mod inputs;
mod judge;
mod lineage;
mod live;
mod print;
mod run;
mod session;
mod statistics;
mod stop;
mod suite;
mod task;
mod turn;
mod unit;

pub(crate) use atomic::write_json_atomically;
pub use atomic::{close_writes, write_atomically};
pub use cost::{
    AttemptSettings, COST_RECORD_VERSION, CostAttempt, CostRecord, CostSummary, GatewayCost,
    ProviderReports, ReportedMessage, ReportedTotals,
};
pub use criterion::{CriterionError, CriterionResult, TaskStatus};
pub use gateway::{GatewaySummary, GatewayTurn};
pub use inputs::{LoadNote, NoteAction, RowInfo};
pub use judge::{JudgeRecord, JudgeUsage, JudgeVerdict};
pub use lineage::{Layer, Lineage, LineageEntry};
pub use live::{
    ArmedGate, ArmedRecord, BudgetBreach, BudgetFigures, BudgetKind, EarlyStopOutcome,
    EarlyStopReason, EarlyStopRecord, SoftBudgetWarning,
};
pub use print::write_turn_record_pretty;
pub use run::{ExperimentRecord, RunRow, RunSummary};
pub use session::{SessionRecord, SessionsEnd, TimeBudgetRecord};
pub use statistics::{
    CompareReport, CompareTask, Interval, MeanEstimate, TaskStatistics, VariantStatistics,
};
pub use stop::StopReason;
pub use suite::{SuiteThresholdResult, ThresholdCheck};
pub use task::{
    CliInfo, InfraRetryRecord, LimitsRecord, Paths, StepRecord, StopRecord, TaskResult,
};
pub use turn::{
    CliResult, DiagnosticRecord, ExitRecord, MessageRecord, ModelCallRecord, ReducerError,
    RetryRecord, StampedEvent, Timing, ToolCallRecord, ToolOutcome, TotalsStatus, TurnRecord,
    TurnStatus, UnreportedRecord,
};
pub use unit::{UnitId, replicate_dir_of};

/// The version of the shape of `task.json` and `run.json`.
pub const TASK_RESULT_VERSION: u32 = 1;
/// The version of the turn record's shape.
pub const TURN_RECORD_VERSION: u32 = 2;
