//! One thread of a trajectory (the main agent, or one sub-agent) as it is built: its
//! steps, the open model call, and the reference from a spawning call to its sub-agent.

use super::{Metrics, Observation, ObservationResult, Step, SubagentRef};
use harness_kit::Usage;
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// The steps of one thread (the main agent, or one sub-agent).
pub(super) struct Thread {
    pub(super) steps: Vec<Step>,
    /// Whether a message's output token count is its model call's.
    output_per_call: bool,
    /// The open agent step: (index, its message id once known, whether a message arrived).
    open: Option<(usize, Option<String>)>,
}

impl Thread {
    pub(super) fn new(prompt: String, at_ms: u64, output_per_call: bool) -> Thread {
        Thread {
            output_per_call,
            steps: vec![Step {
                step_id: 0,
                timestamp: None,
                source: "user",
                model_name: None,
                message: prompt,
                tool_calls: vec![],
                observation: None,
                metrics: None,
                llm_call_count: None,
                extra: Some(json!({ "at_ms": at_ms })),
            }],
            open: None,
        }
    }

    fn push_agent(&mut self, at_ms: u64, model: &Option<String>, calls: Option<u32>) -> usize {
        self.steps.push(Step {
            step_id: 0,
            timestamp: None,
            source: "agent",
            model_name: model.clone(),
            message: String::new(),
            tool_calls: vec![],
            observation: None,
            metrics: None,
            llm_call_count: calls,
            extra: Some(json!({ "at_ms": at_ms })),
        });
        self.steps.len() - 1
    }

    /// A model call starts: a new agent step.
    pub(super) fn open_call(&mut self, at_ms: u64, model: &Option<String>) {
        let i = self.push_agent(at_ms, model, Some(1));
        self.open = Some((i, None));
    }

    /// The open agent step, or a new one (tool calls the stream shows without their
    /// model call).
    pub(super) fn current(&mut self, at_ms: u64, model: &Option<String>) -> usize {
        match self.open {
            Some((i, _)) => i,
            None => {
                let i = self.push_agent(at_ms, model, None);
                self.open = Some((i, None));
                i
            }
        }
    }

    pub(super) fn message(
        &mut self,
        at_ms: u64,
        message_id: &str,
        text: &str,
        usage: Option<Usage>,
        cost_usd: Option<f64>,
        model: &Option<String>,
    ) {
        let i = match &self.open {
            // The same message (a CLI that streams one per content block), or the first
            // message of the open model call.
            Some((i, Some(id))) if id == message_id => *i,
            Some((i, None)) => *i,
            // A message with a new id is a new model call.
            _ => self.push_agent(at_ms, model, Some(1)),
        };
        self.open = Some((i, Some(message_id.to_string())));
        let step = &mut self.steps[i];
        step.llm_call_count = Some(1);
        // A message id seen again is that message's later state (reducers send the whole
        // text so far, as the turn record keeps it): it replaces, never appends.
        step.message = text.to_string();
        // A repeated report of the same message's usage replaces, never adds.
        if let Some(u) = usage {
            step.metrics = Some(Metrics {
                prompt_tokens: u.input_tokens + u.cache_read_tokens + u.cache_writes_or_zero(),
                completion_tokens: self.output_per_call.then_some(u.output_tokens),
                cached_tokens: u.cache_read_tokens,
                cost_usd,
                extra: json!({ "cache_write_tokens": u.cache_write_tokens }),
            });
        } else if let (Some(m), Some(c)) = (step.metrics.as_mut(), cost_usd) {
            m.cost_usd = Some(c);
        }
    }
}

/// The thread of `parent` (created on first use; a sub-agent's first step is the
/// spawning call's input).
pub(super) fn thread<'a>(
    threads: &'a mut BTreeMap<Option<String>, Thread>,
    parent: &Option<String>,
    inputs: &BTreeMap<String, String>,
    at_ms: u64,
    output_per_call: bool,
) -> &'a mut Thread {
    threads.entry(parent.clone()).or_insert_with(|| {
        let prompt = parent
            .as_ref()
            .and_then(|call| inputs.get(call))
            .map(|input| subagent_prompt(input))
            .unwrap_or_default();
        Thread::new(prompt, at_ms, output_per_call)
    })
}

/// What a sub-agent was asked: the spawning call's `prompt` (Claude Code `Task`, OpenCode
/// `task`), else `description`, else its whole input.
fn subagent_prompt(input_json: &str) -> String {
    let value: Value = serde_json::from_str(input_json).unwrap_or(Value::Null);
    ["prompt", "description", "message"]
        .iter()
        .find_map(|k| value.get(k).and_then(Value::as_str).map(str::to_string))
        .unwrap_or_else(|| input_json.to_string())
}

/// Adds the reference to sub-agent `sub_id` to the result of `call_id` in step `step`.
pub(super) fn reference(thread: &mut Thread, step: usize, call_id: &str, sub_id: &str) {
    let results = &mut thread.steps[step]
        .observation
        .get_or_insert_with(|| Observation { results: vec![] })
        .results;
    let at = match results.iter().position(|r| r.source_call_id == call_id) {
        Some(i) => i,
        None => {
            results.push(ObservationResult {
                source_call_id: call_id.to_string(),
                content: String::new(),
                subagent_trajectory_ref: vec![],
                extra: json!({ "status": "interrupted" }),
            });
            results.len() - 1
        }
    };
    results[at].subagent_trajectory_ref.push(SubagentRef {
        trajectory_id: sub_id.to_string(),
    });
}
