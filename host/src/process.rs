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
//! them all at once before the host exits ([`kill_live_groups`]).
//!
//! Running one shell command to completion with a timeout and capped output
//! ([`run_shell`]) is in `shell`; the PID namespace option in `pidns`.

mod shell;

pub(crate) use shell::{ShellOutcome, read_capped, run_shell};

use crate::limits::StopPolicy;
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

/// A running process group (an agent CLI's turn, a shell step): its id, its mark, and
/// the turn's folder scope when it has one ([`LiveGroup::scope`]).
type Live = (i32, String, Option<Scope>);

/// The process groups running now, with their marks and scopes: what the second Ctrl-C
/// kills at once ([`kill_live_groups`]).
static LIVE: Mutex<Vec<Live>> = Mutex::new(Vec::new());

/// A running process group, registered for [`kill_live_groups`] until it is dropped (once
/// the group has been stopped and reaped).
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
/// second Ctrl-C, which
/// must not leave a CLI that ignores SIGTERM running after the host exits (the CLIs lead
/// their own groups, so the terminal's SIGINT never reaches them). Returns how many groups
/// it killed.
pub fn kill_live_groups() -> usize {
    let live = LIVE.lock().unwrap_or_else(PoisonError::into_inner).clone();
    kill_groups(&live)
}

/// [`kill_live_groups`], then waits until no process of those groups (their members,
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

/// The environment variable that marks the processes of one agent turn or shell step.
pub(crate) const MARK_VAR: &str = "CODER_EVAL_PROCESS_MARK";

/// A mark no other turn or step of any host process uses: `<host pid>-<number>`.
pub(crate) fn new_mark() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    format!(
        "{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// The live processes whose environment holds `MARK_VAR=mark` (read from
/// `/proc/<pid>/environ`, which is the environment a process was started with; readable
/// for the host's own user's processes).
pub fn marked(mark: &str) -> Vec<i32> {
    marked_in(&process_table(), mark)
}

/// How long [`marked_in`] keeps re-reading an environment that reads empty. A process in
/// the middle of `execve` shows an empty `/proc/<pid>/environ` until the kernel has laid
/// out its new stack (8% of the reads of a process that `exec`s itself in a loop, measured
/// here), and a detached process that `exec`s right as the scan passes must not escape it.
const ENVIRON_SETTLE: Duration = Duration::from_millis(25);

/// The most of a process's environment [`environ`] reads: Linux's limit on a program's
/// arguments and environment together (`ARG_MAX` with the default 8 MiB stack).
const ENVIRON_MAX: usize = 2 << 20;

/// `/proc/<pid>/environ` in one `read`: the kernel serves one call from one snapshot of
/// the process's memory, while a read in pieces can end early when the process `exec`s
/// between two pieces (what `std::fs::read` does: a truncated environment that lost the
/// mark at its end was seen here). `None`: gone, or not ours to read. `buf` is reused.
fn environ(pid: i32, buf: &mut Vec<u8>) -> Option<Vec<u8>> {
    use std::io::Read;
    let mut file = std::fs::File::open(format!("/proc/{pid}/environ")).ok()?;
    buf.resize(ENVIRON_MAX, 0);
    let n = file.read(buf).ok()?;
    Some(buf[..n].to_vec())
}

/// [`marked`] among the processes of `table`.
fn marked_in(table: &[ProcEntry], mark: &str) -> Vec<i32> {
    let mut buf = Vec::new();
    marked_by(table.iter().map(|p| p.pid), mark, |pid| {
        environ(pid, &mut buf)
    })
}

/// Whether process `pid` was started with `MARK_VAR=mark` (read as [`marked`] reads).
pub(crate) fn carries_mark(pid: i32, mark: &str) -> bool {
    let mut buf = Vec::new();
    !marked_by([pid], mark, |pid| environ(pid, &mut buf)).is_empty()
}

/// Those of `pids` marked `mark`, with `environ(pid)` for the environment of `pid`
/// (`None`: gone, or not ours to read). An environment that reads empty is read again, every millisecond for
/// up to [`ENVIRON_SETTLE`], until it holds something or the process is gone; init
/// (pid 1) and the host itself are never marked and not read.
fn marked_by(
    pids: impl IntoIterator<Item = i32>,
    mark: &str,
    mut environ: impl FnMut(i32) -> Option<Vec<u8>>,
) -> Vec<i32> {
    let needle = format!("{MARK_VAR}={mark}");
    let holds = |env: &[u8]| {
        env.split(|&b| b == 0)
            .any(|entry| entry == needle.as_bytes())
    };
    let me = std::process::id() as i32;
    let mut found = Vec::new();
    let mut unsure = Vec::new();
    for pid in pids.into_iter().filter(|&pid| pid != 1 && pid != me) {
        match environ(pid) {
            Some(env) if env.is_empty() => unsure.push(pid),
            Some(env) if holds(&env) => found.push(pid),
            _ => {}
        }
    }
    let deadline = Instant::now() + ENVIRON_SETTLE;
    while !unsure.is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(1));
        unsure.retain(|&pid| match environ(pid) {
            Some(env) if env.is_empty() => true,
            Some(env) => {
                if holds(&env) {
                    found.push(pid);
                }
                false
            }
            None => false,
        });
    }
    found
}

/// One live (not zombie) process as `/proc/<pid>/stat` shows it.
struct ProcEntry {
    pid: i32,
    ppid: i32,
    pgrp: i32,
    /// Start time (clock ticks since boot): with the pid, names one process even after
    /// the pid is reused.
    start: u64,
}

/// `PF_KTHREAD` in the flags of `/proc/<pid>/stat` (field 9): a kernel thread, which no
/// turn starts and whose environment always reads empty.
const PF_KTHREAD: u64 = 0x0020_0000;

/// Every live (not zombie) user process, read from `/proc` (kernel threads left out).
fn process_table() -> Vec<ProcEntry> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            // "pid (comm) state ppid pgrp ...": comm may hold spaces, so split after ')'.
            let (_, rest) = stat.rsplit_once(')')?;
            let fields: Vec<&str> = rest.split_whitespace().collect();
            if fields.first() == Some(&"Z") {
                return None;
            }
            // Field 9 of stat; `fields` starts at field 3 (state).
            let flags: u64 = fields.get(6)?.parse().ok()?;
            if flags & PF_KTHREAD != 0 {
                return None;
            }
            Some(ProcEntry {
                pid,
                ppid: fields.get(1)?.parse().ok()?,
                pgrp: fields.get(2)?.parse().ok()?,
                // Field 22 of stat; `fields` starts at field 3 (state).
                start: fields.get(19)?.parse().ok()?,
            })
        })
        .collect()
}

/// The live (not zombie) processes of group `pgid`, read from `/proc`.
pub fn group_members(pgid: i32) -> Vec<i32> {
    process_table()
        .into_iter()
        .filter(|p| p.pgrp == pgid)
        .map(|p| p.pid)
        .collect()
}

/// The live members of group `pgid` and every live descendant of process `pgid` (its
/// leader), wherever they went: a CLI may start tool commands in process groups or
/// sessions of their own, which a signal to the group alone would miss.
#[cfg(test)]
fn group_and_descendants(pgid: i32) -> Vec<i32> {
    group_and_descendants_in(&process_table(), pgid)
}

/// [`group_and_descendants`] among the processes of `table`.
fn group_and_descendants_in(table: &[ProcEntry], pgid: i32) -> Vec<i32> {
    let mut found: Vec<i32> = table
        .iter()
        .filter(|p| p.pgrp == pgid)
        .map(|p| p.pid)
        .collect();
    let mut frontier = vec![pgid];
    while let Some(parent) = frontier.pop() {
        for p in table.iter().filter(|p| p.ppid == parent) {
            if !found.contains(&p.pid) {
                found.push(p.pid);
            }
            if p.pid != parent {
                frontier.push(p.pid);
            }
        }
    }
    found.retain(|&pid| table.iter().any(|p| p.pid == pid));
    found
}

/// Whether any live process of group `pgid` is left (zombies do not count).
pub fn group_alive(pgid: i32) -> bool {
    !group_members(pgid).is_empty()
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

/// Where a turn's processes work, for those that carry no mark: a process the agent
/// started with a cleared environment (`env -i`), in a session of its own and orphaned,
/// is no member of the group, no descendant and unmarked. It is found by its working
/// directory: inside `dir` (the turn's own folder, which no other turn shares) and
/// started at or after `since` (clock ticks since boot, [`boot_ticks`]), so a process
/// that was there before the turn is never taken for one of it.
#[derive(Debug, Clone)]
pub(crate) struct Scope {
    pub dir: std::path::PathBuf,
    pub since: u64,
}

/// Now, in clock ticks since boot (the unit of a process's start time in
/// `/proc/<pid>/stat`); 0 when `/proc/uptime` cannot be read (then every process started
/// in `dir` counts).
pub(crate) fn boot_ticks() -> u64 {
    // SAFETY: plain sysconf call.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    std::fs::read_to_string("/proc/uptime")
        .ok()
        .and_then(|t| t.split_whitespace().next()?.parse::<f64>().ok())
        .map_or(0, |secs| (secs * hz).floor() as u64)
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

/// The processes of `table` started at or after `scope.since` whose working directory is
/// `scope.dir` or inside it (the host itself never).
fn in_scope(table: &[ProcEntry], scope: &Scope) -> Vec<i32> {
    let dir = scope
        .dir
        .canonicalize()
        .unwrap_or_else(|_| scope.dir.clone());
    let me = std::process::id() as i32;
    table
        .iter()
        .filter(|p| p.pid != me && p.start >= scope.since)
        .filter(|p| {
            std::fs::read_link(format!("/proc/{}/cwd", p.pid))
                .is_ok_and(|cwd| cwd.starts_with(&dir))
        })
        .map(|p| p.pid)
        .collect()
}

/// The members of group `pgid`, the descendants of its leader, the processes marked
/// `mark`, and those of `scope`, among the processes of `table`.
fn targets_in(
    table: &[ProcEntry],
    pgid: i32,
    mark: Option<&str>,
    scope: Option<&Scope>,
) -> Vec<i32> {
    let mut found = group_and_descendants_in(table, pgid);
    let others = mark.map(|m| marked_in(table, m)).unwrap_or_default();
    let scoped = scope.map(|s| in_scope(table, s)).unwrap_or_default();
    for pid in others.into_iter().chain(scoped) {
        if !found.contains(&pid) {
            found.push(pid);
        }
    }
    found
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
