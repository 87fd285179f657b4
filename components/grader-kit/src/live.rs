//! Live criteria: judging a run while it happens (`coder-eval:grader/live@0.2.0`, the
//! `live-grader` world), so the host can stop the run early (`stop_early`).
//!
//! A live criterion is armed once per run with its parameters and the task's prompt
//! ([`Watch::arm`]), says which verdicts it can reach from a partial trajectory
//! ([`Watch::decidability`]), then sees the run's normalized events one at a time, in
//! order ([`Watch::observe`]). It answers [`LiveVerdict::Undecided`] until the events
//! seen so far settle the outcome whatever comes next, then `Passed` or `Failed`. The host
//! latches the first decided verdict and stops calling `observe` on that watcher.
//!
//! A live verdict only *triggers* a stop: the criterion's score always comes from its
//! batch [`Criterion::grade`](crate::Criterion::grade) on the frozen trajectory after the
//! run ends. So a watcher must be monotone (never decide what a later event could undo)
//! and should agree with `grade` on every prefix it decides.
//!
//! ```ignore
//! struct RanTests { seen: bool }
//! impl grader_kit::Watch for RanTests {
//!     fn arm(params: &serde_json::Value, _prompt: &str) -> Result<Self, String> {
//!         Ok(RanTests { seen: false })
//!     }
//!     fn decidability(&self) -> grader_kit::Decidability {
//!         grader_kit::Decidability { can_pass: true, can_fail: false }
//!     }
//!     fn observe(&mut self, event: &grader_kit::StampedEvent) -> grader_kit::LiveVerdict {
//!         grader_kit::LiveVerdict::Undecided
//!     }
//! }
//! grader_kit::export_live_grader!(MyCriterion, RanTests);
//! ```

use crate::StampedEvent;

/// Which verdicts one armed criterion instance can reach before the run ends
/// (`live.decidability`). A pure function of the instance's parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Decidability {
    /// It can answer [`LiveVerdict::Passed`] from a partial trajectory.
    pub can_pass: bool,
    /// It can answer [`LiveVerdict::Failed`] from a partial trajectory.
    pub can_fail: bool,
}

impl Decidability {
    /// Neither verdict can be reached live (a "dead arm").
    pub fn is_dead(&self) -> bool {
        !self.can_pass && !self.can_fail
    }
}

/// What a watcher says after one event (`live.live-verdict`).
#[derive(Debug, Clone, PartialEq)]
pub enum LiveVerdict {
    /// The events so far do not settle the outcome.
    Undecided,
    /// Settled: met, with this score (0.0 to 1.0); no later event can undo it.
    Passed(f64),
    /// Settled: not met, and no later event can change that. The reason, for people.
    Failed(String),
}

impl LiveVerdict {
    /// Whether the verdict is settled (passed or failed).
    pub fn is_decided(&self) -> bool {
        !matches!(self, LiveVerdict::Undecided)
    }
}

/// One criterion watching one run. Implemented by criteria that can decide before the run
/// ends; exported with [`export_live_grader!`](crate::export_live_grader) beside the
/// batch [`Criterion`](crate::Criterion).
pub trait Watch: Sized + 'static {
    /// A watcher for `params` (the criterion's parameters as a JSON object, with `type`
    /// for the built-in criteria) and the task's initial prompt. `Err` says why these
    /// parameters cannot be watched (the host refuses the task at load with it).
    fn arm(params: &serde_json::Value, prompt: &str) -> Result<Self, String>;

    /// What this instance can decide live; must not change over the run.
    fn decidability(&self) -> Decidability;

    /// One more event, in order. Once this returns a decided verdict the host calls it no
    /// more. Must be deterministic: the same events give the same verdicts at the same
    /// event, live and in replay.
    fn observe(&mut self, event: &StampedEvent) -> LiveVerdict;
}

/// Runs a watcher over `events` the way the host does: arms it, feeds events until the
/// first decided verdict, and returns that verdict with the index of the event that
/// decided it (`None` when the trajectory ends undecided). For tests and benchmarks.
pub fn watch_all<W: Watch>(
    params: &serde_json::Value,
    events: &[StampedEvent],
) -> Result<(LiveVerdict, Option<usize>), String> {
    let mut watcher = W::arm(params, "")?;
    for (i, event) in events.iter().enumerate() {
        let verdict = watcher.observe(event);
        if verdict.is_decided() {
            return Ok((verdict, Some(i)));
        }
    }
    Ok((LiveVerdict::Undecided, None))
}
