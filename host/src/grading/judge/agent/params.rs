//! `agent_judge`'s parameters: their defaults, the tool lists and what the judge's copy
//! of the workspace leaves out.

use serde::Deserialize;
use serde_json::{Map, Value};

/// What every judge copy leaves out, whatever `ignore_patterns` says.
pub(crate) const SECURITY_IGNORE_FLOOR: [&str; 3] = [".claude", ".mcp.json", "_reference"];
/// The default `ignore_patterns`.
pub(crate) const DEFAULT_IGNORE: [&str; 7] = [
    ".git",
    "node_modules",
    "__pycache__",
    ".venv",
    ".claude",
    ".mcp.json",
    "_reference",
];
/// The judge's tools by default (Claude Code).
pub(crate) const READ_ONLY_TOOLS: [&str; 3] = ["Read", "Glob", "Grep"];
/// Claude Code's tools that write, execute or reach the network: denied to the judge
/// unless the task allows them.
pub(crate) const CLAUDE_WRITE_TOOLS: [&str; 8] = [
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
pub(crate) const REFERENCE_MOUNT: &str = "_reference";

/// The judge's system prompt.
pub(crate) const SYSTEM_PROMPT: &str = "You are a strict reviewer grading another agent's work in \
this folder (a copy: nothing you do here changes the original). Inspect the files with your \
tools, follow the grading prompt, then submit your verdict: call the submit_verdict tool if \
you have it; otherwise end your final answer with exactly one line holding a JSON object \
{\"score\": <number 0..1>, \"rationale\": \"<one or two sentences>\", \"findings\": \
[\"<short observation>\", ...]}.";

fn yes() -> bool {
    true
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct JudgeAgent {
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
    #[allow(dead_code)]
    pub setting_sources: Option<Vec<String>>,
}

/// `agent_judge` params, parsed and checked once, at load ([`AgentJudge::parse`]).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct AgentJudge {
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
    #[serde(default = "crate::grading::judge::max_dialog_chars")]
    pub max_dialog_chars: usize,
    #[serde(default = "crate::grading::judge::max_file_chars")]
    pub max_file_chars: usize,
    #[serde(default = "fifty")]
    pub max_turns: u32,
    #[serde(default = "three_hundred")]
    pub turn_timeout: u64,
    #[serde(default)]
    pub agent: Option<JudgeAgent>,
    #[serde(default = "yes")]
    pub capture_transcript: bool,
    #[serde(default = "crate::grading::judge::max_transcript_chars")]
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
    pub(crate) fn parse(params: &Map<String, Value>) -> Result<AgentJudge, String> {
        crate::grading::judge::reject_verdict_channel(params)?;
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
        crate::grading::judge::positive("max_file_chars", p.max_file_chars)?;
        crate::grading::judge::positive("max_dialog_chars", p.max_dialog_chars)?;
        crate::grading::judge::positive("max_transcript_chars", p.max_transcript_chars)?;
        crate::grading::judge::check_files(&p.files)?;
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
    pub(crate) fn harness(&self) -> String {
        self.agent
            .as_ref()
            .and_then(|a| a.harness.clone())
            .unwrap_or_else(|| "claude-code".into())
    }

    pub(super) fn pick<T: Clone>(
        &self,
        top: &Option<T>,
        nested: impl Fn(&JudgeAgent) -> &Option<T>,
    ) -> Option<T> {
        top.clone()
            .or_else(|| self.agent.as_ref().and_then(|a| nested(a).clone()))
    }

    /// The judge's allowed tools: the author's, else (Claude Code) `Read, Glob, Grep`.
    pub(crate) fn allowed_tools(&self) -> Vec<String> {
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
    pub(crate) fn disallowed_tools(&self) -> Vec<String> {
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
    pub(crate) fn ignore_patterns(&self) -> Vec<String> {
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
