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
use serde_json::Value;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::time::Duration;

mod params;
pub(crate) use params::{AgentJudge, REFERENCE_MOUNT, SYSTEM_PROMPT};

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
pub(crate) fn find_verdict(run: &JudgeRun) -> Option<Value> {
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
pub(crate) async fn grade(
    p: &AgentJudge,
    inputs: &JudgeInputs<'_>,
    runner: Option<&dyn AgentRunner>,
) -> JudgeOutcome {
    let fail = |kind: &str, message: String, record: Option<JudgeRecord>| JudgeOutcome {
        result: Err((kind.to_string(), message)),
        record,
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
