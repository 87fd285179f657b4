//! Time-budget mode (`agent.budget_mode: time`; settings in [`crate::task::time_budget`]):
//! the deadline is fixed as the first session starts (after setup). When the agent ends
//! its session by itself (its turn `completed`), the host resumes the SAME session (the
//! harness's `session-request.resume`: Claude Code `--resume`, Codex `exec resume`, Pi's
//! session file, OpenCode `--session`, Gemini CLI `--resume`) with a prompt stating the
//! time left, while at least `min_resume_seconds` remain and fewer than `max_sessions`
//! have run. Each continuation's timeout is the time left; one stopped at the deadline is
//! a clean stop ([`StopReason::TimeBudget`], graded), while a first session that reaches
//! it is a `task_timeout` (a failure).
//!
//! Each session has its own recording and stderr log (`recording.jsonl`, then
//! `recording.session-N.jsonl`, whose header keeps its start's offset from the first
//! session's); the criteria judge all sessions' events as one trajectory (stamps from the
//! first session's start); `task.json` `turn` is the last session's record and
//! `time_budget.sessions` lists every launch. Every time of the run counts from one base,
//! the run's agent start (the first session's start): `time_budget.sessions[].started_ms`,
//! the joined trajectory's stamps and `stop.at_ms` alike. `coder-eval replay recording.jsonl` (and
//! `grade --regrade`) replays them all (`turn::replay::replay_sessions`).

use super::assemble::TurnDone;
use super::error::{Cause, RunError};
use super::launch::{Attempt, Launched, Planned, launch};
use super::setup::Dirs;
use super::{Prepared, RunOptions};
use crate::limits::Deadlines;
use crate::results::{
    SessionRecord, SessionsEnd, StampedEvent, StopReason, TimeBudgetRecord, TurnRecord, TurnStatus,
};
use crate::runtime::harness::Launcher;
use crate::sandbox::docker::DockerSandbox;
use crate::task::time_budget::{TimeBudget, continuation_prompt};
use crate::turn::live::{self, LiveTurn};
use crate::turn::recording::SessionHeader;
use coder_eval_scripted_model::ScriptedModel;
use harness_kit::Usage;
use harness_kit::{AgentSettings, LaunchPlan, RunLimits, SessionRequest};
use std::path::Path;
use std::time::{Duration, Instant};
use tokio::sync::watch;

/// What a time-budget run needs besides the plan and the first launch.
pub(super) struct Run<'a> {
    pub(super) p: &'a Prepared,
    pub(super) options: &'a RunOptions,
    pub(super) dirs: &'a Dirs,
    pub(super) dir: &'a Path,
    pub(super) budget: TimeBudget,
    pub(super) task_start: Instant,
    pub(super) container: Option<&'a DockerSandbox>,
}

/// The first session's plan: started with an id of the host's choosing where the harness
/// takes one (Claude Code `--session-id`, Pi, Gemini CLI), else without one (Codex and
/// OpenCode name their own sessions and refuse a chosen id: the stream's id is resumed).
/// Returns the plan and the id it was started with.
pub(super) fn first_plan(
    launcher: &mut Launcher,
    settings: &AgentSettings,
    limits: &RunLimits,
) -> Result<(LaunchPlan, Option<String>), RunError> {
    let id = new_session_id();
    let with_id = AgentSettings {
        session: Some(SessionRequest::Start(id.clone())),
        ..settings.clone()
    };
    if let Ok(plan) = launcher
        .plan(&with_id, limits)
        .map_err(RunError::Component)?
    {
        return Ok((plan, Some(id)));
    }
    let plan = launcher
        .plan(settings, limits)
        .map_err(RunError::Component)?
        .map_err(|reason| RunError::Refused(Cause(reason)))?;
    Ok((plan, None))
}

/// A random UUID (version 4 layout), the form Claude Code and Gemini CLI require.
fn new_session_id() -> String {
    let mut b = [0u8; 16];
    if let Ok(mut f) = std::fs::File::open("/dev/urandom") {
        use std::io::Read;
        let _ = f.read_exact(&mut b);
    }
    if b == [0; 16] {
        // No /dev/urandom: the clock and the process id are unique enough for one host.
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos();
        b = (t ^ (u128::from(std::process::id()) << 64)).to_le_bytes();
    }
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    )
}

/// When session `index` (1-based), starting at `start`, must end and why: the budget's
/// end (`task_timeout` for the first session, a failure; `time_budget` for a resumed
/// one, a clean stop), or its `turn_timeout` (and a `task_timeout` that is not the
/// budget) when earlier. The budget wins a tie.
pub(super) fn session_deadline(
    r: &Run<'_>,
    start: Instant,
    end: Instant,
    index: u32,
) -> (Instant, StopReason) {
    let mut limits = r.p.task.run_limits;
    if r.p.task.agent.timeout_seconds.is_none() {
        // task_timeout is the budget itself, anchored at the first session.
        limits.task_timeout = None;
    }
    let budget = (
        end,
        if index == 1 {
            StopReason::TaskTimeout
        } else {
            StopReason::TimeBudget
        },
    );
    match limits.deadline(r.task_start, start) {
        Some(other) if other.0 < budget.0 => other,
        _ => budget,
    }
}

/// Why the loop stopped, and the sentence for a session that could not be resumed.
type Ended = (SessionsEnd, Option<String>);

/// Runs the sessions, from the first (already launched) on, and shuts the scripted model
/// down after the last. Errors: the first session could not run (as a one-session task).
pub(super) async fn run(
    r: Run<'_>,
    planned: &mut Planned,
    first: Launched,
    cancel: watch::Receiver<bool>,
) -> Result<TurnDone, RunError> {
    let first_start = Instant::now();
    let end = first_start + r.budget.budget;
    let mut sessions: Vec<SessionRecord> = Vec::new();
    // Each session's turn record, in order (cost.json's provider reports).
    let mut records: Vec<TurnRecord> = Vec::new();
    let mut trajectory: Vec<StampedEvent> = Vec::new();
    let (mut host_work_us, mut leftover) = (0u64, 0u32);
    let mut launched = first;
    let mut index = 1u32;
    let mut prompt = r.p.task.prompt.clone();
    let mut files = ("recording.jsonl".to_string(), "stderr.log".to_string());
    let mut resume_id: Option<String> = planned.started.clone();
    let mut prev: Option<LiveTurn> = None;
    // A continuation's start, taken as it is launched (its recording's header keeps the
    // offset, so a replay joins the sessions' trajectories as this run does).
    let mut next_start = first_start;
    let (last, (ended, ended_note)): (LiveTurn, Ended) = loop {
        let start = next_start;
        let deadline = session_deadline(&r, start, end, index);
        let argv = launched.cli.argv.clone();
        if index == 1 {
            super::launch::runnable(&launched.spec, r.container)?;
        }
        // The host's stop of a session (its deadline, a cap) stops the scripted model
        // answering; a session resumed after it is answered again.
        let stoppers: Vec<_> = planned.model.iter().map(ScriptedModel::stopper).collect();
        for stopper in &stoppers {
            stopper.resume();
        }
        let turn = live::run_turn(
            launched.spec,
            launched.pipeline,
            launched.recording,
            launched.stderr_log,
            Deadlines {
                deadline: Some(deadline),
                policy: r.options.stop_policy,
            },
            cancel.clone(),
            planned.model.as_ref().map(ScriptedModel::held),
            r.container,
            &stoppers,
        )
        .await;
        let live = match turn {
            Ok(live) => live,
            Err(e) if index == 1 => return Err(RunError::Cli(e)),
            Err(e) => {
                // A continuation that could not run: the run ends with what it had.
                let note = format!("session {index} could not run: {e}");
                let prev = prev.take().expect("session 1 ran");
                break (prev, (SessionsEnd::NotResumable, Some(note)));
            }
        };
        let offset_us = start.duration_since(first_start).as_micros() as u64;
        trajectory.extend(live.trajectory.iter().cloned().map(|mut e| {
            e.stamp_us += offset_us;
            e
        }));
        host_work_us += live.host_work_us;
        leftover += live.leftover_processes;
        if resume_id.is_none() {
            resume_id = live.record.session_id.clone();
        }
        sessions.push(SessionRecord {
            index,
            session_id: resume_id.clone().or_else(|| live.record.session_id.clone()),
            stream_session_id: live.record.session_id.clone(),
            resumed: index > 1,
            started_ms: offset_us / 1000,
            duration_ms: start.elapsed().as_millis() as u64,
            timeout_ms: Some(deadline.0.saturating_duration_since(start).as_millis() as u64),
            stop_reason: live.stop,
            final_status: live.record.final_status,
            num_turns: live.record.num_turns,
            tool_calls: live.record.tool_calls.len(),
            usage: live.record.usage,
            usage_source: live.record.usage_source.clone(),
            cost_usd: live.record.cost_usd,
            argv,
            prompt: prompt.clone(),
            recording: files.0.clone(),
            stderr: files.1.clone(),
        });
        records.push(live.record.clone());
        // Whether, and how, to go on.
        let left = end.saturating_duration_since(Instant::now());
        if let Some(stop) = why_not_go_on(&r.budget, &live, index, left) {
            break (live, (stop, None));
        }
        let Some(id) = resume_id.clone() else {
            let note = "the first session's stream reported no session id to resume".into();
            break (live, (SessionsEnd::NotResumable, Some(note)));
        };
        // The caps count every session: one whose earlier launches spent a cap would be
        // stopped at its first call.
        let earlier_turns: u32 = sessions.iter().map(|s| s.num_turns).sum();
        let earlier_tool_calls = sessions.iter().map(|s| s.tool_calls as u32).sum::<u32>();
        if let Some(note) = cap_spent(&r.p.task.run_limits, earlier_turns, earlier_tool_calls) {
            break (live, (SessionsEnd::NotResumable, Some(note)));
        }
        index += 1;
        prompt = continuation_prompt(left, index);
        files = (
            format!("recording.session-{index}.jsonl"),
            format!("stderr.session-{index}.log"),
        );
        // What the session's launches so far spent (each their own share, read through
        // the harness's totals scope), so a running total of the whole session is not
        // counted twice; unknown when any launch's cost is.
        let earlier_cost_usd = sessions.iter().map(|s| s.cost_usd).sum::<Option<f64>>();
        // Likewise their tokens (each launch's own share), for a CLI whose usage is the
        // session's running total; unknown when any launch's usage is, or ambiguous.
        let earlier_usage = sessions.iter().try_fold(Usage::default(), |t, s| {
            let u = s
                .usage
                .filter(|_| s.usage_source != "cli_result_session_total")?;
            Some(t.saturating_add(&u))
        });
        next_start = Instant::now();
        let session = SessionHeader {
            resumed: true,
            earlier_cost_usd,
            earlier_usage,
            offset_us: Some(next_start.duration_since(first_start).as_micros() as u64),
            earlier_turns: Some(earlier_turns),
            earlier_tool_calls: Some(earlier_tool_calls),
        };
        match resume(&r, planned, &id, &prompt, &files, session).await {
            Ok(next) => {
                launched = next;
                prev = Some(live);
            }
            Err(note) => break (live, (SessionsEnd::NotResumable, Some(note))),
        }
    };
    let mut scripted_model_requests = None;
    if let Some(model) = planned.model.take() {
        scripted_model_requests = Some(
            model
                .requests()
                .iter()
                .map(|q| serde_json::to_value(q).unwrap_or_default())
                .collect(),
        );
        model.shutdown().await;
    }
    // The last session's record is the task's turn.
    records.pop();
    let record = TimeBudgetRecord {
        budget_ms: r.budget.budget.as_millis() as u64,
        min_resume_ms: r.budget.min_resume.as_millis() as u64,
        max_sessions: r.budget.max_sessions,
        ended,
        ended_note,
        sessions,
    };
    // The stop, like the sessions' starts and the joined trajectory, counts from the
    // run's agent start (the first session's), not from the last session's.
    let stop_at_ms = last.stop_at_ms.map(|ms| {
        let since_first = last.started.saturating_duration_since(first_start);
        (since_first.as_micros() as u64 + ms * 1000) / 1000
    });
    Ok(TurnDone {
        turn: LiveTurn {
            trajectory,
            host_work_us,
            leftover_processes: leftover,
            stop_at_ms,
            ..last
        },
        scripted_model_requests,
        time_budget: Some(record),
        earlier_turns: records,
    })
}

/// Why no session follows session `index` that ended as `live` with `left` of the budget
/// remaining; `None` = resume it.
fn why_not_go_on(
    budget: &TimeBudget,
    live: &LiveTurn,
    index: u32,
    left: Duration,
) -> Option<SessionsEnd> {
    if live.stop == Some(StopReason::TimeBudget) {
        Some(SessionsEnd::DeadlineReached)
    } else if live.record.final_status != TurnStatus::Completed {
        Some(SessionsEnd::SessionStopped)
    } else if index >= budget.max_sessions {
        Some(SessionsEnd::MaxSessions)
    } else if left < budget.min_resume {
        Some(SessionsEnd::BelowMinResume)
    } else {
        None
    }
}

/// Why no session can follow once the sessions so far made `turns` main-thread model
/// calls and `tool_calls` tool calls: `run_limits.max_turns` or `max_tool_calls` (which
/// count every session) is spent. `None` = some of each is left.
fn cap_spent(limits: &crate::limits::RunLimitsSpec, turns: u32, tool_calls: u32) -> Option<String> {
    if let Some(n) = limits.max_turns.filter(|&n| turns >= n) {
        return Some(format!(
            "run_limits.max_turns ({n}) is spent: the sessions so far made {turns} model calls"
        ));
    }
    let n = limits.max_tool_calls.filter(|&n| tool_calls >= n)?;
    Some(format!(
        "run_limits.max_tool_calls ({n}) is spent: the sessions so far made {tool_calls} tool \
         calls"
    ))
}

/// The plan and launch of a continuation resuming session `id`; `Err` = why it cannot be.
/// Its native limits are what the session's earlier launches left of the caps
/// (`session.remaining`), as the host's are.
async fn resume(
    r: &Run<'_>,
    planned: &mut Planned,
    id: &str,
    prompt: &str,
    files: &(String, String),
    session: SessionHeader,
) -> Result<Launched, String> {
    let mut launcher = Launcher::new(&planned.loaded).map_err(|e| e.to_string())?;
    let settings = AgentSettings {
        session: Some(SessionRequest::Resume(id.to_string())),
        ..planned.settings.clone()
    };
    let mut limits = planned.limits;
    let left = session.remaining(crate::limits::Caps {
        max_turns: limits.max_turns,
        max_tool_calls: limits.max_tool_calls,
    });
    (limits.max_turns, limits.max_tool_calls) = (left.max_turns, left.max_tool_calls);
    planned.plan = launcher
        .plan(&settings, &limits)
        .map_err(|e| e.to_string())?
        .map_err(|reason| format!("the harness refused to resume session `{id}`: {reason}"))?;
    let attempt = Attempt {
        prompt,
        recording: &files.0,
        stderr: &files.1,
        session,
    };
    launch(r.p, r.options, planned, r.dirs, r.dir, &attempt)
        .await
        .map_err(|e| e.message())
}

#[cfg(test)]
mod tests;
