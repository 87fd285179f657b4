//! A run as Harbor's Agent Trajectory Interchange Format, `ATIF-v1.7` (Harbor RFC 0001,
//! `docs/rfcs/0001-trajectory-format.md`; the pydantic models of `harbor` 0.26,
//! `harbor/models/trajectories/`).
//!
//! Built from a task's result and the normalized events of its turn (replayed from its
//! recording: the same events the live run saw). The mapping:
//! - step 1: `source: user`, the task's prompt;
//! - one `source: agent` step per model call (`model_call_started`, or an assistant message
//!   with a new message id), `llm_call_count: 1`, its text as `message`, its usage as
//!   `metrics` (`prompt_tokens` counts cached input too: input + cache reads + cache
//!   writes; `cached_tokens` = cache reads; `cost_usd` where the stream reports it);
//! - each tool call in the step of the model call that asked for it, `arguments` its
//!   input (an input that is not a JSON object is wrapped as `{"input": …}`), and its
//!   result as an observation result paired by `source_call_id`;
//! - a sub-agent (events whose `parent_call_id` names a tool call) as an embedded
//!   trajectory in the root's `subagent_trajectories`, `trajectory_id` =
//!   `<root id>/<call id>`, referenced from the spawning call's observation result;
//! - each step's `timestamp` is the recording's wall-clock start plus the step's offset
//!   (absent for a recording that does not carry its start), and `extra.at_ms` is that
//!   offset (ms from the turn's start);
//! - the root's `extra.coder_eval` holds what ATIF has no field for: status, score, stop
//!   reason, run limits, timing buckets (ms), retries and diagnostics.
//!
//! Absent stays absent: a figure the stream did not carry is left out, never written as 0.

use crate::results::{StampedEvent, TaskResult, TotalsStatus};
use harness_kit::{Event, ToolStatus};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

/// The ATIF version written.
pub(crate) const SCHEMA_VERSION: &str = "ATIF-v1.7";

pub use model::Agent;
pub(crate) use model::{
    FinalMetrics, Metrics, Observation, ObservationResult, Step, SubagentRef, ToolCall, Trajectory,
};

mod model;
mod thread;

use thread::{Thread, reference, thread};

/// The trajectory of `task`'s run from its turn's normalized `events` (in stream order).
/// `id` names the trajectory (e.g. `<task_id>/<harness>`); sub-agents get `<id>/<call id>`.
/// `started_unix_ms` (the recording's wall-clock start, ms since the Unix epoch) gives
/// the steps their `timestamp`s.
pub fn trajectory(
    task: &TaskResult,
    events: &[StampedEvent],
    id: &str,
    started_unix_ms: Option<u64>,
) -> Trajectory {
    let turn = task.turn.as_ref();
    let model = turn
        .and_then(|t| t.model.clone())
        .or_else(|| task.requested_model.clone());
    let agent = Agent {
        name: task.harness.clone(),
        version: task
            .cli
            .version
            .clone()
            .or_else(|| turn.and_then(|t| t.cli_version.clone()))
            .unwrap_or_else(|| "unknown".into()),
        model_name: model.clone(),
    };
    let mut threads: BTreeMap<Option<String>, Thread> = BTreeMap::new();
    // Where the harness's stream reports output tokens (limits::budget::reporting): per
    // message, or only in its final result.
    let output_per_call = crate::limits::budget::reporting(&task.harness)
        .is_none_or(|r| r.output == crate::limits::budget::ReportedAt::EachCall);
    threads.insert(None, Thread::new(task.prompt.clone(), 0, output_per_call));
    // Which thread and step holds each tool call, and the input of each (a sub-agent's
    // prompt).
    let mut calls: BTreeMap<String, (Option<String>, usize)> = BTreeMap::new();
    let mut inputs: BTreeMap<String, String> = BTreeMap::new();
    let mut retries = Vec::new();
    for e in events {
        let at_ms = e.stamp_us / 1000;
        match &e.event {
            Event::ModelCallStarted { parent_call_id, .. } => {
                thread(
                    &mut threads,
                    parent_call_id,
                    &inputs,
                    at_ms,
                    output_per_call,
                )
                .open_call(at_ms, &model);
            }
            Event::AssistantMessage {
                message_id,
                parent_call_id,
                text,
                usage,
                cost_usd,
            } => thread(
                &mut threads,
                parent_call_id,
                &inputs,
                at_ms,
                output_per_call,
            )
            .message(at_ms, message_id, text, *usage, *cost_usd, &model),
            Event::ToolCallStarted {
                call_id,
                name,
                input_json,
                parent_call_id,
            } => {
                if calls.contains_key(call_id) {
                    continue;
                }
                inputs.insert(call_id.clone(), input_json.clone());
                let t = thread(
                    &mut threads,
                    parent_call_id,
                    &inputs,
                    at_ms,
                    output_per_call,
                );
                let step = t.current(at_ms, &model);
                t.steps[step].tool_calls.push(ToolCall {
                    tool_call_id: call_id.clone(),
                    function_name: name.clone(),
                    arguments: arguments(input_json),
                });
                calls.insert(call_id.clone(), (parent_call_id.clone(), step));
            }
            Event::ToolCallFinished {
                call_id,
                status,
                output_excerpt,
                exit_code,
                ..
            } => {
                let Some((parent, step)) = calls.get(call_id) else {
                    continue;
                };
                let Some(t) = threads.get_mut(parent) else {
                    continue;
                };
                let results = &mut t.steps[*step]
                    .observation
                    .get_or_insert_with(|| Observation { results: vec![] })
                    .results;
                if results.iter().any(|r| &r.source_call_id == call_id) {
                    continue; // a repeated end changes nothing
                }
                let mut extra = json!({ "status": status_name(*status) });
                if let Some(code) = exit_code {
                    extra["exit_code"] = json!(code);
                }
                results.push(ObservationResult {
                    source_call_id: call_id.clone(),
                    content: output_excerpt.clone(),
                    subagent_trajectory_ref: vec![],
                    extra,
                });
            }
            Event::ModelCallRetried {
                parent_call_id,
                attempt,
                delay_ms,
                status,
                error,
                ..
            } => retries.push(json!({
                "at_ms": at_ms,
                "parent_call_id": parent_call_id,
                "attempt": attempt,
                "delay_ms": delay_ms,
                "status": status,
                "error": error,
            })),
            _ => {}
        }
    }
    // Sub-agents: embedded, each referenced from the result of the call that spawned it,
    // in the thread that made that call (a nested sub-agent from its parent sub-agent). A
    // call that never ended gets a result saying so, so the reference has a place.
    let mut root = threads
        .remove(&None)
        .unwrap_or_else(|| Thread::new(String::new(), 0, output_per_call));
    let mut subs: BTreeMap<String, Thread> = threads
        .into_iter()
        .filter_map(|(parent, t)| parent.map(|call| (call, t)))
        .collect();
    let links: Vec<(Option<String>, usize, String)> = subs
        .keys()
        .filter_map(|call| {
            let (owner, step) = calls.get(call)?;
            Some((owner.clone(), *step, call.clone()))
        })
        .collect();
    for (owner, step, call) in links {
        let holder = match &owner {
            None => Some(&mut root),
            Some(o) => subs.get_mut(o),
        };
        if let Some(holder) = holder {
            reference(holder, step, &call, &format!("{id}/{call}"));
        }
    }
    let embedded = subs
        .into_iter()
        .map(|(call, sub)| Trajectory {
            schema_version: SCHEMA_VERSION,
            session_id: turn.and_then(|t| t.session_id.clone()),
            trajectory_id: format!("{id}/{call}"),
            agent: agent.clone(),
            final_metrics: step_totals(&sub.steps),
            steps: number(sub.steps, started_unix_ms),
            notes: None,
            extra: None,
            subagent_trajectories: vec![],
        })
        .collect();
    let steps = number(root.steps, started_unix_ms);
    let mut final_metrics = FinalMetrics {
        total_steps: steps.len(),
        ..totals(task)
    };
    if let Some(cost) = &task.cost {
        final_metrics.extra = Some(json!({
            "cost_status": cost.cost_status,
            "usage_status": cost.usage_status,
            "attempts": cost.attempts,
        }));
    }
    Trajectory {
        schema_version: SCHEMA_VERSION,
        session_id: turn.and_then(|t| t.session_id.clone()),
        trajectory_id: id.to_string(),
        agent,
        steps,
        notes: Some(
            "Exported by coder-eval from a recorded run; each step's `extra.at_ms` is ms \
             from the turn's start, its `timestamp` that plus the recording's start."
                .into(),
        ),
        final_metrics,
        extra: Some(json!({ "coder_eval": run_extra(task, retries) })),
        subagent_trajectories: embedded,
    }
}

/// Steps numbered from 1, with their wall-clock `timestamp` when the start is known.
fn number(mut steps: Vec<Step>, started_unix_ms: Option<u64>) -> Vec<Step> {
    for (i, s) in steps.iter_mut().enumerate() {
        s.step_id = i + 1;
        let at_ms = s
            .extra
            .as_ref()
            .and_then(|e| e["at_ms"].as_u64())
            .unwrap_or(0);
        s.timestamp = started_unix_ms
            .and_then(|start| start.checked_add(at_ms))
            .and_then(iso8601);
    }
    steps
}

/// `ms` since the Unix epoch as ISO 8601 in UTC with ms (`2026-11-30T22:19:07.394Z`).
fn iso8601(ms: u64) -> Option<String> {
    use chrono::Datelike;
    let t = chrono::DateTime::from_timestamp_millis(i64::try_from(ms).ok()?)?;
    // ISO 8601 without extensions has four-digit years.
    (t.year() <= 9999).then(|| t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true))
}

/// A tool call's input as an ATIF `arguments` object.
fn arguments(input_json: &str) -> Map<String, Value> {
    match serde_json::from_str::<Value>(input_json) {
        Ok(Value::Object(map)) => map,
        Ok(other) => Map::from_iter([("input".to_string(), other)]),
        Err(_) => Map::from_iter([("input".to_string(), Value::String(input_json.into()))]),
    }
}

fn status_name(status: ToolStatus) -> &'static str {
    match status {
        ToolStatus::Ok => "ok",
        ToolStatus::Error => "error",
        ToolStatus::Unknown => "unknown",
        ToolStatus::Denied => "denied",
    }
}

/// The run's totals: from its cost record (all attempts), else its turn; absent when not
/// reported.
fn totals(task: &TaskResult) -> FinalMetrics {
    let (usage, cost) = match &task.cost {
        Some(c) => (
            c.usage
                .filter(|_| c.usage_status != TotalsStatus::NotReported),
            c.total_cost_usd,
        ),
        None => (
            task.turn.as_ref().and_then(|t| t.usage),
            task.turn.as_ref().and_then(|t| t.cost_usd),
        ),
    };
    FinalMetrics {
        total_prompt_tokens: usage
            .map(|u| u.input_tokens + u.cache_read_tokens + u.cache_writes_or_zero()),
        total_completion_tokens: usage.map(|u| u.output_tokens),
        total_cached_tokens: usage.map(|u| u.cache_read_tokens),
        total_cost_usd: cost,
        total_steps: 0,
        extra: None,
    }
}

/// A sub-agent's totals: the sum of its steps' metrics (absent when none reported any).
fn step_totals(steps: &[Step]) -> FinalMetrics {
    let metrics: Vec<&Metrics> = steps.iter().filter_map(|s| s.metrics.as_ref()).collect();
    // A total only where every step reported the figure.
    let sum = |f: fn(&Metrics) -> Option<u64>| -> Option<u64> {
        if metrics.is_empty() {
            return None;
        }
        metrics.iter().map(|m| f(m)).sum()
    };
    let costs: Option<Vec<f64>> = metrics.iter().map(|m| m.cost_usd).collect();
    FinalMetrics {
        total_prompt_tokens: sum(|m| Some(m.prompt_tokens)),
        total_completion_tokens: sum(|m| m.completion_tokens),
        total_cached_tokens: sum(|m| Some(m.cached_tokens)),
        total_cost_usd: costs.filter(|c| !c.is_empty()).map(|c| c.iter().sum()),
        total_steps: steps.len(),
        extra: None,
    }
}

/// What ATIF has no field for: outcome, limits, timing, retries, diagnostics.
fn run_extra(task: &TaskResult, retries: Vec<Value>) -> Value {
    let turn = task.turn.as_ref();
    json!({
        "task_id": task.task_id,
        "harness": task.harness,
        "variant": task.variant,
        "replicate": task.replicate,
        "status": task.status,
        "weighted_score": task.weighted_score,
        "stop": task.stop,
        "run_limits": task.run_limits,
        "num_turns": turn.map(|t| t.num_turns),
        "final_status": turn.map(|t| t.final_status),
        "timing_ms": turn.map(|t| &t.timing),
        "caveats": task.cli.caveats,
        "retries": retries,
        "diagnostics": turn.map(|t| &t.diagnostics),
    })
}

#[cfg(test)]
mod tests;
