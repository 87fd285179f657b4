//! `task.json` (one task on one harness; `run.json` is in [`super::run`]): see [`super`]
//! for the file layout and the version rule.

use super::{CriterionResult, StopReason, TaskStatus, TurnRecord};
use serde::{Deserialize, Serialize};

/// One task on one harness (`task.json`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TaskResult {
    /// [`TASK_RESULT_VERSION`](super::TASK_RESULT_VERSION).
    pub result_version: u32,
    pub task_id: String,
    pub harness: String,
    pub status: TaskStatus,
    /// Why the status is ERROR, when it is.
    pub error: Option<String>,
    /// The kind of `error`, snake_case: the stage that failed (`setup`, `component`,
    /// `scripted_model`, `refused`, `launch`, `recording`, `cli`, `post_run`,
    /// `write_result`), or how the turn ended (`cli_error`, `incomplete`,
    /// `reducer_failed`). Written only when set: a `task.json` without it reads the same.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_kind: Option<String>,
    pub description: Option<String>,
    /// The task file (absolute path).
    pub task_file: String,
    /// The prompt sent (the stream of some CLIs does not echo it).
    pub prompt: String,
    /// The model the task asked for (some CLIs' streams do not name it).
    pub requested_model: Option<String>,
    pub cli: CliInfo,
    pub run_limits: LimitsRecord,
    /// Set when the host ended the turn before the CLI did.
    pub stop: Option<StopRecord>,
    /// The turn (see [`TurnRecord`]); `null` when the CLI never started.
    pub turn: Option<TurnRecord>,
    /// Time-budget mode (`agent.budget_mode: time`): the budget and every session; `turn`
    /// is then the last session's record. Absent for a one-session task.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_budget: Option<super::TimeBudgetRecord>,
    /// Criterion results, in task-file order: graded after every run whose turn the
    /// criteria decide (a completed or capped one); empty after a timeout or crash.
    pub criteria: Vec<CriterionResult>,
    /// Weighted mean of the criteria with weight > 0.
    pub weighted_score: Option<f64>,
    /// After a timeout or crash: read-only criteria run as evidence; they do not change
    /// the status.
    pub post_failure_criteria_results: Vec<CriterionResult>,
    /// The gate of a run an early stop cut short: its armed criteria only (the others are
    /// advisory). Absent when the run was not cut short by an early stop.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub armed_gate: Option<super::ArmedGate>,
    /// Early-stop triggers that can never fire on their criterion's instance (inert, as in
    /// coder_eval), e.g. `on_pass: stop` on a bounded `command_executed`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub early_stop_inert: Vec<String>,
    /// Soft budgets (`expected_turns`, `expected_tool_calls`) gone over: a warning and a
    /// badge, never a stop.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub soft_budget_warnings: Vec<super::SoftBudgetWarning>,
    /// Workspace setup (copy, starter files, pre_run) plus launch preparation, ms; `null`
    /// when the task did not get as far as launching its CLI.
    #[serde(default)]
    pub setup_ms: Option<u64>,
    /// post_run plus grading, ms; `null` when the task was not graded.
    #[serde(default)]
    pub grading_ms: Option<u64>,
    /// The host's own work during the turn (recording, reducing, collecting), µs; `null`
    /// when no turn ran.
    #[serde(default)]
    pub host_turn_work_us: Option<u64>,
    /// The last 8 KiB of the CLI's stderr.
    pub stderr_tail: String,
    /// Requests the scripted model answered, when one was used.
    pub scripted_model_requests: Option<Vec<serde_json::Value>>,
    /// Paths of the kept artifacts, relative to this file's folder.
    pub paths: Paths,
    /// What the loader did with keys of the task file it did not take as written
    /// (coder_eval compatibility): `[{key, action: ignored|dropped|mapped|not_enforced,
    /// to?, line, message}]`, `line` 1-based in the task file. Empty when none.
    #[serde(default)]
    pub load_notes: Vec<super::LoadNote>,
    /// The dataset row this task was made from (`{suite_id, row_id}`); `null` for a task
    /// without `dataset:`.
    #[serde(default)]
    pub row: Option<super::RowInfo>,
    /// What each `pre_run` and `post_run` step did, in order. A failing `post_run` step
    /// is informational (coder_eval): it is here, not in the status.
    #[serde(default)]
    pub steps: Vec<StepRecord>,
    /// The experiment variant this unit ran under (`variant_id`); absent outside an
    /// experiment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<String>,
    /// The replicate index (0-based; folder `rNN`); absent when the task ran once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicate: Option<u32>,
    /// How many replicates its task × variant × harness has (its folder's number is as
    /// wide as the largest index's: `r005` of 200); absent when the task ran once, and in
    /// results of an older coder-eval (their folders have two digits at least: `r05`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicates: Option<u32>,
    /// Per resolved field (dotted path), the layer that set it: `{value, source:
    /// default|experiment-defaults|task|variant|cli|mutation, source_detail?}`; a field
    /// without an entry has its built-in default. Absent when the task file was run as
    /// written (no experiment, no `-D`/`--model`/`--harness` override).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lineage: Option<serde_json::Value>,
    /// What the task cost: the summary of its `cost.json` (absent when no CLI was
    /// launched).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<super::CostSummary>,
    /// The task file's `tags` (the report filters by them); absent when it has none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// How many times the task was run: 1, or 2 or more when an attempt ended in an
    /// infrastructure error and was run again (`coder-eval run --infra-retries`); absent
    /// for a task never started (skipped, agentless) and in the kept attempts themselves.
    /// This result is the last attempt's; the earlier ones are kept under `attempts/<n>/`
    /// beside it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempts: Option<u32>,
    /// The earlier attempts that ended in an infrastructure error, in order (omitted when
    /// none): why each was run again and where it is kept. A graded failure is never run
    /// again.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub infra_retries: Vec<InfraRetryRecord>,
}

/// One attempt of a task that ended in an infrastructure error and was run again
/// (`task.json`'s `infra_retries`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InfraRetryRecord {
    /// 1-based attempt number.
    pub attempt: u32,
    /// Why it counts as infrastructure: `crash_before_first_call` (the CLI ended with a
    /// failure before its first model call), `api_status` (the model API answered HTTP 429
    /// or 5xx, as the stream shows), `transient_exit_code` (an exit code the CLI documents
    /// as transient).
    pub cause: String,
    /// The HTTP status seen, for `api_status`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_status: Option<u32>,
    /// The attempt's `error` and `error_kind`.
    pub error: Option<String>,
    pub error_kind: Option<String>,
    /// The attempt's cost in USD, `null` when unknown (spent all the same).
    pub cost_usd: Option<f64>,
    /// ms waited before the next attempt.
    pub delay_ms: u64,
    /// Its folder, relative to this `task.json`'s (`attempts/1`): its own `task.json`,
    /// recording, stderr and workspace.
    pub path: String,
}

/// One `pre_run` / `post_run` shell step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepRecord {
    /// `pre_run` or `post_run`.
    pub phase: String,
    pub command: String,
    /// `null` when a signal ended it or it timed out.
    pub exit_code: Option<i32>,
    pub timed_out: bool,
    /// Wall time, ms.
    pub duration_ms: u64,
    /// The last 4 KiB of its stdout.
    pub stdout_tail: String,
    /// The last 4 KiB of its stderr.
    pub stderr_tail: String,
}

impl TaskResult {
    /// When the early-stop watcher stopped the run, what decided it, for people:
    /// "early stop: criterion_passed by success_criteria[1] `command_executed: step 2 ran`
    /// at tool call 2 (model call 2, 0.4 s); armed gate 1.00 ≥ 1.00" (the index 0-based).
    pub(crate) fn early_stop_note(&self) -> Option<String> {
        let fired = self.turn.as_ref()?.early_stop.as_ref()?.fired.as_ref()?;
        let gate = self.armed_gate.as_ref().map_or(String::new(), |g| {
            format!(
                "; armed gate {:.2} {} {:.2}",
                g.score,
                if g.passed { "≥" } else { "<" },
                g.threshold
            )
        });
        Some(format!(
            "early stop: {} by success_criteria[{}] `{}` at tool call {} (model call {}, \
             {:.1} s){gate}",
            fired.reason.as_str(),
            fired.deciding_index,
            fired.deciding_criterion,
            fired.tool_call_index,
            fired.model_call_index,
            fired.elapsed_ms as f64 / 1000.0
        ))
    }

    /// When a token or USD budget stopped the run, which and by how much, for people:
    /// "over max_usd: $0.19207 > $0.15 at model call 2 (the CLI's own cap)". USD rounded to
    /// 1e-10 (a sum of reported decimals without float noise); "the CLI's own cap" when
    /// the CLI's native budget stopped it (its final result says `error_max_budget_usd`),
    /// "the gateway's figures" when the model gateway's count went over.
    pub fn budget_note(&self) -> Option<String> {
        let turn = self.turn.as_ref()?;
        let b = turn.budget.as_ref()?;
        let figure = |n: f64| match b.budget {
            super::BudgetKind::MaxUsd => format!("${}", (n * 1e10).round() / 1e10),
            _ => n.to_string(),
        };
        let native = turn
            .cli_result
            .as_ref()
            .and_then(|r| r.error_kind.as_deref())
            .is_some_and(|k| k == "error_max_budget_usd")
            && b.budget == super::BudgetKind::MaxUsd;
        let whose = if native {
            " (the CLI's own cap)"
        } else if b.figures == Some(super::BudgetFigures::Gateway) {
            " (the gateway's figures)"
        } else {
            ""
        };
        Some(format!(
            "over {}: {} > {} at model call {}{whose}",
            b.budget.as_str(),
            figure(b.actual),
            figure(b.limit),
            b.model_calls,
        ))
    }

    /// A time-budget run's outcome, for people: "time budget: 3 sessions, ended:
    /// deadline_reached" (`time_budget.ended`); `None` outside time-budget mode.
    pub(crate) fn time_budget_note(&self) -> Option<String> {
        let tb = self.time_budget.as_ref()?;
        let ended = serde_json::to_value(tb.ended)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        Some(format!(
            "time budget: {} session{}, ended: {ended}",
            tb.sessions.len(),
            if tb.sessions.len() == 1 { "" } else { "s" }
        ))
    }

    /// The soft budgets gone over, as a badge: "over expected_tool_calls (4 > 2)".
    pub(crate) fn soft_budget_note(&self) -> Option<String> {
        (!self.soft_budget_warnings.is_empty()).then(|| {
            self.soft_budget_warnings
                .iter()
                .map(|w| format!("over {} ({} > {})", w.budget, w.actual, w.expected))
                .collect::<Vec<_>>()
                .join(", ")
        })
    }

    /// Every stop-and-budget note of the run, joined (time budget, cap, early stop,
    /// budget, soft budgets), for one-line summaries.
    pub fn notes(&self) -> Option<String> {
        let notes: Vec<String> = [
            self.time_budget_note(),
            self.cap_note(),
            self.early_stop_note(),
            self.budget_note(),
            self.soft_budget_note(),
            self.host_work_note(),
        ]
        .into_iter()
        .flatten()
        .collect();
        (!notes.is_empty()).then(|| notes.join("; "))
    }

    /// A timeout that the host's own work on the stream (recording, and above all the
    /// harness component's reducer) took a large part of, for people: "the host spent 16.2
    /// s of the turn's 20.0 s reducing the stream (a slow reducer component?): the timeout
    /// counts that time". The stream is reduced as it arrives, so a slow reducer delays
    /// what the host sees of the CLI, and a wall-clock timeout may fire on a CLI that had
    /// finished. `None` unless a timeout stopped the turn and that work was at least a
    /// quarter of the time to the stop.
    pub(crate) fn host_work_note(&self) -> Option<String> {
        let stop = self.stop.as_ref().filter(|s| s.reason.is_timeout())?;
        let at_ms = stop.at_ms.filter(|&ms| ms > 0)?;
        let work_ms = self.host_turn_work_us? / 1000;
        (work_ms * 4 >= at_ms).then(|| {
            format!(
                "the host spent {:.1} s of the turn's {:.1} s reducing the stream (a slow \
                 reducer component?): the {} counts that time",
                work_ms as f64 / 1000.0,
                at_ms as f64 / 1000.0,
                stop.reason.as_str()
            )
        })
    }

    /// When a cap stopped the turn, which one and who enforced it, for people:
    /// "stopped by max_turns 2 (the CLI's own cap)", "stopped by max_tool_calls 5 (the
    /// host's backstop)", "stopped by max_turns 1 (held at the gateway)". `None` when no
    /// cap fired.
    pub fn cap_note(&self) -> Option<String> {
        let turn = self.turn.as_ref()?;
        let (name, limit) = if turn.max_turns_exhausted {
            ("max_turns", self.run_limits.max_turns)
        } else if turn.max_tool_calls_exhausted {
            ("max_tool_calls", self.run_limits.max_tool_calls)
        } else {
            return None;
        };
        let by = if name == "max_turns" && turn.gateway.as_ref().is_some_and(|g| g.held) {
            "held at the gateway"
        } else if self.stop.is_some() {
            "the host's backstop"
        } else {
            "the CLI's own cap"
        };
        Some(format!(
            "stopped by {name} {} ({by})",
            limit.map_or("?".into(), |n| n.to_string())
        ))
    }
}

/// The CLI that ran.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct CliInfo {
    pub path: Option<String>,
    /// `--version` output.
    pub version: Option<String>,
    /// The exact argv, prompt included.
    pub argv: Vec<String>,
    /// The process group the CLI led (every process of it is gone when the task ends).
    pub pgid: Option<i32>,
    /// The value of `CODER_EVAL_PROCESS_MARK` in the environment of every process of the turn:
    /// how the host finds the processes that left the group.
    #[serde(default)]
    pub mark: Option<String>,
    /// Processes of the turn still alive after the CLI exited on its own (detached by the
    /// agent: `setsid`, `nohup`, a daemon), which the host then stopped. 0 when the host
    /// stopped the CLI itself (a cap, a timeout), whose stop takes everything anyway.
    /// `null` when no turn ran.
    #[serde(default)]
    pub leftover_processes: Option<u32>,
    /// What the CLI's non-zero exit code means, when its harness documents that code
    /// (Gemini CLI: 41 `auth_error`, 52 `config_error`, ...).
    #[serde(default)]
    pub exit_code_meaning: Option<harness_kit::ExitCode>,
    /// Differences from other harnesses this CLI imposes (its launch plan's caveats).
    pub caveats: Vec<harness_kit::Caveat>,
    /// What held the turn's processes together: `pid_namespace` (a PID namespace of its
    /// own: everything in it died with the CLI, even if the host was SIGKILLed) or
    /// `process_group` (the group, the leader's descendants and the mark; the fallback
    /// where no namespace can be made). Absent when no CLI ran, or it ran in a container.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub containment: Option<String>,
}

/// The task's limits and who enforced them.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct LimitsRecord {
    pub max_turns: Option<u32>,
    pub max_tool_calls: Option<u32>,
    pub turn_timeout_ms: Option<u64>,
    pub task_timeout_ms: Option<u64>,
    /// Limits the CLI enforced itself (the host kept its backstop for these too).
    pub native: Vec<String>,
    /// The budgets, as `run_limits` sets them (`null` = none). Enforced by the host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_input_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_output_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_total_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_usd: Option<f64>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub count_cached_input: bool,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub count_cache_creation: bool,
    /// Soft budgets (a warning, never a stop).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_turns: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_tool_calls: Option<u32>,
    /// `run_limits.stop_early` as written (the kill switch, or the older master arm).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_early: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_early_gate_threshold: Option<f64>,
}

/// The host's stop.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StopRecord {
    pub reason: StopReason,
    /// ms from the turn's start; in time-budget mode from the run's agent start (the
    /// first session's start, the base of `time_budget.sessions[].started_ms`), whichever
    /// session was stopped.
    pub at_ms: Option<u64>,
}

/// Artifact paths, relative to the task's result folder.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Paths {
    /// The CLI's stdout as recorded; absent when no turn ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recording: Option<String>,
    /// The CLI's stderr; absent when no turn ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stderr: Option<String>,
    /// The workspace the agent worked in; absent when none was made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
    /// The task's reference solution, staged after the agent finished (`reference`);
    /// `null` when the task has none.
    #[serde(default)]
    pub reference: Option<String>,
}

impl Default for Paths {
    fn default() -> Self {
        Paths {
            recording: Some("recording.jsonl".into()),
            stderr: Some("stderr.log".into()),
            workspace: Some("workspace".into()),
            reference: None,
        }
    }
}

#[cfg(test)]
mod tests;
