//! Judges: criteria that ask a model for the verdict (`llm_judge`, `agent_judge`), with
//! coder_eval's fields and verdict contract.
//!
//! A judge gets a rendered prompt (the author's `prompt`, the files it names, optionally
//! the reference, the agent's final answer, its tool calls, the dialog — each block of
//! agent-made data marked as untrusted) and must answer with **one `submit_verdict` tool
//! call** `{score, rationale, findings}`: `score` a finite number (clamped to 0–1; a
//! boolean, a string or NaN is an error), `rationale` a non-empty string (collapsed to
//! one line), `findings` an optional list of strings. A judge that does not call the
//! tool, or calls it with a bad verdict, scores 0 with an error (`no_verdict`,
//! `invalid_verdict`).
//!
//! Where the model is:
//! - `scripted_model: PATH` on the criterion (coder-eval's own key, relative to the task
//!   file): a loopback [scripted model](coder_eval_scripted_model) plays that script; its
//!   reply `tool_calls: [{name: submit_verdict, arguments: {score: 0.8, rationale: ...}}]`
//!   is the verdict. This is how judges run offline and in tests.
//! - else the Anthropic Messages API (`POST {ANTHROPIC_BASE_URL or
//!   https://api.anthropic.com}/v1/messages`, forced `tool_choice`), with the key from
//!   `ANTHROPIC_API_KEY` — read only from the variables the user handed to judges
//!   (`--judge-env NAME`, or `--pass-env NAME`), never from the host environment at
//!   large. Without a key the criterion fails with `judge_unconfigured`, saying how to
//!   give one.
//!
//! What is recorded ([`JudgeRecord`], in the criterion result): the model, where it was
//! reached (`scripted` / `anthropic` / `agent:<harness>`), the system prompt and the
//! prompt (unless `capture_transcript: false`; capped by `max_transcript_chars`, 10% /
//! 30% of it), the verdict, the raw answer, token usage and cost in USD (`null` when
//! unknown: the scripted model has no price). No credential is ever part of it: the key
//! lives in one request header. Reference contents the judge saw are scrubbed from the
//! details, rationale and findings.
//!
//! `enabled: false` skips the call: score 1, details `(skipped: enabled=false)`, no cost
//! (coder_eval's rule).

pub mod agent;
mod client;
mod prompt;

pub(crate) use crate::results::{JudgeRecord, JudgeUsage, JudgeVerdict};
pub use client::JudgeEnv;
pub(crate) use client::JudgeError;

use serde::Deserialize;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// The model a judge uses when the criterion names none.
pub(crate) const DEFAULT_JUDGE_MODEL: &str = "claude-sonnet-4-6";
/// The name of the verdict tool.
pub(crate) const SUBMIT_VERDICT: &str = "submit_verdict";
/// The default `pass_threshold` of a judge (coder_eval: 0.7, not 0.9).
pub(crate) const JUDGE_PASS_THRESHOLD: f64 = 0.7;

/// The system prompt of `llm_judge`.
pub(crate) const SYSTEM_PROMPT: &str = "You are a strict code reviewer. Follow the grading prompt \
and call the submit_verdict tool exactly once with: score (a number from 0 to 1), rationale \
(a one or two sentence headline) and findings (a list of short, concrete observations, each \
tied to a file, a line or a behaviour). Do not answer in text: use the tool.";

fn yes() -> bool {
    true
}

/// `llm_judge` params (coder_eval's `LLMJudgeCriterion`, every version's keys), parsed
/// and checked once, at load ([`LlmJudge::parse`]).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct LlmJudge {
    pub prompt: String,
    #[serde(default)]
    pub files: Vec<String>,
    #[serde(default = "yes")]
    pub include_reference: bool,
    #[serde(default)]
    pub include_agent_output: bool,
    #[serde(default)]
    pub include_tool_calls: bool,
    #[serde(default)]
    pub include_dialog: bool,
    #[serde(default = "max_dialog_chars")]
    pub max_dialog_chars: usize,
    #[serde(default = "default_model")]
    pub model: String,
    #[serde(default)]
    pub temperature: f64,
    #[serde(default = "max_tokens")]
    pub max_tokens: u32,
    #[serde(default = "max_file_chars")]
    pub max_file_chars: usize,
    #[serde(default = "yes")]
    pub capture_transcript: bool,
    #[serde(default = "max_transcript_chars")]
    pub max_transcript_chars: usize,
    #[serde(default = "yes")]
    pub enabled: bool,
    /// coder-eval's own: play this model script instead of calling a real model.
    #[serde(default)]
    pub scripted_model: Option<String>,
}

fn default_model() -> String {
    DEFAULT_JUDGE_MODEL.into()
}
fn max_dialog_chars() -> usize {
    80_000
}
fn max_tokens() -> u32 {
    2000
}
fn max_file_chars() -> usize {
    20_000
}
fn max_transcript_chars() -> usize {
    100_000
}

fn reject_verdict_channel(params: &Map<String, Value>) -> Result<(), String> {
    if params.contains_key("verdict_channel") {
        return Err(
            "verdict_channel was removed (coder_eval 2026-05-21): the submit_verdict \
                    tool is the only channel; delete this field"
                .into(),
        );
    }
    Ok(())
}

fn positive(name: &str, n: usize) -> Result<(), String> {
    if n == 0 {
        Err(format!("{name} must be > 0"))
    } else {
        Ok(())
    }
}

/// Checks a judge's `files` entries: workspace-relative, or `$TASK_DIR/…` /
/// `$REFERENCE_DIR/…`, never leaving their folder.
fn check_files(files: &[String]) -> Result<(), String> {
    for (i, f) in files.iter().enumerate() {
        let rel = f
            .strip_prefix("$TASK_DIR/")
            .or_else(|| f.strip_prefix("$REFERENCE_DIR/"))
            .unwrap_or(f);
        grader_kit::check_relative(rel).map_err(|e| format!("files[{i}]: {e}"))?;
    }
    Ok(())
}

impl LlmJudge {
    /// Parses and checks `llm_judge` params.
    pub(crate) fn parse(params: &Map<String, Value>) -> Result<LlmJudge, String> {
        reject_verdict_channel(params)?;
        let p: LlmJudge =
            serde_json::from_value(Value::Object(params.clone())).map_err(|e| e.to_string())?;
        if p.prompt.trim().is_empty() {
            return Err("prompt is empty".into());
        }
        if !(0.0..=2.0).contains(&p.temperature) {
            return Err(format!(
                "temperature must be between 0 and 2, got {}",
                p.temperature
            ));
        }
        positive("max_tokens", p.max_tokens as usize)?;
        positive("max_file_chars", p.max_file_chars)?;
        positive("max_dialog_chars", p.max_dialog_chars)?;
        positive("max_transcript_chars", p.max_transcript_chars)?;
        check_files(&p.files)?;
        if let Some(s) = &p.scripted_model {
            grader_kit::check_relative(s).map_err(|e| format!("scripted_model: {e}"))?;
        }
        Ok(p)
    }
}

/// Cuts `text` to `max` characters, saying so.
pub(crate) fn cap(text: &str, max: usize) -> (String, bool) {
    if text.chars().count() <= max {
        return (text.to_string(), false);
    }
    let kept: String = text.chars().take(max).collect();
    (format!("{kept}… [truncated]"), true)
}

/// Replaces every reference file's content (and its long lines) in `text`.
pub(crate) fn scrub(text: &str, secrets: &[String]) -> String {
    let mut out = text.to_string();
    for s in secrets {
        if !s.is_empty() && out.contains(s.as_str()) {
            out = out.replace(s.as_str(), "[reference redacted]");
        }
    }
    out
}

/// The reference texts to scrub: each file's content and each of its lines of 24 or more
/// characters (a model echoes a line more often than a whole file).
pub(crate) fn reference_secrets(files: &BTreeMap<String, String>) -> Vec<String> {
    let mut secrets: Vec<String> = Vec::new();
    for content in files.values() {
        let whole = content.trim();
        if !whole.is_empty() {
            secrets.push(whole.to_string());
        }
        for line in content.lines().map(str::trim) {
            if line.chars().count() >= 24 {
                secrets.push(line.to_string());
            }
        }
    }
    // The verdict's rationale is whitespace-collapsed: look for the collapsed forms too.
    let collapsed: Vec<String> = secrets
        .iter()
        .map(|s| s.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect();
    secrets.extend(collapsed);
    // Longest first, so a whole file is replaced before its lines.
    secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
    secrets.dedup();
    secrets
}

pub(crate) use prompt::JudgeInputs;
mod verdict;
pub use verdict::cost;

/// The files under a reference directory (relative, sorted; symlinks not followed).
pub(crate) fn reference_files(dir: &std::path::Path) -> Vec<String> {
    prompt::walk(dir)
}
use prompt::render_prompt;

/// The outcome of one judge: score and details, or an error kind and message; the record
/// in both cases (when the judge got as far as building a prompt).
pub struct JudgeOutcome {
    pub result: Result<(f64, String), (String, String)>,
    pub record: Option<JudgeRecord>,
}

/// Runs an `llm_judge`.
pub(crate) async fn grade_llm(
    p: &LlmJudge,
    inputs: &JudgeInputs<'_>,
    env: Option<&JudgeEnv>,
) -> JudgeOutcome {
    if !p.enabled {
        return JudgeOutcome {
            result: Ok((1.0, "(skipped: enabled=false)".into())),
            record: None,
        };
    }
    let rendered = render_prompt(
        &p.prompt,
        &prompt::Context {
            files: &p.files,
            include_reference: p.include_reference,
            include_agent_output: p.include_agent_output,
            include_tool_calls: p.include_tool_calls,
            include_dialog: p.include_dialog,
            max_file_chars: p.max_file_chars,
            max_dialog_chars: p.max_dialog_chars,
            reference_mounted_at: None,
            agent: false,
        },
        inputs,
    );
    let request = client::Request {
        model: &p.model,
        system: SYSTEM_PROMPT,
        user: &rendered.text,
        temperature: p.temperature,
        max_tokens: p.max_tokens,
    };
    let script = p.scripted_model.as_ref().map(|s| inputs.task_dir.join(s));
    let answer = client::ask(&request, script.as_deref(), env).await;
    finish(
        &p.model,
        SYSTEM_PROMPT,
        &rendered,
        answer,
        p.capture_transcript,
        p.max_transcript_chars,
    )
}

/// Turns a model's answer into the criterion's outcome and record.
fn finish(
    model: &str,
    system: &str,
    rendered: &prompt::Rendered,
    answer: Result<client::Answer, JudgeError>,
    capture: bool,
    max_chars: usize,
) -> JudgeOutcome {
    let secrets = reference_secrets(&rendered.reference);
    let answer = match answer {
        Ok(a) => a,
        Err(e) => {
            let kind = e.kind().to_string();
            return JudgeOutcome {
                result: Err((kind, scrub(&e.to_string(), &secrets))),
                record: Some(record(
                    model, "?", system, rendered, None, None, None, capture, max_chars,
                )),
            };
        }
    };
    let raw = answer
        .verdict_input
        .as_ref()
        .map(Value::to_string)
        .or_else(|| answer.text.clone());
    let raw = raw.map(|r| scrub(&r, &secrets));
    let verdict = match &answer.verdict_input {
        None => Err((
            "no_verdict".to_string(),
            format!(
                "the judge did not call {SUBMIT_VERDICT}{}",
                answer
                    .text
                    .as_deref()
                    .map(|t| format!("; it answered: {}", cap(&scrub(t, &secrets), 500).0))
                    .unwrap_or_default()
            ),
        )),
        Some(input) => JudgeVerdict::from_input(input).map_err(|e| {
            (
                "invalid_verdict".to_string(),
                format!("the judge's verdict is invalid: {}", scrub(&e, &secrets)),
            )
        }),
    };
    let verdict = verdict.map(|mut v| {
        v.rationale = scrub(&v.rationale, &secrets);
        v.findings = v.findings.iter().map(|f| scrub(f, &secrets)).collect();
        v
    });
    let mut rec = record(
        model,
        &answer.endpoint,
        system,
        rendered,
        verdict.as_ref().ok().cloned(),
        raw,
        answer.usage.clone(),
        capture,
        max_chars,
    );
    // A scripted model echoes the model name it was asked for; it has no price.
    rec.cost_usd = (answer.endpoint != "scripted")
        .then(|| answer.usage.as_ref().and_then(|u| cost(&answer.model, u)))
        .flatten();
    let result = verdict.map(|v| {
        let mut details = format!("score: {:.2}\nrationale: {}", v.score, v.rationale);
        if !v.findings.is_empty() {
            details.push_str("\nfindings:");
            for f in &v.findings {
                details.push_str(&format!("\n- {f}"));
            }
        }
        for missing in &rendered.missing_files {
            details.push_str(&format!("\nfile not found: {missing}"));
        }
        (v.score, details)
    });
    JudgeOutcome {
        result,
        record: Some(rec),
    }
}

#[allow(clippy::too_many_arguments)]
fn record(
    model: &str,
    endpoint: &str,
    system: &str,
    rendered: &prompt::Rendered,
    verdict: Option<JudgeVerdict>,
    raw: Option<String>,
    usage: Option<JudgeUsage>,
    capture: bool,
    max_chars: usize,
) -> JudgeRecord {
    let secrets = reference_secrets(&rendered.reference);
    let mut truncated = false;
    let mut capped = |text: &str, share: f64| {
        let (t, cut) = cap(text, ((max_chars as f64) * share).max(1.0) as usize);
        truncated |= cut;
        t
    };
    let system_prompt = capture.then(|| capped(system, 0.1));
    // The prompt holds the reference when the judge was shown it: scrub it there too,
    // since task.json is no place for the reference solution.
    let prompt = capture.then(|| capped(&scrub(&rendered.text, &secrets), 0.3));
    let raw = raw.map(|r| capped(&r, 0.6));
    JudgeRecord {
        model: model.to_string(),
        endpoint: endpoint.to_string(),
        system_prompt,
        prompt,
        verdict,
        raw,
        usage,
        cost_usd: None,
        truncated,
    }
}

#[cfg(test)]
mod tests;
