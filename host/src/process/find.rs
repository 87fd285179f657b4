//! Which processes belong to a turn or a shell step, read from `/proc`: the members of
//! its process group and the descendants of its leader, the processes that carry its
//! mark ([`MARK_VAR`] in their environment), and those working in its folder (a
//! [`Scope`]). The stop itself is in the parent module.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

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
pub(super) const ENVIRON_SETTLE: Duration = Duration::from_millis(25);

/// The most of a process's environment [`environ`] reads: Linux's limit on a program's
/// arguments and environment together (`ARG_MAX` with the default 8 MiB stack).
pub(super) const ENVIRON_MAX: usize = 2 << 20;

/// `/proc/<pid>/environ` in one `read`: the kernel serves one call from one snapshot of
/// the process's memory, while a read in pieces can end early when the process `exec`s
/// between two pieces (what `std::fs::read` does: a truncated environment that lost the
/// mark at its end was seen here). `None`: gone, or not ours to read. `buf` is reused.
pub(super) fn environ(pid: i32, buf: &mut Vec<u8>) -> Option<Vec<u8>> {
    use std::io::Read;
    let mut file = std::fs::File::open(format!("/proc/{pid}/environ")).ok()?;
    buf.resize(ENVIRON_MAX, 0);
    let n = file.read(buf).ok()?;
    Some(buf[..n].to_vec())
}

/// [`marked`] among the processes of `table`.
pub(super) fn marked_in(table: &[ProcEntry], mark: &str) -> Vec<i32> {
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
pub(super) fn marked_by(
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
pub(super) struct ProcEntry {
    pub(super) pid: i32,
    pub(super) ppid: i32,
    pub(super) pgrp: i32,
    /// Start time (clock ticks since boot): with the pid, names one process even after
    /// the pid is reused.
    pub(super) start: u64,
}

/// `PF_KTHREAD` in the flags of `/proc/<pid>/stat` (field 9): a kernel thread, which no
/// turn starts and whose environment always reads empty.
pub(super) const PF_KTHREAD: u64 = 0x0020_0000;

/// Every live (not zombie) user process, read from `/proc` (kernel threads left out).
pub(super) fn process_table() -> Vec<ProcEntry> {
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
pub(super) fn group_and_descendants(pgid: i32) -> Vec<i32> {
    group_and_descendants_in(&process_table(), pgid)
}

/// [`group_and_descendants`] among the processes of `table`.
pub(super) fn group_and_descendants_in(table: &[ProcEntry], pgid: i32) -> Vec<i32> {
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

/// The processes of `table` started at or after `scope.since` whose working directory is
/// `scope.dir` or inside it (the host itself never).
pub(super) fn in_scope(table: &[ProcEntry], scope: &Scope) -> Vec<i32> {
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
pub(super) fn targets_in(
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
