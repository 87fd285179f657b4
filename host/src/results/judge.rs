//! What a judge criterion (`llm_judge`, `agent_judge`) records beside its score, in
//! `task.json`'s criterion result (`judge`). Units: tokens, USD.

use serde::{Deserialize, Serialize};

/// A judge's verdict, validated (coder_eval's `JudgeVerdict`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JudgeVerdict {
    /// 0–1 (clamped).
    pub score: f64,
    /// One line.
    pub rationale: String,
    /// Short observations; empty when the judge gave none.
    pub findings: Vec<String>,
}

/// Token usage of a judge's model calls.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct JudgeUsage {
    pub input_tokens: Option<u64>,
    pub output_tokens: Option<u64>,
    pub cache_read_tokens: Option<u64>,
    pub cache_write_tokens: Option<u64>,
}

/// What a judge criterion records beside its score.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JudgeRecord {
    /// The judge model requested.
    pub model: String,
    /// Where it was reached: `scripted` (a scripted model), `anthropic` (the Messages
    /// API), `agent:<harness>` (an agent_judge's CLI).
    pub endpoint: String,
    /// The system prompt, when `capture_transcript` (capped).
    pub system_prompt: Option<String>,
    /// The rendered prompt, when `capture_transcript` (capped).
    pub prompt: Option<String>,
    /// The validated verdict; `None` when there was none.
    pub verdict: Option<JudgeVerdict>,
    /// The model's answer as received: the `submit_verdict` input, else its text (capped).
    pub raw: Option<String>,
    /// Token usage, when the model reported it.
    pub usage: Option<JudgeUsage>,
    /// USD, from the model's price per token; `None` when the price is unknown.
    pub cost_usd: Option<f64>,
    /// The transcript was cut to `max_transcript_chars`.
    pub truncated: bool,
}
