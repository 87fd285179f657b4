//! Time-budget mode (`agent.budget_mode: time`): the agent works until a wall-clock
//! deadline, and when it ends its session early the host resumes the same session with a
//! prompt stating the time left (the Arena PR's mode; the run loop is `run::sessions`).
//!
//! Task-file fields, all under `agent:`:
//! - `budget_mode`: `iterations` (the default: one session, bounded by `run_limits`) or
//!   `time`;
//! - `timeout_seconds`: the time budget, s (else `run_limits.task_timeout`); fixed when the
//!   first session starts, after setup;
//! - `min_resume_seconds` (default 600 s, or half the budget when the budget is under
//!   1200 s: [`default_min_resume`]): a session is resumed only while at least this much
//!   time is left;
//! - `max_sessions` (default 20): at most this many sessions, the first included.
//!
//! Each is checked at load: a zero, negative or fractional count or duration is an error
//! naming the field, and so is `budget_mode: time` without a budget, with a
//! `min_resume_seconds` equal to or greater than the budget (no session could ever be
//! resumed), or with both `timeout_seconds` and a shorter `run_limits.task_timeout`.
//! When both are set, `timeout_seconds` is the budget (counted from the first session's
//! start) and `task_timeout` stays the task's hard limit (counted from the task's start,
//! setup included): whichever comes first stops the run, so a `task_timeout` shorter than
//! the budget would cut every budget short and is refused.

use serde::{Deserialize, Deserializer};
use std::time::Duration;

/// `agent.budget_mode`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum BudgetMode {
    /// One session, bounded by `run_limits` (coder_eval's default).
    #[default]
    Iterations,
    /// Sessions resumed until the time budget is spent.
    Time,
}

/// The default `agent.min_resume_seconds` of a budget of 1200 s or more.
pub(crate) const DEFAULT_MIN_RESUME: Duration = Duration::from_secs(600);

/// The `agent.min_resume_seconds` of a task that sets none: [`DEFAULT_MIN_RESUME`]
/// (600 s), or half the budget when that is less (a budget under 1200 s), so a
/// short budget can still resume a session that ends in its first half.
pub(crate) fn default_min_resume(budget: Duration) -> Duration {
    DEFAULT_MIN_RESUME.min(budget / 2)
}
/// The default `agent.max_sessions`.
pub(crate) const DEFAULT_MAX_SESSIONS: u32 = 20;

/// A time-budget run's settings, resolved at load.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimeBudget {
    /// The whole budget, from the first session's start.
    pub budget: Duration,
    /// A session is resumed only while at least this much is left.
    pub min_resume: Duration,
    /// Sessions at most, the first included (≥ 1).
    pub max_sessions: u32,
}

/// A positive number of seconds, at most 30 days ([`crate::limits::MAX_DURATION_SECS`]),
/// for `field`.
fn positive_seconds<'de, D: Deserializer<'de>>(
    d: D,
    field: &str,
) -> Result<Option<Duration>, D::Error> {
    let Some(n) = Option::<f64>::deserialize(d)? else {
        return Ok(None);
    };
    if !(n.is_finite() && n > 0.0) {
        return Err(serde::de::Error::custom(format!(
            "agent.{field} must be a positive number of seconds; got {n}"
        )));
    }
    let max = crate::limits::MAX_DURATION_SECS;
    if n > max {
        return Err(serde::de::Error::custom(format!(
            "agent.{field} must be at most 30 days ({max} s); got {n}"
        )));
    }
    Ok(Some(Duration::from_secs_f64(n)))
}

pub(super) fn timeout_seconds<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<Option<Duration>, D::Error> {
    positive_seconds(d, "timeout_seconds")
}

pub(super) fn min_resume_seconds<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<Option<Duration>, D::Error> {
    positive_seconds(d, "min_resume_seconds")
}

pub(super) fn max_sessions<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u32>, D::Error> {
    let Some(n) = Option::<f64>::deserialize(d)? else {
        return Ok(None);
    };
    if !(n.is_finite() && n >= 1.0 && n.fract() == 0.0 && n <= f64::from(u32::MAX)) {
        return Err(serde::de::Error::custom(format!(
            "agent.max_sessions must be a whole number of sessions, at least 1; got {n}"
        )));
    }
    Ok(Some(n as u32))
}

/// The time-budget fields of a task's `agent:` section as read, before they are resolved
/// (each already checked to be positive by its own deserializer).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Requested {
    /// `agent.budget_mode`.
    pub mode: Option<BudgetMode>,
    /// `agent.timeout_seconds`.
    pub timeout: Option<Duration>,
    /// `agent.min_resume_seconds`.
    pub min_resume: Option<Duration>,
    /// `agent.max_sessions`.
    pub max_sessions: Option<u32>,
}

impl Requested {
    /// The time budget of a `budget_mode: time` task (`None` in iterations mode), from
    /// `timeout_seconds`, else `task_timeout` (the run limit). Errors name the field:
    /// time mode without a budget, `min_resume_seconds` equal to or greater than the
    /// budget (both values, in seconds), a `task_timeout` shorter than `timeout_seconds`
    /// (both values), or time-mode fields in iterations mode.
    pub(crate) fn resolve(
        self,
        task_timeout: Option<Duration>,
    ) -> Result<Option<TimeBudget>, String> {
        match self.mode.unwrap_or_default() {
            BudgetMode::Iterations => {
                let stray = [
                    ("timeout_seconds", self.timeout.is_some()),
                    ("min_resume_seconds", self.min_resume.is_some()),
                    ("max_sessions", self.max_sessions.is_some()),
                ];
                if let Some((field, _)) = stray.iter().find(|(_, set)| *set) {
                    return Err(format!(
                        "agent.{field} is for `budget_mode: time` (resumed sessions); this task \
                         runs one session: set `agent.budget_mode: time`, or remove it (one session's limit \
                         is `run_limits.task_timeout`)"
                    ));
                }
                Ok(None)
            }
            BudgetMode::Time => {
                let budget = self.timeout.or(task_timeout).ok_or(
                    "agent.budget_mode: `time` needs a time budget: set `agent.timeout_seconds` \
                     (or `run_limits.task_timeout`)",
                )?;
                let from = if self.timeout.is_some() {
                    "agent.timeout_seconds"
                } else {
                    "run_limits.task_timeout"
                };
                if let (Some(budget), Some(hard)) = (self.timeout, task_timeout)
                    && hard < budget
                {
                    return Err(format!(
                        "run_limits.task_timeout ({} s) is shorter than the time budget, \
                         agent.timeout_seconds ({} s): the task's hard limit (counted from \
                         its start, setup included) would stop the run before its budget is \
                         spent; raise run_limits.task_timeout, or remove it (the budget then \
                         bounds the run)",
                        hard.as_secs_f64(),
                        budget.as_secs_f64()
                    ));
                }
                if let Some(min_resume) = self.min_resume
                    && min_resume >= budget
                {
                    let than = if min_resume == budget {
                        "equal to"
                    } else {
                        "greater than"
                    };
                    return Err(format!(
                        "agent.min_resume_seconds ({} s) is {than} the time budget, \
                         {from} ({} s): no session would ever be resumed (the first \
                         session always takes some of the budget); lower it or raise the \
                         budget",
                        min_resume.as_secs_f64(),
                        budget.as_secs_f64()
                    ));
                }
                Ok(Some(TimeBudget {
                    budget,
                    min_resume: self.min_resume.unwrap_or(default_min_resume(budget)),
                    max_sessions: self.max_sessions.unwrap_or(DEFAULT_MAX_SESSIONS),
                }))
            }
        }
    }
}

/// The prompt of a continuation: the time left, and that the task is the same one.
pub(crate) fn continuation_prompt(left: Duration, session: u32) -> String {
    let secs = left.as_secs();
    let left = if secs >= 120 {
        format!("{} minutes", secs / 60)
    } else {
        format!("{secs} seconds")
    };
    format!(
        "You ended your session, but time remains: about {left} of the time budget are left \
         (this is session {session}). Continue working on the same task: check and improve \
         your work. Stop when you are done."
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requested_fields_resolve_or_name_the_stray_one() {
        let time = Requested {
            mode: Some(BudgetMode::Time),
            min_resume: Some(Duration::from_secs(5)),
            ..Requested::default()
        };
        assert_eq!(
            time.resolve(Some(Duration::from_secs(60))).unwrap(),
            Some(TimeBudget {
                budget: Duration::from_secs(60),
                min_resume: Duration::from_secs(5),
                max_sessions: DEFAULT_MAX_SESSIONS,
            })
        );
        let stray = Requested {
            min_resume: Some(Duration::from_secs(5)),
            ..Requested::default()
        };
        let err = stray.resolve(None).unwrap_err();
        assert!(err.contains("agent.min_resume_seconds"), "{err}");
        assert_eq!(Requested::default().resolve(None).unwrap(), None);
    }

    #[test]
    fn a_min_resume_above_the_budget_is_refused_naming_both() {
        let time = |timeout: Option<u64>, min_resume: u64| Requested {
            mode: Some(BudgetMode::Time),
            timeout: timeout.map(Duration::from_secs),
            min_resume: Some(Duration::from_secs(min_resume)),
            ..Requested::default()
        };
        let err = time(Some(300), 900).resolve(None).unwrap_err();
        assert!(
            err.contains("agent.min_resume_seconds (900 s)")
                && err.contains("agent.timeout_seconds (300 s)"),
            "{err}"
        );
        // The budget from the run limit is named as such.
        let err = time(None, 120)
            .resolve(Some(Duration::from_secs(60)))
            .unwrap_err();
        assert!(
            err.contains("agent.min_resume_seconds (120 s)")
                && err.contains("run_limits.task_timeout (60 s)"),
            "{err}"
        );
        // Equal to the budget is refused too: the time left is always less once the
        // first session has run.
        let err = time(Some(30), 30).resolve(None).unwrap_err();
        assert!(
            err.contains("agent.min_resume_seconds (30 s) is equal to the time budget"),
            "{err}"
        );
        assert!(time(Some(300), 299).resolve(None).unwrap().is_some());
    }

    #[test]
    fn the_default_min_resume_is_halved_for_a_short_budget() {
        let with_budget = |timeout: Option<f64>, task_timeout: Option<f64>| {
            Requested {
                mode: Some(BudgetMode::Time),
                timeout: timeout.map(Duration::from_secs_f64),
                ..Requested::default()
            }
            .resolve(task_timeout.map(Duration::from_secs_f64))
            .unwrap()
            .unwrap()
            .min_resume
        };
        // A budget under the default (600 s) could never resume with it.
        assert_eq!(with_budget(Some(0.5), None), Duration::from_millis(250));
        assert_eq!(with_budget(None, Some(30.0)), Duration::from_secs(15));
        assert_eq!(with_budget(Some(900.0), None), Duration::from_secs(450));
        // From 1200 s on, the default stands.
        assert_eq!(with_budget(Some(1200.0), None), DEFAULT_MIN_RESUME);
        assert_eq!(with_budget(Some(3600.0), None), DEFAULT_MIN_RESUME);
    }

    #[test]
    fn a_task_timeout_shorter_than_the_budget_is_refused_naming_both() {
        let time = |timeout: u64| Requested {
            mode: Some(BudgetMode::Time),
            timeout: Some(Duration::from_secs(timeout)),
            ..Requested::default()
        };
        let err = time(30).resolve(Some(Duration::from_secs(10))).unwrap_err();
        assert!(
            err.contains("run_limits.task_timeout (10 s)")
                && err.contains("agent.timeout_seconds (30 s)"),
            "{err}"
        );
        // A longer (or equal) hard limit stands beside the budget.
        let tb = time(30).resolve(Some(Duration::from_secs(40))).unwrap();
        assert_eq!(tb.unwrap().budget, Duration::from_secs(30));
        assert!(time(30).resolve(Some(Duration::from_secs(30))).is_ok());
    }

    #[test]
    fn the_continuation_prompt_states_the_time_left() {
        let p = continuation_prompt(Duration::from_secs(1500), 2);
        assert!(p.contains("25 minutes") && p.contains("session 2"), "{p}");
        assert!(continuation_prompt(Duration::from_secs(42), 3).contains("42 seconds"));
    }
}
