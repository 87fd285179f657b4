//! Time-budget mode in `task.json` (`time_budget`): the budget, why no further session
//! was started, and one [`SessionRecord`] per launch of the CLI (the first session and
//! each resumed one), in order.

use super::{StopReason, TurnStatus};
use harness_kit::Usage;
use serde::{Deserialize, Serialize};

/// `task.json` `time_budget`: present only for an `agent.budget_mode: time` task that
/// reached its first session. The task's `turn` is the last session's record; the
/// criteria judged every session's events (one trajectory, in order).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimeBudgetRecord {
    /// The budget, ms, from the first session's start (after setup).
    pub budget_ms: u64,
    /// A session was resumed only while at least this much was left, ms.
    pub min_resume_ms: u64,
    /// Sessions allowed, the first included.
    pub max_sessions: u32,
    /// Why no further session was started.
    pub ended: SessionsEnd,
    /// One sentence on `ended` when the host could not resume (the plan's refusal, no
    /// session id in the stream); `null` otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_note: Option<String>,
    /// Every session, in order.
    pub sessions: Vec<SessionRecord>,
}

/// [`TimeBudgetRecord::ended`], snake_case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SessionsEnd {
    /// The last session was stopped at the deadline.
    DeadlineReached,
    /// The agent ended its session with less than `min_resume_seconds` left.
    BelowMinResume,
    /// `max_sessions` sessions ran.
    MaxSessions,
    /// The last session did not end on its own with success (a timeout, an error, a cap,
    /// an early stop, a budget, Ctrl-C): the run ends as that session ended.
    SessionStopped,
    /// The session could not be resumed (see `ended_note`).
    NotResumable,
}

/// One launch of the CLI in a time-budget run. A plain struct, one per CLI launch, so a
/// per-attempt cost record can map it one to one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionRecord {
    /// 1-based.
    pub index: u32,
    /// The CLI's session id: the one the host started it with, else the stream's;
    /// `null` when neither is known.
    pub session_id: Option<String>,
    /// The session id this launch's stream reported (the same in every session when the
    /// CLI resumed the session); `null` when its stream names none.
    pub stream_session_id: Option<String>,
    /// Whether this launch resumed the session (false for the first).
    pub resumed: bool,
    /// ms from the first session's start (the budget's anchor) to this launch.
    pub started_ms: u64,
    /// Wall time of the session, spawn to end, ms.
    pub duration_ms: u64,
    /// The time it was given, ms (the budget left when it started, or its `turn_timeout`
    /// when shorter); `null` when none.
    pub timeout_ms: Option<u64>,
    /// The host's stop, when it ended the session (`time_budget` = stopped at the
    /// deadline, a clean stop for a resumed session; the first session's is
    /// `task_timeout`, a failure).
    pub stop_reason: Option<StopReason>,
    /// How the session ended (the turn record's `final_status`).
    pub final_status: TurnStatus,
    /// Main-thread model calls.
    pub num_turns: u32,
    /// Tool calls.
    pub tool_calls: usize,
    /// Token totals of this launch, as its turn record gives them (a running total of
    /// the session where the harness's totals are per session; see `cost_usd`); `null`
    /// when the stream reported none (`usage_source` `none`).
    pub usage: Option<Usage>,
    /// Where `usage` comes from (`cli_result`, `messages`, `none`).
    pub usage_source: String,
    /// Cost in USD as this launch's stream reported it; `null` when not reported. Not
    /// yet turned into a per-attempt figure: a CLI whose totals are per session (the
    /// harness's `totals()`: Codex, Claude Code from 2.1.277) reports the running total
    /// of the whole session here, so summing these would count earlier sessions again.
    pub cost_usd: Option<f64>,
    /// The exact argv, prompt included.
    pub argv: Vec<String>,
    /// The prompt sent.
    pub prompt: String,
    /// Its recording, relative to `task.json`'s folder.
    pub recording: String,
    /// Its stderr, relative to `task.json`'s folder.
    pub stderr: String,
}

/// The whole task's figures: in time-budget mode every session's, not only the last
/// session's (`turn`); otherwise the turn's. `None` when no turn ran.
impl super::TaskResult {
    /// Main-thread model calls over every session.
    pub fn task_num_turns(&self) -> Option<u32> {
        match self.sessions() {
            Some(s) => Some(s.iter().map(|s| s.num_turns).sum()),
            None => self.turn.as_ref().map(|t| t.num_turns),
        }
    }

    /// Tool calls over every session.
    pub fn task_tool_calls(&self) -> Option<usize> {
        match self.sessions() {
            Some(s) => Some(s.iter().map(|s| s.tool_calls).sum()),
            None => self.turn.as_ref().map(|t| t.tool_calls.len()),
        }
    }

    /// Wall time of the agent's work, ms: from the first session's start to the last
    /// session's end (the pauses between sessions included).
    pub fn task_duration_ms(&self) -> Option<u64> {
        match self.sessions().and_then(|s| s.last()) {
            Some(last) => Some(last.started_ms + last.duration_ms),
            None => self.turn.as_ref().map(|t| t.timing.turn_duration_ms),
        }
    }

    /// The sessions of a time-budget run, when it has any.
    fn sessions(&self) -> Option<&[SessionRecord]> {
        self.time_budget
            .as_ref()
            .map(|t| t.sessions.as_slice())
            .filter(|s| !s.is_empty())
    }
}
