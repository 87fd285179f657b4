//! The ATIF-v1.7 records written (the fields of Harbor's pydantic models that coder-eval
//! fills; absent values are left out, never written as 0).

use serde::Serialize;
use serde_json::{Map, Value};

/// An ATIF trajectory (root or embedded sub-agent).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Trajectory {
    pub schema_version: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    pub trajectory_id: String,
    pub agent: Agent,
    pub steps: Vec<Step>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub notes: Option<String>,
    pub(crate) final_metrics: FinalMetrics,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extra: Option<Value>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub subagent_trajectories: Vec<Trajectory>,
}

/// `agent`: the harness and its CLI.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Agent {
    /// The harness name (`claude-code`, `codex`, ...).
    pub name: String,
    /// The CLI's version, `unknown` when neither the probe nor the stream said.
    pub version: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model_name: Option<String>,
}

/// One step.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Step {
    /// 1-based, sequential.
    pub step_id: usize,
    /// ISO 8601 (UTC, ms), when the run's wall-clock start is known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<String>,
    /// `user` or `agent`.
    pub source: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model_name: Option<String>,
    pub message: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) observation: Option<Observation>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metrics: Option<Metrics>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub llm_call_count: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extra: Option<Value>,
}

/// A tool call of an agent step.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolCall {
    pub tool_call_id: String,
    pub function_name: String,
    /// The call's input: always a JSON object.
    pub arguments: Map<String, Value>,
}

/// The results of a step's tool calls.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Observation {
    pub results: Vec<ObservationResult>,
}

/// One tool call's result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct ObservationResult {
    /// The `tool_call_id` of a tool call of the same step.
    pub source_call_id: String,
    /// The output excerpt the reducer kept.
    pub content: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub subagent_trajectory_ref: Vec<SubagentRef>,
    /// `status` (`ok`, `error`, `denied`, `unknown`), `exit_code` when reported.
    pub extra: Value,
}

/// A reference to an embedded sub-agent trajectory.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct SubagentRef {
    pub trajectory_id: String,
}

/// A model call's usage and cost, as the stream reported them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Metrics {
    /// Input tokens, cached ones included (input + cache reads + cache writes).
    pub prompt_tokens: u64,
    /// Output tokens (reasoning included where the CLI counts it there); absent where
    /// the stream's per-message count is not the call's (Claude Code reports each
    /// message's output count as of its start: the real figure is only in its result).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub completion_tokens: Option<u64>,
    /// Input tokens read from the provider's cache.
    pub cached_tokens: u64,
    /// USD, where the stream reports cost per call.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// `cache_write_tokens`.
    pub extra: Value,
}

/// Totals of a trajectory.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct FinalMetrics {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total_prompt_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total_completion_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total_cached_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total_cost_usd: Option<f64>,
    pub total_steps: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extra: Option<Value>,
}
