//! `agent_judge`: a coding-agent CLI (Claude Code by default) runs as the judge, in a
//! **copy** of the agent's workspace, through the same launch machinery as the agent
//! ([`AgentRunner`], implemented by the run layer), with read-only tools by default.
//!
//! Params (coder_eval's `AgentJudgeCriterion`, both its current and its older keys):
//! `prompt` (required), `files`, `include_reference` (default true: the reference is
//! copied to `_reference/` in the judge's folder and the prompt says so), `include_agent_output`,
//! `include_tool_calls`, `include_dialog`, `max_dialog_chars`, `max_file_chars`,
//! `max_turns` (default 50), `turn_timeout` (seconds, default 300, at least 10),
//! `agent: {type, model, permission_mode, allowed_tools, disallowed_tools,
//! ignore_patterns, setting_sources}` (or the older top-level `model`, `permission_mode`,
//! `allowed_tools`, `disallowed_tools`, `ignore_patterns`), `capture_transcript`,
//! `max_transcript_chars`, `enabled`; and coder-eval's own `scripted_model: PATH` (the
//! judge CLI plays this script instead of calling a real model).
//!
//! Defaults: harness `claude-code`, model `claude-sonnet-4-6`, tools `Read, Glob, Grep`
//! with Claude Code's writing and executing tools denied (coder_eval allows `Bash`; here
//! the judge only reads unless the task grants more: an allowed tool is not denied). Other
//! harnesses get no tool lists by default (Codex has none); they work on the copy all the
//! same. `setting_sources` is always empty. The copy leaves out `.git`, `node_modules`,
//! `__pycache__`, `.venv` and — whatever `ignore_patterns` says — `.claude`, `.mcp.json`
//! and `_reference` (hooks or MCP servers the agent planted must not run in the judge).
//!
//! The verdict: the input of the judge's first tool call named `submit_verdict` (or
//! ending in `__submit_verdict`, an MCP tool), else the last JSON object holding a
//! `score` in its final answer — the judge is told to end with one line
//! `{"score": …, "rationale": …, "findings": […]}`, since a CLI has no forced tool
//! choice. Validated like `llm_judge`'s.

use super::prompt::{self, JudgeInputs};
use super::{JudgeOutcome, JudgeRecord, JudgeUsage, JudgeVerdict, scrub};
use crate::results::StampedEvent;
use harness_kit::Event;
use serde::Deserialize;
use serde_json::{Map, Value};
use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::time::Duration;

/// What every judge copy leaves out, whatever `ignore_patterns` says.
pub const SECURITY_IGNORE_FLOOR: [&str; 3] = [".claude", ".mcp.json", "_reference"];
/// The default `ignore_patterns`.
pub const DEFAULT_IGNORE: [&str; 7] = [
    ".git",
    "node_modules",
    "__pycache__",
    ".venv",
    ".claude",
    ".mcp.json",
    "_reference",
];
/// The judge's tools by default (Claude Code).
pub const READ_ONLY_TOOLS: [&str; 3] = ["Read", "Glob", "Grep"];
/// Claude Code's tools that write, execute or reach the network: denied to the judge
/// unless the task allows them.
pub const CLAUDE_WRITE_TOOLS: [&str; 8] = [
    "Bash",
    "Write",
    "Edit",
    "MultiEdit",
    "NotebookEdit",
    "WebFetch",
    "WebSearch",
    "Task",
];
/// Where the reference is copied in the judge's folder.
pub const REFERENCE_MOUNT: &str = "_reference";

/// The judge's system prompt.
pub const SYSTEM_PROMPT: &str = "You are a strict reviewer grading another agent's work in \
this folder (a copy: nothing you do here changes the original). Inspect the files with your \
tools, follow the grading prompt, then submit your verdict: call the submit_verdict tool if \
you have it; otherwise end your final answer with exactly one line holding a JSON object \
{\"score\": <number 0..1>, \"rationale\": \"<one or two sentences>\", \"findings\": \
[\"<short observation>\", ...]}.";

fn yes() -> bool {
    true
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JudgeAgent {
    #[serde(default, rename = "type")]
    pub harness: Option<String>,
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub permission_mode: Option<String>,
    #[serde(default)]
    pub allowed_tools: Option<Vec<String>>,
    #[serde(default)]
    pub disallowed_tools: Option<Vec<String>>,
    #[serde(default)]
    pub ignore_patterns: Option<Vec<String>>,
    /// Accepted and ignored: the judge always runs with none.
    #[serde(default)]
    pub setting_sources: Option<Vec<String>>,
}

/// `agent_judge` params.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentJudge {
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
    #[serde(default = "super::max_dialog_chars")]
    pub max_dialog_chars: usize,
    #[serde(default = "super::max_file_chars")]
    pub max_file_chars: usize,
    #[serde(default = "fifty")]
    pub max_turns: u32,
    #[serde(default = "three_hundred")]
    pub turn_timeout: u64,
    #[serde(default)]
    pub agent: Option<JudgeAgent>,
    #[serde(default = "yes")]
    pub capture_transcript: bool,
    #[serde(default = "super::max_transcript_chars")]
    pub max_transcript_chars: usize,
    #[serde(default = "yes")]
    pub enabled: bool,
    // coder_eval's older top-level agent keys.
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub permission_mode: Option<String>,
    #[serde(default)]
    pub allowed_tools: Option<Vec<String>>,
    #[serde(default)]
    pub disallowed_tools: Option<Vec<String>>,
    #[serde(default)]
    pub ignore_patterns: Option<Vec<String>>,
    /// coder-eval's own: the judge CLI plays this script (relative to the task file).
    #[serde(default)]
    pub scripted_model: Option<String>,
}

fn fifty() -> u32 {
    50
}
fn three_hundred() -> u64 {
    300
}

impl AgentJudge {
    /// Parses and checks `agent_judge` params.
    pub fn parse(params: &Map<String, Value>) -> Result<AgentJudge, String> {
        super::reject_verdict_channel(params)?;
        let p: AgentJudge =
            serde_json::from_value(Value::Object(params.clone())).map_err(|e| e.to_string())?;
        if p.prompt.trim().is_empty() {
            return Err("prompt is empty".into());
        }
        if p.max_turns == 0 {
            return Err("max_turns must be > 0".into());
        }
        if p.turn_timeout < 10 {
            return Err(format!(
                "turn_timeout must be at least 10 seconds, got {}",
                p.turn_timeout
            ));
        }
        super::positive("max_file_chars", p.max_file_chars)?;
        super::positive("max_dialog_chars", p.max_dialog_chars)?;
        super::positive("max_transcript_chars", p.max_transcript_chars)?;
        super::check_files(&p.files)?;
        if let Some(s) = &p.scripted_model {
            grader_kit::check_relative(s).map_err(|e| format!("scripted_model: {e}"))?;
        }
        let a = p.agent.clone().unwrap_or_default();
        for (name, top, nested) in [
            ("model", p.model.is_some(), a.model.is_some()),
            (
                "permission_mode",
                p.permission_mode.is_some(),
                a.permission_mode.is_some(),
            ),
            (
                "allowed_tools",
                p.allowed_tools.is_some(),
                a.allowed_tools.is_some(),
            ),
            (
                "disallowed_tools",
                p.disallowed_tools.is_some(),
                a.disallowed_tools.is_some(),
            ),
            (
                "ignore_patterns",
                p.ignore_patterns.is_some(),
                a.ignore_patterns.is_some(),
            ),
        ] {
            if top && nested {
                return Err(format!(
                    "`{name}` is given twice: at the top and in `agent`"
                ));
            }
        }
        if let Some(h) = &a.harness
            && !crate::components::BUILTIN_HARNESSES
                .iter()
                .any(|b| b.name == h.as_str())
        {
            let known: Vec<&str> = crate::components::BUILTIN_HARNESSES
                .iter()
                .map(|b| b.name)
                .collect();
            return Err(format!(
                "agent.type `{h}` is not a harness (known: {})",
                known.join(", ")
            ));
        }
        Ok(p)
    }

    /// The judge's harness.
    pub fn harness(&self) -> String {
        self.agent
            .as_ref()
            .and_then(|a| a.harness.clone())
            .unwrap_or_else(|| "claude-code".into())
    }

    fn pick<T: Clone>(
        &self,
        top: &Option<T>,
        nested: impl Fn(&JudgeAgent) -> &Option<T>,
    ) -> Option<T> {
        top.clone()
            .or_else(|| self.agent.as_ref().and_then(|a| nested(a).clone()))
    }

    /// The judge's allowed tools: the author's, else (Claude Code) `Read, Glob, Grep`.
    pub fn allowed_tools(&self) -> Vec<String> {
        self.pick(&self.allowed_tools, |a| &a.allowed_tools)
            .unwrap_or_else(|| {
                if self.harness() == "claude-code" {
                    READ_ONLY_TOOLS.iter().map(|s| s.to_string()).collect()
                } else {
                    Vec::new()
                }
            })
    }

    /// The judge's denied tools: the author's, plus (Claude Code) every writing or
    /// executing tool the author did not allow — with permission prompts skipped, Claude
    /// Code runs a tool missing from `--allowedTools`; only `--disallowedTools` stops it.
    pub fn disallowed_tools(&self) -> Vec<String> {
        let mut denied = self
            .pick(&self.disallowed_tools, |a| &a.disallowed_tools)
            .unwrap_or_default();
        if self.harness() == "claude-code" {
            let allowed = self.allowed_tools();
            for t in CLAUDE_WRITE_TOOLS {
                if !allowed.iter().any(|a| a == t) && !denied.iter().any(|d| d == t) {
                    denied.push(t.to_string());
                }
            }
        }
        denied
    }

    /// The patterns left out of the copy (the security floor always among them).
    pub fn ignore_patterns(&self) -> Vec<String> {
        let mut ignore = self
            .pick(&self.ignore_patterns, |a| &a.ignore_patterns)
            .unwrap_or_else(|| DEFAULT_IGNORE.iter().map(|s| s.to_string()).collect());
        for floor in SECURITY_IGNORE_FLOOR {
            if !ignore.iter().any(|i| i == floor) {
                ignore.push(floor.to_string());
            }
        }
        ignore
    }
}

/// What the run layer is asked to run as the judge.
#[derive(Debug, Clone)]
pub struct JudgeRunRequest {
    /// The harness (`claude-code`, ...).
    pub harness: String,
    pub model: String,
    pub prompt: String,
    pub system_prompt: String,
    pub allowed_tools: Vec<String>,
    pub disallowed_tools: Vec<String>,
    pub permission_mode: Option<String>,
    pub max_turns: u32,
    pub turn_timeout: Duration,
    /// The judge's working folder: the copy of the workspace.
    pub workdir: PathBuf,
    /// A script for the scripted model, else the real model (credentials from the
    /// judges' environment).
    pub scripted_model: Option<PathBuf>,
}

/// What the judge's run produced.
#[derive(Debug, Clone, Default)]
pub struct JudgeRun {
    pub trajectory: Vec<StampedEvent>,
    /// The CLI's final answer.
    pub final_text: Option<String>,
    pub usage: Option<JudgeUsage>,
    pub cost_usd: Option<f64>,
    /// The run did not end cleanly (timeout, crash), with the reason.
    pub failure: Option<String>,
}

/// Runs a judge CLI; the run layer implements it with the agent's launch machinery.
pub trait AgentRunner: Send + Sync {
    /// Runs one judge. Errors: the CLI could not be started at all.
    fn run_judge<'a>(
        &'a self,
        request: JudgeRunRequest,
    ) -> Pin<Box<dyn Future<Output = Result<JudgeRun, String>> + Send + 'a>>;
}

/// Copies `from` into `to`, leaving out entries whose name is in `ignore`; symlinks are
/// copied as links, never followed.
pub fn copy_tree(from: &Path, to: &Path, ignore: &[String]) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let name = entry.file_name();
        if ignore.iter().any(|i| name.to_str() == Some(i.as_str())) {
            continue;
        }
        let target = to.join(&name);
        let kind = entry.file_type()?;
        if kind.is_dir() {
            copy_tree(&entry.path(), &target, ignore)?;
        } else if kind.is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(entry.path())?, &target)?;
        } else if kind.is_file() {
            std::fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}

/// The judge's verdict input from its run: a `submit_verdict` tool call, else the last
/// JSON object with a `score` in its final answer.
pub fn find_verdict(run: &JudgeRun) -> Option<Value> {
    for s in &run.trajectory {
        if let Event::ToolCallStarted {
            name, input_json, ..
        } = &s.event
            && (name == super::SUBMIT_VERDICT || name.ends_with("__submit_verdict"))
            && let Ok(v) = serde_json::from_str::<Value>(input_json)
        {
            return Some(v);
        }
    }
    let text = run.final_text.as_deref()?;
    // Scan candidate `{` starts from the end; the first that parses as an object with a
    // score is the verdict.
    for (i, _) in text
        .match_indices('{')
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
    {
        let mut stream = serde_json::Deserializer::from_str(&text[i..]).into_iter::<Value>();
        if let Some(Ok(v)) = stream.next()
            && v.get("score").is_some()
        {
            return Some(v);
        }
    }
    None
}

/// Runs an `agent_judge` through `runner`.
pub async fn grade(
    params: &Map<String, Value>,
    inputs: &JudgeInputs<'_>,
    runner: Option<&dyn AgentRunner>,
) -> JudgeOutcome {
    let fail = |kind: &str, message: String, record: Option<JudgeRecord>| JudgeOutcome {
        result: Err((kind.to_string(), message)),
        record,
    };
    let p = match AgentJudge::parse(params) {
        Ok(p) => p,
        Err(e) => return fail("invalid_criterion", e, None),
    };
    if !p.enabled {
        return JudgeOutcome {
            result: Ok((1.0, "(skipped: enabled=false)".into())),
            record: None,
        };
    }
    let Some(runner) = runner else {
        return fail(
            "judge_unconfigured",
            "agent_judge needs the run's launch machinery (it runs under `coder-eval run` and \
             `grade`, not in a bare grading call)"
                .into(),
            None,
        );
    };
    let mounted = p.include_reference && inputs.reference_dir.is_some();
    let rendered = prompt::render_prompt(
        &p.prompt,
        &prompt::Context {
            files: &p.files,
            include_reference: p.include_reference,
            include_agent_output: p.include_agent_output,
            include_tool_calls: p.include_tool_calls,
            include_dialog: p.include_dialog,
            max_file_chars: p.max_file_chars,
            max_dialog_chars: p.max_dialog_chars,
            reference_mounted_at: mounted.then_some(REFERENCE_MOUNT),
            agent: true,
        },
        inputs,
    );
    // The reference is not inlined, but the judge reads it: scrub its files all the same.
    let mut reference = rendered.reference.clone();
    if mounted && let Some(dir) = inputs.reference_dir {
        for rel in prompt::walk(dir) {
            if let Ok(text) = std::fs::read_to_string(dir.join(&rel)) {
                reference.insert(rel, text);
            }
        }
    }
    let secrets = super::reference_secrets(&reference);
    let scratch = std::env::temp_dir().join(format!(
        "coder-eval-judge-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&scratch);
    let workdir = scratch.join("workspace");
    if let Err(e) = copy_tree(inputs.workspace, &workdir, &p.ignore_patterns()) {
        return fail(
            "internal",
            format!("could not copy the workspace for the judge: {e}"),
            None,
        );
    }
    if mounted && let Some(dir) = inputs.reference_dir {
        let _ = copy_tree(dir, &workdir.join(REFERENCE_MOUNT), &[]);
    }
    let model = p
        .pick(&p.model, |a| &a.model)
        .unwrap_or_else(|| super::DEFAULT_JUDGE_MODEL.to_string());
    let request = JudgeRunRequest {
        harness: p.harness(),
        model: model.clone(),
        prompt: rendered.text.clone(),
        system_prompt: SYSTEM_PROMPT.to_string(),
        allowed_tools: p.allowed_tools(),
        disallowed_tools: p.disallowed_tools(),
        permission_mode: p.pick(&p.permission_mode, |a| &a.permission_mode),
        max_turns: p.max_turns,
        turn_timeout: Duration::from_secs(p.turn_timeout),
        workdir: workdir.clone(),
        scripted_model: p.scripted_model.as_ref().map(|s| inputs.task_dir.join(s)),
    };
    let endpoint = format!("agent:{}", request.harness);
    let run = runner.run_judge(request).await;
    let _ = std::fs::remove_dir_all(&scratch);
    let mut record = JudgeRecord {
        model: model.clone(),
        endpoint,
        system_prompt: p
            .capture_transcript
            .then(|| super::cap(SYSTEM_PROMPT, p.max_transcript_chars / 10).0),
        prompt: p.capture_transcript.then(|| {
            super::cap(
                &scrub(&rendered.text, &secrets),
                p.max_transcript_chars * 3 / 10,
            )
            .0
        }),
        verdict: None,
        raw: None,
        usage: None,
        cost_usd: None,
        truncated: false,
    };
    let run = match run {
        Ok(run) => run,
        Err(e) => return fail("judge_request", scrub(&e, &secrets), Some(record)),
    };
    record.usage = run.usage.clone();
    record.cost_usd = run.cost_usd;
    record.raw = run
        .final_text
        .as_ref()
        .map(|t| super::cap(&scrub(t, &secrets), p.max_transcript_chars * 6 / 10).0);
    let Some(input) = find_verdict(&run) else {
        let why = run
            .failure
            .clone()
            .map(|f| format!(" (the judge's run ended: {f})"))
            .unwrap_or_default();
        return fail(
            "no_verdict",
            format!(
                "the judge gave no verdict: no submit_verdict call and no JSON verdict in its answer{why}"
            ),
            Some(record),
        );
    };
    let verdict = match JudgeVerdict::from_input(&input) {
        Ok(mut v) => {
            v.rationale = scrub(&v.rationale, &secrets);
            v.findings = v.findings.iter().map(|f| scrub(f, &secrets)).collect();
            v
        }
        Err(e) => {
            return fail(
                "invalid_verdict",
                format!("the judge's verdict is invalid: {}", scrub(&e, &secrets)),
                Some(record),
            );
        }
    };
    record.verdict = Some(verdict.clone());
    let mut details = format!(
        "score: {:.2}\nrationale: {}",
        verdict.score, verdict.rationale
    );
    for f in &verdict.findings {
        details.push_str(&format!("\n- {f}"));
    }
    JudgeOutcome {
        result: Ok((verdict.score, details)),
        record: Some(record),
    }
}

static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

#[cfg(test)]
mod tests;
