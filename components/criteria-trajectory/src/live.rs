//! The live side of `command_executed` and `skill_triggered` (`stop_early`), with
//! coder_eval's decidability rules:
//!
//! | criterion | can pass live | can fail live |
//! |---|---|---|
//! | `command_executed` | `max_count` unset and `min_count > 0`: passes once `min_count` matching calls were made | `max_count` set: fails once more than `max_count` matching calls were made (`min_count: 0, max_count: 0` = "must not run") |
//! | `skill_triggered` | positive row (`expected_skill` = `skill_name`): passes once a call engaging the skill finished | distractor row (`expected_skill` ≠ `skill_name`): fails once a call engaging the skill finished |
//!
//! A bounded `command_executed` (`max_count` set) never passes live: a pass is final only
//! at the end of the run. `min_count: 0` without `max_count` can decide nothing (it always
//! scores 1).
//!
//! When a call counts: `command_executed` counts a matching call when it finishes, if it
//! was executed (any end but `denied`; with `require_success`, ok with exit code 0): a
//! call that only started (the host stopped the CLI, the stream cut) or that the CLI
//! refused never ran, so it neither passes nor fails the criterion. With `count_attempts`
//! (attempts count) it counts when it starts, so a fail-stop can end the run before the
//! attempt runs on a CLI that streams a call before running it (Claude Code, Pi). `skill_triggered` decides when the engaging call finishes (a
//! `Skill` call's body is its result: an in-flight call has engaged nothing yet). Both
//! count the calls the batch grade counts, with the same matching code, so a decided
//! verdict agrees with `grade` on the trajectory at that event.

use crate::{
    CommandExecuted, CommandMatcher, SkillTriggered, engaged_skills, skill_path_re, validate,
};
use grader_kit::{
    Decidability, Event, LiveVerdict, StampedEvent, ToolStatus, ToolUse, Watch, params_as,
};
use regex::Regex;
use serde_json::Value;
use std::collections::HashMap;

/// The criterion types of this component that can be watched live.
pub const LIVE_TYPES: &[&str] = &["command_executed", "skill_triggered"];

/// A live watcher of one `command_executed` or `skill_triggered` criterion.
pub enum TrajectoryWatch {
    Command(CommandWatch),
    Skill(SkillWatch),
}

impl Watch for TrajectoryWatch {
    fn arm(params: &Value, _prompt: &str) -> Result<Self, String> {
        let kind = params.get("type").and_then(Value::as_str).unwrap_or("");
        if !LIVE_TYPES.contains(&kind) {
            return Err(format!(
                "`{kind}` cannot be judged live (live criteria of criteria-trajectory: {})",
                LIVE_TYPES.join(", ")
            ));
        }
        validate(params)?;
        Ok(match kind {
            "command_executed" => TrajectoryWatch::Command(CommandWatch::new(params_as(params)?)?),
            _ => TrajectoryWatch::Skill(SkillWatch::new(params_as(params)?)),
        })
    }

    fn decidability(&self) -> Decidability {
        match self {
            TrajectoryWatch::Command(w) => w.decidability(),
            TrajectoryWatch::Skill(w) => w.decidability(),
        }
    }

    fn observe(&mut self, event: &StampedEvent) -> LiveVerdict {
        match self {
            TrajectoryWatch::Command(w) => w.observe(event),
            TrajectoryWatch::Skill(w) => w.observe(event),
        }
    }
}

/// A tool call as the batch grade sees it right after its start.
fn started(stamp_us: u64, event: &Event) -> Option<ToolUse> {
    let Event::ToolCallStarted {
        call_id,
        name,
        input_json,
        parent_call_id,
    } = event
    else {
        return None;
    };
    Some(ToolUse {
        call_id: call_id.clone(),
        name: name.clone(),
        input: serde_json::from_str(input_json)
            .unwrap_or_else(|_| Value::String(input_json.clone())),
        parent_call_id: parent_call_id.clone(),
        status: None,
        exit_code: None,
        output_excerpt: String::new(),
        stamp_us,
    })
}

/// `command_executed`, live.
pub struct CommandWatch {
    matcher: CommandMatcher,
    require_success: bool,
    count_attempts: bool,
    min_count: u32,
    max_count: Option<u32>,
    /// Matching calls counted so far.
    count: u32,
    /// Matching calls started and not yet finished (counted at their end).
    pending: HashMap<String, ()>,
}

impl CommandWatch {
    fn new(p: CommandExecuted) -> Result<CommandWatch, String> {
        Ok(CommandWatch {
            matcher: CommandMatcher::new(&p)?,
            require_success: p.require_success,
            count_attempts: p.count_attempts,
            min_count: p.min_count,
            max_count: p.max_count,
            count: 0,
            pending: HashMap::new(),
        })
    }

    fn decidability(&self) -> Decidability {
        Decidability {
            can_pass: self.max_count.is_none() && self.min_count > 0,
            can_fail: self.max_count.is_some(),
        }
    }

    fn observe(&mut self, stamped: &StampedEvent) -> LiveVerdict {
        match &stamped.event {
            Event::ToolCallStarted { call_id, .. } => {
                let Some(tool) = started(stamped.stamp_us, &stamped.event) else {
                    return LiveVerdict::Undecided;
                };
                if !self.matcher.matches(&tool) {
                    return LiveVerdict::Undecided;
                }
                if self.count_attempts && !self.require_success {
                    // An attempt counts as it is made.
                    self.count += 1;
                } else {
                    self.pending.insert(call_id.clone(), ());
                    return LiveVerdict::Undecided;
                }
            }
            Event::ToolCallFinished {
                call_id,
                status,
                exit_code,
                ..
            } => {
                if self.pending.remove(call_id).is_none() {
                    return LiveVerdict::Undecided;
                }
                let counts = if self.require_success {
                    *status == ToolStatus::Ok && exit_code.is_none_or(|c| c == 0)
                } else {
                    // Ran (ok, error or unknown); a refused call never ran.
                    *status != ToolStatus::Denied
                };
                if !counts {
                    return LiveVerdict::Undecided;
                }
                self.count += 1;
            }
            _ => return LiveVerdict::Undecided,
        }
        match self.max_count {
            Some(max) if self.count > max => LiveVerdict::Failed(format!(
                "{} matching calls, more than max_count {max}",
                self.count
            )),
            Some(_) => LiveVerdict::Undecided,
            None if self.min_count > 0 && self.count >= self.min_count => LiveVerdict::Passed(1.0),
            None => LiveVerdict::Undecided,
        }
    }
}

/// `skill_triggered`, live.
pub struct SkillWatch {
    skill: String,
    /// The row expects the skill to fire (a positive row), else it is a distractor.
    expected: bool,
    expected_skill: String,
    path_re: Regex,
    /// Calls started and not yet finished.
    open: HashMap<String, ToolUse>,
}

impl SkillWatch {
    fn new(p: SkillTriggered) -> SkillWatch {
        let expected_skill = p.expected_skill.unwrap_or_else(|| p.skill_name.clone());
        SkillWatch {
            expected: expected_skill == p.skill_name,
            skill: p.skill_name,
            expected_skill,
            path_re: skill_path_re(),
            open: HashMap::new(),
        }
    }

    fn decidability(&self) -> Decidability {
        Decidability {
            can_pass: self.expected,
            can_fail: !self.expected,
        }
    }

    fn observe(&mut self, stamped: &StampedEvent) -> LiveVerdict {
        match &stamped.event {
            Event::ToolCallStarted { call_id, .. } => {
                if let Some(tool) = started(stamped.stamp_us, &stamped.event) {
                    self.open.insert(call_id.clone(), tool);
                }
                LiveVerdict::Undecided
            }
            Event::ToolCallFinished { call_id, .. } => {
                let Some(tool) = self.open.remove(call_id) else {
                    return LiveVerdict::Undecided;
                };
                let mut engaged = Vec::new();
                engaged_skills(&tool, &self.path_re, &mut engaged);
                if !engaged.contains(&self.skill) {
                    LiveVerdict::Undecided
                } else if self.expected {
                    LiveVerdict::Passed(1.0)
                } else {
                    LiveVerdict::Failed(format!(
                        "skill `{}` engaged by call `{call_id}` ({}), where the row expects {}",
                        self.skill,
                        tool.name,
                        if self.expected_skill.is_empty() {
                            "no skill".to_string()
                        } else {
                            format!("`{}`", self.expected_skill)
                        }
                    ))
                }
            }
            _ => LiveVerdict::Undecided,
        }
    }
}

#[cfg(test)]
mod tests;
