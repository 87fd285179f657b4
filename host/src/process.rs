//! Child processes in their own process group, and stopping the whole group.
//!
//! Every process the host starts (an agent CLI, a `run_command` criterion, a `pre_run`
//! step) leads a new process group, so a stop reaches its grandchildren too (a `sleep`
//! started by the agent's shell that still holds stdout). The stop policy is SIGTERM to
//! the group, a grace period, then SIGKILL; the group is then checked in the process
//! table, not trusted to be gone.
//!
//! An agent CLI's turn, and each shell step (`run_shell`), also carries a *mark*: the
//! environment variable `CODER_EVAL_PROCESS_MARK` with a value unique to it, which every process it
//! starts inherits. A process the agent detached (`setsid cmd &`, `nohup`) leaves the
//! group, and once its parent exits it has no parent link to the CLI either; its
//! environment still names the turn, so the stop at the end of the turn finds it in
//! `/proc/<pid>/environ` (see `stop_tree`).
//!
//! Every group is registered while it runs (`LiveGroup`), so a second Ctrl-C can kill
//! them all at once, and wait for them, before the host exits
//! ([`kill_live_groups_and_wait`]).
//!
//! Running one shell command to completion with a timeout and capped output
//! ([`run_shell`]) is in `shell`; which processes belong to a turn (group, descendants,
//! mark, folder) in `find`; the PID namespace option in `pidns`.

mod find;
mod shell;

use find::*;
pub(crate) use find::{MARK_VAR, Scope, boot_ticks, carries_mark, new_mark};
pub use find::{group_alive, group_members, marked};
pub(crate) use shell::{ShellOutcome, read_capped, run_shell};

use crate::limits::StopPolicy;
use std::process::Stdio;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

/// A running process group (an agent CLI's turn, a shell step): its id, its mark, and
/// the turn's folder scope when it has one ([`LiveGroup::scope`]).
type Live = (i32, String, Option<Scope>);

/// The process groups running now, with their marks and scopes: what the second Ctrl-C
/// kills at once ([`kill_live_groups_and_wait`]).
static LIVE: Mutex<Vec<Live>> = Mutex::new(Vec::new());

/// A running process group, registered for [`kill_live_groups_and_wait`] until it is
/// dropped (once the group has been stopped and reaped).
pub(crate) struct LiveGroup {
    pgid: i32,
}

impl LiveGroup {
    /// Registers group `pgid`, whose processes carry `mark`.
    pub(crate) fn register(pgid: i32, mark: &str) -> LiveGroup {
        LIVE.lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push((pgid, mark.to_string(), None));
        LiveGroup { pgid }
    }

    /// Adds the turn's folder scope: the second Ctrl-C then also kills the processes that
    /// escaped the group, the tree and the mark but work in the turn's folder (as the
    /// normal stop does), not only the group's.
    pub(crate) fn scope(&self, scope: &Scope) {
        let mut live = LIVE.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(entry) = live.iter_mut().find(|(pgid, _, _)| *pgid == self.pgid) {
            entry.2 = Some(scope.clone());
        }
    }
}

impl Drop for LiveGroup {
    fn drop(&mut self) {
        LIVE.lock()
            .unwrap_or_else(PoisonError::into_inner)
            .retain(|(pgid, _, _)| *pgid != self.pgid);
    }
}

/// SIGKILLs, at once and without a grace, every running process group of this host, its
/// leader's descendants, every process carrying its mark and those of its scope: the
/// second Ctrl-C, which must not leave a CLI that ignores SIGTERM running after the host
/// exits (the CLIs lead their own groups, so the terminal's SIGINT never reaches them).
/// Then waits until no process of those groups (their members,
/// their leaders' descendants, the processes carrying their marks) is alive, SIGKILLing
/// again whatever appeared meanwhile (a forker), for at most [`StopPolicy::give_up`]: a
/// second interrupt returns only once nothing the host started is left, so the host
/// exits after them, not before. Returns how many groups it killed.
pub fn kill_live_groups_and_wait() -> usize {
    let live = LIVE.lock().unwrap_or_else(PoisonError::into_inner).clone();
    let killed = kill_groups(&live);
    let deadline = Instant::now() + StopPolicy::DEFAULT.give_up;
    loop {
        let table = process_table();
        let alive: Vec<(i32, Vec<i32>)> = live
            .iter()
            .map(|(pgid, mark, scope)| {
                (*pgid, targets_in(&table, *pgid, Some(mark), scope.as_ref()))
            })
            .filter(|(_, pids)| !pids.is_empty())
            .collect();
        if alive.is_empty() || Instant::now() >= deadline {
            break;
        }
        for (pgid, pids) in &alive {
            signal_all(*pgid, pids, libc::SIGKILL);
        }
        std::thread::sleep(KILL_POLL);
    }
    killed
}

/// SIGKILLs each (group, mark, scope) of `groups` with everything it started; returns
/// how many.
fn kill_groups(groups: &[Live]) -> usize {
    if groups.is_empty() {
        return 0;
    }
    let table = process_table();
    for (pgid, mark, scope) in groups {
        let targets = targets_in(&table, *pgid, Some(mark), scope.as_ref());
        signal_all(*pgid, &targets, libc::SIGKILL);
    }
    groups.len()
}

/// How often the SIGTERM grace checks whether everything has gone.
const TERM_POLL: Duration = Duration::from_millis(20);
/// How often the SIGKILL rescan looks for survivors (a forker deaf to SIGTERM).
const KILL_POLL: Duration = Duration::from_millis(10);

/// Makes `cmd` lead a new process group with stdin closed. Do not rely on
/// `kill_on_drop`: it reaches the direct child only.
pub(crate) fn own_group(cmd: &mut tokio::process::Command) -> &mut tokio::process::Command {
    cmd.process_group(0)
        .stdin(Stdio::null())
        .kill_on_drop(false)
}

/// Sends `signal` to every process of group `pgid`.
pub(crate) fn signal_group(pgid: i32, signal: i32) {
    // SAFETY: plain syscall; a vanished group is reported as ESRCH, which is fine here.
    unsafe {
        libc::kill(-pgid, signal);
    }
}

/// Stops group `pgid` and every descendant of its leader (taken from `/proc` now, while
/// the leader still lives, so processes that left the group are found too): SIGTERM, up
/// to `grace` for them to go, then SIGKILL. Returns once none is left (or after a further
/// 5 s). The caller still waits for its own direct child, which stays a zombie until then.
pub(crate) async fn stop_group(pgid: i32, grace: Duration) {
    stop(pgid, None, None, grace).await;
}

/// [`stop_group`], and every process that carries the `mark` of the turn or step (see
/// [`MARK_VAR`]) wherever it went, even after the leader itself exited. Returns the processes it found to
/// stop (none once the CLI exited cleanly and left nothing behind).
pub(crate) async fn stop_tree(pgid: i32, mark: &str, grace: Duration) -> Vec<i32> {
    stop(pgid, Some(mark), None, grace).await
}

/// [`stop_tree`], and the processes of `scope` (see [`Scope`]).
pub(crate) async fn stop_tree_in(
    pgid: i32,
    mark: &str,
    scope: &Scope,
    grace: Duration,
) -> Vec<i32> {
    stop(pgid, Some(mark), Some(scope), grace).await
}

async fn stop(pgid: i32, mark: Option<&str>, scope: Option<&Scope>, grace: Duration) -> Vec<i32> {
    // The group and the leader's descendants first, at once: they are what runs the turn
    // (a CLI must not get to send more requests), and the mark's scan of every process's
    // environment takes longer.
    let table = process_table();
    let mut found = group_and_descendants_in(&table, pgid);
    signal_all(pgid, &found, libc::SIGTERM);
    let marked = mark.map(|m| marked_in(&table, m)).unwrap_or_default();
    let scoped = scope.map(|s| in_scope(&table, s)).unwrap_or_default();
    for pid in marked.into_iter().chain(scoped) {
        if !found.contains(&pid) {
            // SAFETY: plain syscall; a pid that is gone is reported as ESRCH.
            unsafe {
                libc::kill(pid, libc::SIGTERM);
            }
            found.push(pid);
        }
    }
    if found.is_empty() {
        return found;
    }
    // Each process found so far, by pid and start time: a pid reused meanwhile by another
    // process is not that process.
    let started = |table: &[ProcEntry], pids: &[i32]| -> Vec<(i32, u64)> {
        table
            .iter()
            .filter(|p| pids.contains(&p.pid))
            .map(|p| (p.pid, p.start))
            .collect()
    };
    let mut identities = started(&table, &found);
    let deadline = Instant::now() + grace;
    while any_alive(pgid, &found) && Instant::now() < deadline {
        tokio::time::sleep(TERM_POLL).await;
    }
    // Then SIGKILL, scanning again until a scan finds nothing alive: a survivor that
    // ignores SIGTERM may have forked since the last scan (or, past the policy's give-up,
    // give up).
    let deadline = Instant::now() + StopPolicy::DEFAULT.give_up;
    loop {
        let table = process_table();
        let mut alive = targets_in(&table, pgid, mark, scope);
        for &(pid, start) in &identities {
            let same = table.iter().any(|p| p.pid == pid && p.start == start);
            if same && !alive.contains(&pid) {
                alive.push(pid);
            }
        }
        if alive.is_empty() || Instant::now() >= deadline {
            break;
        }
        for &pid in &alive {
            if !found.contains(&pid) {
                found.push(pid);
            }
        }
        for identity in started(&table, &alive) {
            if !identities.contains(&identity) {
                identities.push(identity);
            }
        }
        signal_all(pgid, &alive, libc::SIGKILL);
        tokio::time::sleep(KILL_POLL).await;
    }
    found
}

fn signal_all(pgid: i32, pids: &[i32], signal: i32) {
    signal_group(pgid, signal);
    for &pid in pids {
        // SAFETY: plain syscall; a pid that is gone is reported as ESRCH.
        unsafe {
            libc::kill(pid, signal);
        }
    }
}

/// Whether any of `pids` (not zombie) or any member of group `pgid` is alive.
fn any_alive(pgid: i32, pids: &[i32]) -> bool {
    let table = process_table();
    table
        .iter()
        .any(|p| p.pgrp == pgid || pids.contains(&p.pid))
}

pub(crate) mod pidns;
#[cfg(test)]
mod tests;
