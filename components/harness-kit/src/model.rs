//! The normalized event model and (in `model/launch.rs`) the launch types, mirroring
//! `wit/events@0.2.0` and `wit/harness@0.2.0` field by field (see there for each field's
//! meaning). The 0.1.0 contracts are a subset: [`ToolStatus::Denied`],
//! [`Event::ModelCallRetried`] and [`Event::Unreported`] are new in events@0.2.0, and the
//! 0.1.0 binding (`export_harness_v0_1!`) converts them down (denied → error, the new
//! events left out).

use serde::{Deserialize, Serialize};

/// Token usage of one model call, in tokens; the four counters are disjoint.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_read_tokens: u64,
    /// `None` (JSON `null`) when the CLI's stream does not carry the figure (Gemini CLI
    /// reports cache reads only): absent is not zero.
    pub cache_write_tokens: Option<u64>,
}

impl Usage {
    /// Two cache-write counts added (saturating): `None` only when neither was reported,
    /// so a sum over a CLI that never reports the figure stays unknown.
    pub fn add_cache_writes(a: Option<u64>, b: Option<u64>) -> Option<u64> {
        match (a, b) {
            (Some(a), Some(b)) => Some(a.saturating_add(b)),
            (a, b) => a.or(b),
        }
    }

    /// `self + other`, each count saturating at `u64::MAX` (a CLI may report any number,
    /// and a sum must neither panic nor wrap to a small one); cache writes as
    /// [`Usage::add_cache_writes`] adds them.
    pub fn saturating_add(&self, other: &Usage) -> Usage {
        Usage {
            input_tokens: self.input_tokens.saturating_add(other.input_tokens),
            output_tokens: self.output_tokens.saturating_add(other.output_tokens),
            cache_read_tokens: self
                .cache_read_tokens
                .saturating_add(other.cache_read_tokens),
            cache_write_tokens: Usage::add_cache_writes(
                self.cache_write_tokens,
                other.cache_write_tokens,
            ),
        }
    }

    /// Cache writes as a count for sums that need a number (budgets, prompt totals):
    /// an unreported figure adds nothing.
    pub fn cache_writes_or_zero(&self) -> u64 {
        self.cache_write_tokens.unwrap_or(0)
    }
}

/// How a tool call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolStatus {
    Ok,
    Error,
    Unknown,
    /// Never executed: the CLI refused it (a permission rule, a declined approval, a
    /// sandbox policy) or could not run it (the model named a tool the CLI does not
    /// have). Not a command the agent ran. New in events@0.2.0.
    Denied,
}

/// What a stream left out (`coder-eval:events/types@0.2.0.unreported-kind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UnreportedKind {
    /// Token usage of a model call or a step.
    Usage,
    /// Cost in USD.
    Cost,
    /// The events of a sub-agent (its model calls and tool calls).
    SubagentWork,
}

/// One normalized event (`coder-eval:events/types@0.2.0.event`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    SessionStarted {
        session_id: Option<String>,
        cli_version: Option<String>,
        model: Option<String>,
        tools: Vec<String>,
    },
    ModelCallStarted {
        message_id: Option<String>,
        parent_call_id: Option<String>,
    },
    AssistantMessage {
        message_id: String,
        parent_call_id: Option<String>,
        text: String,
        usage: Option<Usage>,
        cost_usd: Option<f64>,
    },
    ToolCallStarted {
        call_id: String,
        name: String,
        input_json: String,
        parent_call_id: Option<String>,
    },
    ToolCallFinished {
        call_id: String,
        status: ToolStatus,
        output_excerpt: String,
        exit_code: Option<i32>,
        /// ms by the CLI's clock, when it reports the tool's duration.
        cli_duration_ms: Option<u64>,
    },
    FinalResult {
        success: bool,
        error_kind: Option<String>,
        error_message: Option<String>,
        max_turns_reached: bool,
        num_turns: Option<u32>,
        cost_usd: Option<f64>,
        duration_ms: Option<u64>,
        text: Option<String>,
        usage: Option<Usage>,
    },
    Diagnostic {
        kind: String,
        message: String,
        raw: String,
    },
    /// A model call was retried, or an attempt the stream had begun was abandoned for
    /// another: the abandoned attempt is not a model call. New in events@0.2.0.
    ModelCallRetried {
        /// Whether the stream had shown the failed attempt as a model call (the last one
        /// started on this thread): the host un-counts it. `false`: nothing to un-count.
        call_started: bool,
        /// The abandoned attempt's message id, when the stream announced one.
        abandoned_message_id: Option<String>,
        parent_call_id: Option<String>,
        /// The CLI's attempt number (1 = the first retry), when reported.
        attempt: Option<u32>,
        /// ms the CLI said it would wait, when reported.
        delay_ms: Option<u64>,
        /// HTTP status of the failed attempt, when reported.
        status: Option<u32>,
        /// The error as the CLI reports it.
        error: Option<String>,
        /// `true` when the CLI announced the retry; `false` when the reducer inferred it.
        announced: bool,
    },
    /// Work the stream shows happened but whose figures it does not carry: the totals
    /// it would feed are partial. New in events@0.2.0.
    Unreported {
        kind: UnreportedKind,
        /// The tool call (sub-agent) or message the gap belongs to, when known.
        call_id: Option<String>,
        /// What is missing and why, for people.
        reason: String,
    },
}

impl Event {
    /// A diagnostic event; `raw` is kept verbatim (lossy UTF-8) up to 64 KiB.
    pub fn diagnostic(kind: &str, message: impl Into<String>, raw: &[u8]) -> Event {
        const KEEP: usize = 64 * 1024;
        let mut raw_text = String::from_utf8_lossy(&raw[..raw.len().min(KEEP)]).into_owned();
        if raw.len() > KEEP {
            raw_text.push_str(&format!("… [{} bytes in all]", raw.len()));
        }
        Event::Diagnostic {
            kind: kind.to_string(),
            message: message.into(),
            raw: raw_text,
        }
    }
}

/// The diagnostic (kind, message) an events@0.2.0-only event becomes for a 0.1.0 host:
/// `model_call_retried` or `unreported_<kind>`; `None` for any other event.
pub fn down_to_diagnostic(event: &Event) -> Option<(String, String)> {
    match event {
        Event::ModelCallRetried {
            abandoned_message_id,
            attempt,
            delay_ms,
            status,
            error,
            announced,
            ..
        } => {
            let mut message = String::from(if *announced {
                "the CLI retried a model request"
            } else {
                "a model request was abandoned and retried (inferred from the stream)"
            });
            if let Some(id) = abandoned_message_id {
                message.push_str(&format!("; abandoned attempt `{id}` is not a model call"));
            }
            if let Some(n) = attempt {
                message.push_str(&format!("; attempt {n}"));
            }
            if let Some(ms) = delay_ms {
                message.push_str(&format!("; waiting {ms} ms"));
            }
            if let Some(s) = status {
                message.push_str(&format!("; HTTP {s}"));
            }
            if let Some(e) = error {
                message.push_str(&format!("; error: {e}"));
            }
            Some(("model_call_retried".into(), message))
        }
        Event::Unreported {
            kind,
            call_id,
            reason,
        } => {
            let kind = match kind {
                UnreportedKind::Usage => "usage",
                UnreportedKind::Cost => "cost",
                UnreportedKind::SubagentWork => "subagent_work",
            };
            let message = match call_id {
                Some(id) => format!("{reason} (call `{id}`)"),
                None => reason.clone(),
            };
            Some((format!("unreported_{kind}"), message))
        }
        _ => None,
    }
}

/// Settings for one reducer instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReducerConfig {
    /// Bytes of a tool output kept in `output_excerpt`.
    pub excerpt_bytes: u32,
}

impl Default for ReducerConfig {
    fn default() -> Self {
        ReducerConfig {
            excerpt_bytes: 4096,
        }
    }
}

mod launch;
pub use launch::*;

#[cfg(test)]
mod tests;
