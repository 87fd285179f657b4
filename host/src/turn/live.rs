//! One live turn: spawn the CLI in its own process group, stamp and record every stdout
//! line before reducing it, enforce caps and timeouts, and stop the whole group on every
//! stop path.
//!
//! Stop paths: a cap fired (clean stop), the turn or task deadline passed (failure), the
//! user pressed Ctrl-C, the CLI printed its final result but did not exit within
//! its result grace, or it exited but a descendant kept the pipes open past its leak
//! grace (both in [`StopPolicy`]). Each one stops the group (SIGTERM, grace, SIGKILL) and reaps it.
//!
//! Starting the CLI (a child of the host, or an exec in the task's container) and reading
//! its pipes is in `spawn`; the turn's loop and its stop paths are here.

mod spawn;

use super::finish::TurnEnd;
use super::framer::{DEFAULT_MAX_LINE_BYTES, LineFramer};
use super::pipeline::Pipeline;
use super::recording::{ExitStatus, RecordingWriter};
use crate::limits::{Deadlines, StopPolicy};
use crate::process::{Scope, boot_ticks, stop_tree_in};
use crate::results::{StampedEvent, StopReason, TurnRecord};
use crate::sandbox::docker::{DockerSandbox, ExecRequest};
use coder_eval_scripted_model::{Hold, HoldReason, Stopper};
pub(crate) use spawn::runnable;
use spawn::{Agent, spawn_local, spawn_reader};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, watch};

/// Bytes of stderr kept in memory for the result (the full stream goes to `stderr.log`).
pub(crate) const STDERR_TAIL_BYTES: usize = 8 * 1024;

/// How far ahead the loop sleeps when nothing is due (it wakes on the CLI's output).
const NO_WAKE: Duration = Duration::from_secs(86_400 * 365);

/// What to start and how.
pub(crate) struct LaunchSpec {
    pub program: PathBuf,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    pub cwd: PathBuf,
    /// Written to stdin, then stdin is closed; `None` = stdin closed at once.
    pub stdin: Option<String>,
    /// The exit codes the CLI documents as its own turn limit (launch-plan exit codes of
    /// kind `turn_limit`).
    pub turn_limit_codes: Vec<i32>,
    /// Start the CLI as the first process of a PID namespace of its own, where the kernel
    /// allows it (`crate::process::pidns`).
    pub pid_namespace: bool,
    /// The launch plan's side files: (path as the plan gave it, the file on this host),
    /// read once the CLI exited and handed to the reducer ([`side_files`]).
    pub side_files: Vec<(String, PathBuf)>,
}

/// The most of one side file read (bytes); a longer one is cut here.
pub(crate) const MAX_SIDE_FILE_BYTES: u64 = 16 * 1024 * 1024;

/// The launch plan's side files with `{{home}}` and `{{workspace}}` put in, as
/// [`LaunchSpec::side_files`] holds them.
pub(crate) fn side_files(plan: &[String], home: &Path, workspace: &Path) -> Vec<(String, PathBuf)> {
    plan.iter()
        .map(|p| {
            let local = p
                .replace("{{home}}", &home.display().to_string())
                .replace("{{workspace}}", &workspace.display().to_string());
            (p.clone(), PathBuf::from(local))
        })
        .collect()
}

/// Each side file's content, `None` where the CLI wrote none (or it cannot be read),
/// at most [`MAX_SIDE_FILE_BYTES`] of it.
fn read_side_files(files: &[(String, PathBuf)]) -> Vec<(String, Option<Vec<u8>>)> {
    use std::io::Read;
    files
        .iter()
        .map(|(plan_path, local)| {
            let content = std::fs::File::open(local).ok().and_then(|f| {
                let mut bytes = Vec::new();
                f.take(MAX_SIDE_FILE_BYTES)
                    .read_to_end(&mut bytes)
                    .ok()
                    .map(|_| bytes)
            });
            (plan_path.clone(), content)
        })
        .collect()
}

/// A finished live turn.
pub(crate) struct LiveTurn {
    pub record: TurnRecord,
    /// Every event of the turn, in order (what the graders judge).
    pub trajectory: Vec<StampedEvent>,
    pub stop: Option<StopReason>,
    /// ms from the turn's start, when the host stopped it.
    pub stop_at_ms: Option<u64>,
    /// The last [`STDERR_TAIL_BYTES`] of stderr (lossy UTF-8).
    pub stderr_tail: String,
    /// The CLI's process group id (for checking that it is gone).
    pub pgid: Option<i32>,
    /// The turn's process mark (the value of [`MARK_VAR`](crate::process::MARK_VAR) every
    /// process of it inherited).
    pub mark: String,
    /// Processes of the turn still alive after the CLI exited on its own (the agent
    /// detached them), which the host then stopped.
    pub leftover_processes: u32,
    /// Time the host spent on the stream (recording, reducing, collecting), µs.
    pub host_work_us: u64,
    /// What held the turn's processes together: `pid_namespace` or `process_group` (the
    /// group, the descendants and the mark; also the fallback where no namespace can be
    /// made); `None` for a CLI in a container.
    pub containment: Option<&'static str>,
    /// The turn's start: the instant every stamp of it counts from.
    pub started: Instant,
}

enum Chunk {
    Out(Vec<u8>, u64),
    OutEof,
    Err(Vec<u8>, u64),
    ErrEof,
}

/// Runs one turn. `recording` must already hold its header; `stderr_log` receives the
/// raw stderr; `held_calls` reports the scripted model's first held call (past
/// `max_turns`, or a reply past `max_tool_calls`), when a scripted model plays the turn. Errors: the CLI could not be
/// started, or the recording could not be written (nothing is lost silently). With
/// `container` (`sandbox.driver: docker`) the CLI runs as an exec in it, stopped by the
/// exec's mark instead of a process group. `on_stop` are tripped the moment the host
/// decides a stop (whatever the reason), before the CLI is signalled: the model servers
/// holding them answer no more model calls, so the CLI cannot go on working in its stop
/// grace.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn run_turn(
    spec: LaunchSpec,
    mut pipeline: Pipeline,
    mut recording: RecordingWriter,
    mut stderr_log: std::fs::File,
    deadlines: Deadlines,
    mut cancel: watch::Receiver<bool>,
    mut held_calls: Option<watch::Receiver<Option<Hold>>>,
    container: Option<&DockerSandbox>,
    on_stop: &[Stopper],
) -> std::io::Result<LiveTurn> {
    use std::io::Write;
    let t0 = Instant::now();
    let stamp = move || t0.elapsed().as_micros() as u64;
    // The turn's processes that escaped its group, its tree and its mark (a cleared
    // environment, a session of their own) still work in its folder.
    let scope = Scope {
        dir: spec.cwd.clone(),
        since: boot_ticks(),
    };
    let (tx, mut rx) = mpsc::unbounded_channel();
    let mut containment = None;
    let (mut child, mark, pgid, live_group) = match container {
        Some(sandbox) => {
            let argv = std::iter::once(spec.program.display().to_string())
                .chain(spec.args.iter().cloned())
                .collect();
            let mut exec = sandbox
                .exec(ExecRequest {
                    argv,
                    env: spec.env.clone(),
                    cwd: sandbox.agent_dir().to_path_buf(),
                    stdin: spec.stdin.clone().map(String::into_bytes),
                })
                .await
                .map_err(std::io::Error::other)?;
            let mark = exec.mark().to_string();
            let (Some(out), Some(err)) = (exec.stdout.take(), exec.stderr.take()) else {
                return Err(std::io::Error::other(
                    "the exec's output streams are missing",
                ));
            };
            spawn_reader(out, tx.clone(), true, t0);
            spawn_reader(err, tx, false, t0);
            (Agent::Container(Arc::new(exec)), mark, None, None)
        }
        None => {
            let (child, mark, pgid, live, held, init) = spawn_local(&spec, tx, t0)?;
            containment = Some(held);
            (Agent::Local(child, init), mark, pgid, live)
        }
    };
    if let Some(live) = &live_group {
        live.scope(&scope);
    }
    let mut line_no = 0u64;
    let mut framer = LineFramer::new(DEFAULT_MAX_LINE_BYTES);
    let mut stop: Option<StopReason> = None;
    let mut stop_at_us: Option<u64> = None;
    let mut stderr_tail: Vec<u8> = Vec::new();
    let mut result_seen_at: Option<Instant> = None;
    let mut exit: Option<ExitStatus> = None;
    let mut exited_at: Option<Instant> = None;
    // Output the CLI wrote before it exited that the host has not read yet: the leak
    // grace starts once it is read, so a host behind on a large output (a loaded machine)
    // never takes its own backlog for a leaked pipe.
    let mut backlog_at_exit = 0usize;
    let (mut out_open, mut err_open) = (true, true);
    let mut host_work = Duration::ZERO;
    // The scripted model's held call: when it was reported, its turn index, tool calls
    // handed out before it, and the cap it is held by.
    let mut held: Option<(Instant, u32, Option<u32>, StopReason)> = None;

    while out_open || err_open || exit.is_none() {
        // The next moment something must happen without the CLI's help.
        let wake = if stop.is_none() {
            next_wake(
                &deadlines,
                Pending {
                    result_seen_at,
                    exited_at: exited_at.filter(|_| backlog_at_exit == 0),
                    held: held.map(|(at, _, _, reason)| (at, reason)),
                },
            )
        } else {
            None
        };
        let sleep_until = wake.map_or(t0 + NO_WAKE, |(at, _)| at);
        let mut fire: Option<StopReason> = None;
        tokio::select! {
            chunk = rx.recv(), if out_open || err_open => match chunk {
                Some(Chunk::Out(bytes, at)) => {
                    drain_backlog(&mut backlog_at_exit, &mut exited_at);
                    let work = Instant::now();
                    framer.push(&bytes, at, |line| {
                        line_no += 1;
                        // Recorded before it is reduced: nothing is lost.
                        recording.stdout_line(at, line, false)?;
                        let fired = pipeline.feed(line_no, at, line);
                        if fired.is_some() {
                            fire = fired;
                        }
                        if result_seen_at.is_none() && pipeline.collector.final_result_seen() {
                            result_seen_at = Some(Instant::now());
                        }
                        Ok::<(), std::io::Error>(())
                    })?;
                    host_work += work.elapsed();
                }
                Some(Chunk::OutEof) => {
                    drain_backlog(&mut backlog_at_exit, &mut exited_at);
                    out_open = false;
                }
                Some(Chunk::Err(bytes, at)) => {
                    drain_backlog(&mut backlog_at_exit, &mut exited_at);
                    recording.stderr_chunk(at, &bytes)?;
                    stderr_log.write_all(&bytes)?;
                    stderr_tail.extend_from_slice(&bytes);
                    if stderr_tail.len() > STDERR_TAIL_BYTES {
                        stderr_tail.drain(..stderr_tail.len() - STDERR_TAIL_BYTES);
                    }
                }
                Some(Chunk::ErrEof) => {
                    drain_backlog(&mut backlog_at_exit, &mut exited_at);
                    err_open = false;
                }
                None => { out_open = false; err_open = false; }
            },
            status = child.wait(), if exit.is_none() => {
                let (code, signal) = status?;
                exit = Some(exit_status(code, signal, stamp(), &spec.turn_limit_codes));
                exited_at = Some(Instant::now());
                backlog_at_exit = rx.len();
            },
            _ = tokio::time::sleep_until(sleep_until.into()), if wake.is_some() => {
                fire = wake.map(|(_, reason)| reason);
                // A call held by the gateway for a budget is no call of the agent's: the
                // stop alone is recorded (the gateway's `model_call` record says it was held).
                if let Some((_, turn, tools, reason)) = held.filter(|h| {
                    fire == Some(h.3)
                        && matches!(h.3, StopReason::MaxTurns | StopReason::MaxToolCalls)
                }) {
                    // The held call begins now for the record, after the stream settled.
                    let at = stamp();
                    recording.held_call(at, turn, reason, tools)?;
                    pipeline.collector.held_call(at, turn, reason);
                }
            },
            turn = async {
                match held_calls.as_mut() {
                    Some(rx) => rx.changed().await.map(|()| *rx.borrow_and_update()),
                    None => std::future::pending().await,
                }
            }, if held_calls.is_some() && held.is_none() && stop.is_none() => match turn {
                Ok(Some(hold)) => {
                    let reason = match hold.reason {
                        HoldReason::MaxTurns => StopReason::MaxTurns,
                        HoldReason::MaxToolCalls => StopReason::MaxToolCalls,
                        HoldReason::MaxInputTokens => StopReason::MaxInputTokens,
                        HoldReason::MaxOutputTokens => StopReason::MaxOutputTokens,
                        HoldReason::MaxTotalTokens => StopReason::MaxTotalTokens,
                        HoldReason::MaxUsd => StopReason::MaxUsd,
                    };
                    let tools = (reason == StopReason::MaxToolCalls).then_some(hold.tool_calls_before);
                    held = Some((Instant::now(), hold.turn as u32, tools, reason));
                }
                Ok(None) => {}
                Err(_) => held_calls = None,
            },
            changed = cancel.changed(), if stop.is_none() => {
                if changed.is_err() || *cancel.borrow() {
                    fire = Some(StopReason::Interrupted);
                }
            },
        }
        if let (Some(reason), None) = (fire, stop) {
            // No model call is answered from now on.
            for stopper in on_stop {
                stopper.stop();
            }
            stop = Some(reason);
            stop_at_us = Some(stamp());
            pipeline.collector.freeze();
            recording.stop(stop_at_us.unwrap_or_default(), reason)?;
            // Stop in the background; keep draining the pipes meanwhile.
            let grace = if reason == StopReason::LeakedPipes {
                deadlines.policy.sweep_grace
            } else {
                deadlines.policy.kill_grace
            };
            if let Agent::Container(exec) = &child {
                let exec = exec.clone();
                tokio::spawn(async move { exec.stop(grace).await });
            } else if let Some(pgid) = pgid {
                let (mark, scope) = (mark.clone(), scope.clone());
                tokio::spawn(async move { stop_tree_in(pgid, &mark, &scope, grace).await });
            }
        }
    }
    // Whatever ended the turn, no process of it outlives it: not the group, not a
    // descendant, not a process the agent detached (found by its mark).
    let mut leftover_processes = 0;
    let found = match (&child, pgid) {
        (Agent::Container(exec), _) => exec
            .stop(deadlines.policy.sweep_grace)
            .await
            .map_err(std::io::Error::other)?,
        (Agent::Local(..), Some(pgid)) => {
            stop_tree_in(pgid, &mark, &scope, deadlines.policy.sweep_grace)
                .await
                .len()
        }
        (Agent::Local(..), None) => 0,
    };
    if stop.is_none() {
        leftover_processes = found as u32;
    }
    let exit = exit.expect("loop ends after exit");
    recording.exit(exit)?;
    let truncated = framer
        .rest()
        .map(|(stamp, bytes)| (line_no + 1, stamp, bytes));
    if let Some((_, at, bytes)) = truncated {
        recording.stdout_line(at, bytes, true)?;
    }
    let finish = Instant::now();
    let end_us = stop_at_us.map_or(exit.stamp_us, |s| s.min(exit.stamp_us));
    let side_files = read_side_files(&spec.side_files);
    for (path, content) in &side_files {
        recording.side_file(exit.stamp_us, path, content.as_deref())?;
    }
    pipeline.side_files(&side_files, end_us);
    let (record, trajectory) = pipeline.finish(
        truncated,
        TurnEnd {
            end_us,
            exit: Some(exit),
            stop,
            ..Default::default()
        },
    );
    host_work += finish.elapsed();
    Ok(LiveTurn {
        trajectory,
        host_work_us: host_work.as_micros() as u64,
        record,
        stop,
        stop_at_ms: stop_at_us.map(|us| us / 1000),
        stderr_tail: String::from_utf8_lossy(&stderr_tail).into_owned(),
        pgid,
        mark,
        leftover_processes,
        containment,
        started: t0,
    })
}

/// What the loop waits on besides the CLI's output, when it began.
#[derive(Debug, Clone, Copy, Default)]
struct Pending {
    /// The CLI printed its final result.
    result_seen_at: Option<Instant>,
    /// The CLI exited.
    exited_at: Option<Instant>,
    /// The scripted model reported a held call, and the cap that held it (`max_turns` or
    /// `max_tool_calls`).
    held: Option<(Instant, StopReason)>,
}

/// One chunk of what was queued when the CLI exited has been read; when it was the last,
/// the leak grace starts now.
fn drain_backlog(backlog_at_exit: &mut usize, exited_at: &mut Option<Instant>) {
    if *backlog_at_exit > 0 {
        *backlog_at_exit -= 1;
        if *backlog_at_exit == 0 {
            *exited_at = Some(Instant::now());
        }
    }
}

/// The next moment something must happen without the CLI's help, and the stop it brings:
/// the deadline, the result grace, the leak grace or the held call's settling, whichever
/// comes first (the earlier-listed one on a tie).
fn next_wake(deadlines: &Deadlines, pending: Pending) -> Option<(Instant, StopReason)> {
    let StopPolicy {
        result_grace,
        leak_grace,
        held_settle,
        ..
    } = deadlines.policy;
    [
        deadlines.deadline,
        pending
            .result_seen_at
            .map(|at| (at + result_grace, StopReason::ResultGrace)),
        pending
            .exited_at
            .map(|at| (at + leak_grace, StopReason::LeakedPipes)),
        pending.held.map(|(at, reason)| (at + held_settle, reason)),
    ]
    .into_iter()
    .flatten()
    .reduce(|a, b| if a.0 <= b.0 { a } else { b })
}

fn exit_status(
    code: Option<i32>,
    signal: Option<i32>,
    stamp_us: u64,
    turn_limit_codes: &[i32],
) -> ExitStatus {
    ExitStatus {
        stamp_us,
        code,
        signal,
        turn_limit: code.is_some_and(|c| turn_limit_codes.contains(&c)),
    }
}

#[cfg(test)]
mod tests;
