//! Built-in criteria over the agent's trajectory (its tool calls and final answer).
//!
//! **`command_executed`** — did the agent run matching commands?
//! - `tool_name` (optional): the tool, compared case-insensitively. `Bash` (or `shell`)
//!   also matches any CLI's shell tool, i.e. any call whose input has a `command` or
//!   `cmd` (Codex `exec_command`, Gemini `run_shell_command`, ...).
//! - `command_pattern` (optional regex, `.` matching newlines): searched in the call's
//!   shell command, raw and with `bash -lc '...'` / `sh -c "..."` wrappers unwrapped
//!   (either may match); for a call without a shell command, in its input as JSON.
//! - `exclude_pattern` (optional regex): a call it matches (raw or unwrapped) is skipped.
//! - `require_success` (default false): count only calls that ended ok (exit code 0 when
//!   known).
//! - `min_count` (default 1), `max_count` (optional, ≥ `min_count`).
//! - `count_attempts` (default false; this project's, not coder_eval's): also count calls
//!   the CLI refused (status `denied`: a permission rule, a declined approval). By
//!   default a refused call was not executed and does not count, so `command_executed`
//!   never passes for a command that never ran (and "must not run" is not failed by a
//!   refused attempt). A call with no end in the trajectory (interrupted: the host
//!   stopped the CLI, the stream cut) is not known to have run and counts only as an
//!   attempt, like a refused one. Live (`stop_early`), a call counts when it finishes
//!   (with `count_attempts`, when it starts; with `require_success`, when it ends ok), so
//!   the live verdict is the batch grade's at that event.
//!
//! Score: without `max_count`, `min(1, matches / min_count)` (1 when `min_count` is 0);
//! with it, 1 when `min_count ≤ matches ≤ max_count`, else 0 — so `min_count: 0,
//! max_count: 0` means "must not run".
//!
//! **`commands_efficiency`** — `expected_commands` (≥ 1): score
//! `expected / max(actual, expected)` where `actual` counts every tool call (sub-agents'
//! included); 1 at or under budget.
//!
//! **`skill_triggered`** — `skill_name`, `expected_skill` (default: `skill_name`; `""`
//! for a row where no skill should fire). The skill counts as engaged when a `Skill`
//! tool call names it (`skill` input, a `plugin:` prefix stripped) or any string in any
//! tool input holds `skills/<skill_name>/`. Score 1 when engaged exactly when expected
//! (`expected_skill == skill_name`).
//!
//! **`classification_match`** — the agent's answer as a label.
//! - `expected_label` (required); `allowed_labels` (optional; the label set, which must
//!   hold `expected_label`; default: just `expected_label`); `case_sensitive` (default
//!   false);
//! - the text judged: the workspace file `path` when given, else the agent's final text
//!   (`final_text`, which the host fills in from the run; without it, the last final
//!   result's text, else the last main-thread assistant message).
//! - The observed label: the allowed label equal to the whole trimmed text; else the one
//!   allowed label found in the text as a whole word; `(ambiguous)` when several are,
//!   `(other)` when none is, `(none)` for an empty text. Score 1 when it is the expected
//!   label.

use criteria_common::{ParamKind, PathSeg, check_path};
use grader_kit::{Criterion, GradingInput, ToolUse, Verdict, params_as, unwrap_shell};
use regex::Regex;
use serde::Deserialize;
use serde_json::{Map, Value};

/// The criterion types this component grades.
pub const TYPES: &[&str] = &[
    "command_executed",
    "commands_efficiency",
    "skill_triggered",
    "classification_match",
];

/// Which parameter strings are regexes or workspace paths (see
/// [`criteria_common::ParamKindFn`]): `command_executed`'s `command_pattern` and
/// `exclude_pattern`, `classification_match`'s `path`.
pub fn param_kind(
    criterion_type: &str,
    path: &[PathSeg<'_>],
    _siblings: &Map<String, Value>,
) -> Option<ParamKind> {
    use PathSeg::Key;
    match (criterion_type, path) {
        ("command_executed", [Key("command_pattern" | "exclude_pattern")]) => {
            Some(ParamKind::Regex)
        }
        ("classification_match", [Key("path")]) => Some(ParamKind::WorkspacePath),
        _ => None,
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CommandExecuted {
    #[serde(default)]
    tool_name: Option<String>,
    #[serde(default)]
    command_pattern: Option<String>,
    #[serde(default)]
    exclude_pattern: Option<String>,
    #[serde(default = "one")]
    min_count: u32,
    #[serde(default)]
    max_count: Option<u32>,
    #[serde(default)]
    require_success: bool,
    #[serde(default)]
    count_attempts: bool,
}

fn one() -> u32 {
    1
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CommandsEfficiency {
    expected_commands: u32,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SkillTriggered {
    skill_name: String,
    #[serde(default)]
    expected_skill: Option<String>,
}

fn pattern(what: &str, p: &Option<String>) -> Result<Option<Regex>, String> {
    p.as_deref()
        .map(|p| criteria_common::regex(what, p, criteria_common::FLAG_DOTALL))
        .transpose()
}

/// Checks `params` (with its `type`) the way grading reads them.
pub fn validate(params: &Value) -> Result<(), String> {
    let kind = params.get("type").and_then(Value::as_str).unwrap_or("");
    match kind {
        "command_executed" => {
            let p: CommandExecuted = params_as(params)?;
            pattern("command_pattern", &p.command_pattern)?;
            pattern("exclude_pattern", &p.exclude_pattern)?;
            if let Some(max) = p.max_count
                && max < p.min_count
            {
                return Err(format!(
                    "max_count ({max}) must be >= min_count ({})",
                    p.min_count
                ));
            }
            Ok(())
        }
        "commands_efficiency" => {
            let p: CommandsEfficiency = params_as(params)?;
            if p.expected_commands == 0 {
                return Err("expected_commands must be at least 1".into());
            }
            Ok(())
        }
        "skill_triggered" => {
            let p: SkillTriggered = params_as(params)?;
            if p.skill_name.trim().is_empty() {
                return Err("skill_name must not be empty".into());
            }
            Ok(())
        }
        "classification_match" => {
            let p: ClassificationMatch = params_as(params)?;
            if let Some(path) = &p.path {
                check_path("path", path)?;
            }
            if let Some(allowed) = &p.allowed_labels {
                let norm = |s: &str| normalize(s, p.case_sensitive);
                if allowed.is_empty() {
                    return Err("allowed_labels must not be empty".into());
                }
                if !allowed.iter().any(|a| norm(a) == norm(&p.expected_label)) {
                    return Err(format!(
                        "expected_label `{}` is not one of allowed_labels",
                        p.expected_label
                    ));
                }
            }
            Ok(())
        }
        other => Err(format!("criteria-trajectory does not grade type `{other}`")),
    }
}

/// Grades one trajectory criterion.
pub fn grade(input: &GradingInput) -> Result<Verdict, String> {
    validate(&input.params)?;
    match input.kind() {
        "command_executed" => command_executed(input, input.params()?),
        "commands_efficiency" => commands_efficiency(input, input.params()?),
        "skill_triggered" => skill_triggered(input, input.params()?),
        "classification_match" => classification_match(input, input.params()?),
        other => Err(format!("criteria-trajectory does not grade type `{other}`")),
    }
}

fn is_shell_alias(name: &str) -> bool {
    name.eq_ignore_ascii_case("bash") || name.eq_ignore_ascii_case("shell")
}

/// The texts a call is matched against: the raw and unwrapped shell command, or the input
/// as JSON.
fn match_texts(tool: &ToolUse) -> Vec<String> {
    match tool.shell_command() {
        Some(raw) => {
            let inner = unwrap_shell(&raw);
            if inner == raw {
                vec![raw]
            } else {
                vec![raw, inner]
            }
        }
        None => vec![tool.match_text()],
    }
}

/// Which calls `command_executed` counts: the tool filter and the two patterns (shared by
/// the batch grade and the live watcher, so both count the same calls).
struct CommandMatcher {
    tool_name: Option<String>,
    include: Option<Regex>,
    exclude: Option<Regex>,
}

impl CommandMatcher {
    fn new(p: &CommandExecuted) -> Result<CommandMatcher, String> {
        Ok(CommandMatcher {
            tool_name: p.tool_name.clone(),
            include: pattern("command_pattern", &p.command_pattern)?,
            exclude: pattern("exclude_pattern", &p.exclude_pattern)?,
        })
    }

    /// Whether `tool` passes the tool filter and the patterns (its status is not looked
    /// at: `require_success` is the caller's).
    fn matches(&self, tool: &ToolUse) -> bool {
        if let Some(want) = &self.tool_name {
            let same = tool.name.eq_ignore_ascii_case(want)
                || (is_shell_alias(want) && tool.shell_command().is_some());
            if !same {
                return false;
            }
        }
        let texts = match_texts(tool);
        let found = |re: &Regex| {
            texts
                .iter()
                .any(|t| criteria_common::search(re, t).is_some())
        };
        if let Some(re) = &self.include
            && !found(re)
        {
            return false;
        }
        if let Some(re) = &self.exclude
            && found(re)
        {
            return false;
        }
        true
    }
}

fn command_executed(input: &GradingInput, p: CommandExecuted) -> Result<Verdict, String> {
    let matcher = CommandMatcher::new(&p)?;
    let mut matches = Vec::new();
    for tool in input.tool_uses() {
        if p.require_success && !tool.succeeded() {
            continue;
        }
        if !p.count_attempts && matches!(tool.status, None | Some(grader_kit::ToolStatus::Denied)) {
            continue;
        }
        if !matcher.matches(&tool) {
            continue;
        }
        let label = match tool.shell_command() {
            Some(cmd) => cmd,
            None => format!(
                "{}({})",
                tool.name,
                grader_kit::truncate(&tool.match_text(), 80)
            ),
        };
        matches.push(label);
    }
    let n = matches.len() as u32;
    let (score, range) = match p.max_count {
        None if p.min_count == 0 => (1.0, format!("{n} matches (none required)")),
        None => (
            (n as f64 / p.min_count as f64).min(1.0),
            format!("{n}/{} required matches", p.min_count),
        ),
        Some(max) => (
            if (p.min_count..=max).contains(&n) {
                1.0
            } else {
                0.0
            },
            format!("{n} matches (allowed {}..={max})", p.min_count),
        ),
    };
    let mut filters = Vec::new();
    if let Some(t) = &p.tool_name {
        filters.push(format!("tool_name={t}"));
    }
    if let Some(c) = &p.command_pattern {
        filters.push(format!("pattern=/{c}/"));
    }
    if let Some(e) = &p.exclude_pattern {
        filters.push(format!("exclude=/{e}/"));
    }
    if p.require_success {
        filters.push("require_success".into());
    }
    if p.count_attempts {
        filters.push("count_attempts".into());
    }
    let mut details = format!(
        "{range}; filters: {}",
        if filters.is_empty() {
            "none".into()
        } else {
            filters.join(", ")
        }
    );
    if !matches.is_empty() {
        let examples: Vec<String> = matches
            .iter()
            .take(3)
            .map(|m| format!("{:?}", grader_kit::truncate(m, 120)))
            .collect();
        details.push_str(&format!("; e.g. {}", examples.join(", ")));
    }
    Ok(Verdict::new(score, details))
}

fn commands_efficiency(input: &GradingInput, p: CommandsEfficiency) -> Result<Verdict, String> {
    let actual = input.tool_uses().len() as u32;
    let expected = p.expected_commands;
    let score = expected as f64 / actual.max(expected) as f64;
    Ok(Verdict::new(
        score,
        format!("{actual} tool calls, {expected} expected; score {score:.2}"),
    ))
}

/// A skill's folder in a path: `skills/<name>/`.
fn skill_path_re() -> Regex {
    Regex::new(r"skills[\\/]+([A-Za-z0-9][A-Za-z0-9_-]*)[\\/]+").expect("valid")
}

/// Every skill name a call engages.
fn engaged_skills(tool: &ToolUse, path_re: &Regex, out: &mut Vec<String>) {
    if tool.name == "Skill"
        && let Some(skill) = tool.input.get("skill").and_then(Value::as_str)
    {
        out.push(skill.rsplit(':').next().unwrap_or(skill).to_string());
    }
    fn strings<'a>(v: &'a Value, acc: &mut Vec<&'a str>) {
        match v {
            Value::String(s) => acc.push(s),
            Value::Array(items) => items.iter().for_each(|i| strings(i, acc)),
            Value::Object(map) => map.values().for_each(|i| strings(i, acc)),
            _ => {}
        }
    }
    let mut texts = Vec::new();
    strings(&tool.input, &mut texts);
    for text in texts {
        for cap in path_re.captures_iter(text) {
            out.push(cap[1].to_string());
        }
    }
}

fn skill_triggered(input: &GradingInput, p: SkillTriggered) -> Result<Verdict, String> {
    let path_re = skill_path_re();
    let mut engaged = Vec::new();
    for tool in input.tool_uses() {
        engaged_skills(&tool, &path_re, &mut engaged);
    }
    let triggered = engaged.contains(&p.skill_name);
    let expected = p.expected_skill.as_deref().unwrap_or(&p.skill_name) == p.skill_name;
    let yes_no = |b: bool| if b { "yes" } else { "no" };
    engaged.sort();
    engaged.dedup();
    let seen = if engaged.is_empty() {
        "none".to_string()
    } else {
        engaged.join(", ")
    };
    Ok(Verdict::binary(
        triggered == expected,
        format!(
            "skill `{}`: observed={}, expected={}; skills engaged: {seen}",
            p.skill_name,
            yes_no(triggered),
            yes_no(expected)
        ),
    ))
}

/// The component: dispatches on `params["type"]`.
pub struct Trajectory;

impl Criterion for Trajectory {
    fn grade(input: &GradingInput) -> Result<Verdict, String> {
        grade(input)
    }
}

mod classification;
use classification::{ClassificationMatch, classification_match, normalize};
mod live;
pub use live::{LIVE_TYPES, TrajectoryWatch};

grader_kit::export_live_grader!(Trajectory, TrajectoryWatch);

#[cfg(test)]
mod tests;
