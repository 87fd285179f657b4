//! Tests of the parent module.

use super::*;
use std::path::Path;

#[tokio::test]
async fn runs_and_captures() {
    let out = run_shell(
        "echo hi; echo err >&2; exit 3",
        Path::new("/tmp"),
        &[],
        Duration::from_secs(5),
        1024,
    )
    .await
    .unwrap();
    assert_eq!(out.exit_code, Some(3));
    assert_eq!(out.stdout, "hi\n");
    assert_eq!(out.stderr, "err\n");
    assert!(!out.timed_out);
}

#[tokio::test]
async fn a_descendant_in_its_own_session_is_stopped_too() {
    let marker = format!("ce-setsid-marker-{}", std::process::id());
    // `setsid` puts the sleep in a new session and group: out of reach of the group.
    let cmd = format!("setsid bash -c 'exec -a {marker} sleep 30' & sleep 30");
    let out = run_shell(
        &cmd,
        Path::new("/tmp"),
        &[],
        Duration::from_millis(300),
        1024,
    )
    .await
    .unwrap();
    assert!(out.timed_out);
    let ps = std::process::Command::new("ps")
        .args(["-eo", "args"])
        .output()
        .unwrap();
    let table = String::from_utf8_lossy(&ps.stdout);
    assert!(!table.contains(&marker), "a descendant survived:\n{table}");
}

/// Live processes whose command line contains `marker`.
fn processes_with(marker: &str) -> Vec<i32> {
    process_table()
        .into_iter()
        .filter(|p| {
            std::fs::read(format!("/proc/{}/cmdline", p.pid))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains(marker))
        })
        .map(|p| p.pid)
        .collect()
}

/// Runs `sh` marked `mark`, which starts `bash -c SCRIPT` in a session of its own
/// (`setsid`) and exits at once; waits until `count` processes named `marker` run.
/// Returns the shell's process group.
async fn detach(script: &str, mark: &str, marker: &str, count: usize) -> i32 {
    let mut cmd = tokio::process::Command::new("sh");
    cmd.arg("-c")
        .arg(format!(
            "setsid bash -c '{script}' >/dev/null 2>&1 & exit 0"
        ))
        .env(MARK_VAR, mark);
    let mut child = own_group(&mut cmd).spawn().unwrap();
    let pgid = child.id().unwrap() as i32;
    assert!(child.wait().await.unwrap().success());
    let deadline = Instant::now() + Duration::from_secs(5);
    while processes_with(marker).len() < count && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    pgid
}

#[tokio::test]
async fn a_process_detached_before_a_clean_exit_is_found_by_its_mark() {
    let marker = format!("ce-detached-marker-{}", std::process::id());
    let mark = new_mark();
    // The shell detaches a sleep into a session of its own and exits at once: the
    // sleep has left the group and, once reparented, has no parent link to it either.
    let pgid = detach(&format!("exec -a {marker} sleep 30"), &mark, &marker, 1).await;
    let detached = processes_with(&marker);
    assert_eq!(detached.len(), 1, "the detached sleep started");
    assert!(
        !group_and_descendants(pgid).contains(&detached[0]),
        "neither group nor parent links reach it"
    );
    assert_eq!(marked(&mark), detached);

    let found = stop_tree(pgid, &mark, Duration::from_millis(500)).await;
    assert_eq!(found, detached);
    assert!(processes_with(&marker).is_empty(), "it was stopped");
    assert!(marked(&mark).is_empty());
}

#[tokio::test]
async fn a_detached_forker_that_ignores_sigterm_leaves_no_child() {
    let marker = format!("ce-forker-marker-{}", std::process::id());
    let mark = new_mark();
    // Detached, deaf to SIGTERM, and forking as fast as it can: children forked
    // after any one scan must be found by the next.
    let pgid = detach(
        &format!(
            "trap \"\" TERM; for i in $(seq 3000); do (exec -a {marker} sleep 30) & done; wait"
        ),
        &mark,
        &marker,
        20,
    )
    .await;
    let found = stop_tree(pgid, &mark, Duration::from_millis(100)).await;
    assert!(found.len() >= 20, "the forker and its children were found");
    let left = processes_with(&marker);
    assert!(left.is_empty(), "{} children survived", left.len());
    assert!(marked(&mark).is_empty());
}

#[tokio::test]
async fn timeout_kills_the_whole_group_including_a_grandchild_holding_stdout() {
    let marker = format!("ce-sleep-marker-{}", std::process::id());
    // The grandchild `sleep` keeps stdout open after the shell is killed.
    let cmd = format!("bash -c 'exec -a {marker} sleep 30' & sleep 30");
    let out = run_shell(
        &cmd,
        Path::new("/tmp"),
        &[],
        Duration::from_millis(300),
        1024,
    )
    .await
    .unwrap();
    assert!(out.timed_out);
    assert_eq!(out.exit_code, None);
    let ps = std::process::Command::new("ps")
        .args(["-eo", "args"])
        .output()
        .unwrap();
    let table = String::from_utf8_lossy(&ps.stdout);
    assert!(
        !table.contains(&marker),
        "a process of the group survived:\n{table}"
    );
}

#[tokio::test]
async fn a_second_ctrl_c_kills_a_live_group_that_ignores_sigterm_at_once() {
    let mark = new_mark();
    let marker = format!("ce-deaf-{}", std::process::id());
    // Deaf to SIGTERM, with a detached child that is too.
    let script = format!(
        "trap '' TERM; setsid bash -c 'trap \"\" TERM; exec -a {marker} sleep 30' & \
         while :; do sleep 0.1; done"
    );
    let mut cmd = tokio::process::Command::new("sh");
    cmd.arg("-c").arg(&script).env(MARK_VAR, &mark);
    let mut child = own_group(&mut cmd).spawn().unwrap();
    let pgid = child.id().unwrap() as i32;
    let live = LiveGroup::register(pgid, &mark);
    let registered = |pgid| LIVE.lock().unwrap().iter().any(|(p, _, _)| *p == pgid);
    assert!(registered(pgid));
    // Wait for the detached child to start.
    let deadline = Instant::now() + Duration::from_secs(5);
    while processes_with(&marker).len() < 2 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert!(!processes_with(&marker).is_empty());
    // What `kill_live_groups_and_wait` does, for this group only (other tests' groups run too).
    let started = Instant::now();
    assert_eq!(kill_groups(&[(pgid, mark.clone(), None)]), 1);
    child.wait().await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(2);
    while !processes_with(&marker).is_empty() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert!(
        processes_with(&marker).is_empty(),
        "the detached child survived"
    );
    assert!(!group_alive(pgid));
    // No grace was waited out (the default grace is seconds).
    assert!(started.elapsed() < StopPolicy::DEFAULT.kill_grace);
    drop(live);
    assert!(!registered(pgid));
}

/// Live processes whose name (argv[0]) is `marker` (not the shell whose script holds it).
fn named(marker: &str) -> Vec<i32> {
    process_table()
        .into_iter()
        .filter(|p| {
            std::fs::read(format!("/proc/{}/cmdline", p.pid))
                .is_ok_and(|c| c.split(|&b| b == 0).next() == Some(marker.as_bytes()))
        })
        .map(|p| p.pid)
        .collect()
}

/// Starts `sh -c SCRIPT` marked `mark` in a group of its own and waits (at most 10 s)
/// until a process named `marker` runs: the positive control, the target is alive before
/// the stop. Returns the shell and its group.
async fn started(script: &str, mark: &str, marker: &str) -> (tokio::process::Child, i32) {
    let mut cmd = tokio::process::Command::new("sh");
    cmd.arg("-c").arg(script).env(MARK_VAR, mark);
    let child = own_group(&mut cmd).spawn().unwrap();
    let pgid = child.id().unwrap() as i32;
    let deadline = Instant::now() + Duration::from_secs(10);
    while named(marker).is_empty() {
        assert!(Instant::now() < deadline, "`{marker}` never started");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    (child, pgid)
}

/// The parent link alone: a process that left the group (`setsid`) and dropped the mark
/// (`env -u`) is still found as a descendant of the group's leader, and stopped.
#[tokio::test]
async fn the_parent_link_alone_finds_a_process_outside_the_group_without_the_mark() {
    let marker = format!("ce-parent-only-{}", std::process::id());
    let mark = new_mark();
    let (mut shell, pgid) = started(
        &format!("env -u {MARK_VAR} setsid bash -c 'exec -a {marker} sleep 30' & sleep 30"),
        &mark,
        &marker,
    )
    .await;
    let target = named(&marker);
    assert_eq!(target.len(), 1);
    // Neither the group nor the mark reaches it: only the parent link does.
    assert!(!group_members(pgid).contains(&target[0]));
    assert!(!marked(&mark).contains(&target[0]));
    assert!(group_and_descendants(pgid).contains(&target[0]));
    let found = stop_tree(pgid, &mark, Duration::from_millis(500)).await;
    assert!(found.contains(&target[0]), "{found:?}");
    let _ = shell.wait().await;
    assert!(named(&marker).is_empty(), "the target survived");
}

/// The group alone: a process orphaned by a double fork (no parent link to the leader)
/// that dropped the mark is still a member of the group, and stopped with it.
#[tokio::test]
async fn the_group_alone_finds_an_orphan_without_the_mark() {
    let marker = format!("ce-group-only-{}", std::process::id());
    let mark = new_mark();
    let (mut shell, pgid) = started(
        &format!("(env -u {MARK_VAR} bash -c 'exec -a {marker} sleep 30' &); sleep 30"),
        &mark,
        &marker,
    )
    .await;
    let target = named(&marker);
    assert_eq!(target.len(), 1);
    let leader_descendants: Vec<i32> = {
        let table = process_table();
        let mut found = Vec::new();
        let mut frontier = vec![pgid];
        while let Some(parent) = frontier.pop() {
            for p in table.iter().filter(|p| p.ppid == parent) {
                found.push(p.pid);
                frontier.push(p.pid);
            }
        }
        found
    };
    assert!(!leader_descendants.contains(&target[0]), "orphaned");
    assert!(!marked(&mark).contains(&target[0]));
    assert!(group_members(pgid).contains(&target[0]));
    let found = stop_tree(pgid, &mark, Duration::from_millis(500)).await;
    assert!(found.contains(&target[0]), "{found:?}");
    let _ = shell.wait().await;
    assert!(named(&marker).is_empty(), "the target survived");
}

/// Trial of issue 17 (F1): with no PID namespace, a process the turn started with a
/// cleared environment in a session of its own (unmarked, no member, no descendant)
/// survived the second Ctrl-C, which killed by group and mark only; the turn's folder
/// scope finds it, as the normal stop does.
#[tokio::test]
async fn a_second_ctrl_c_kills_an_unmarked_escapee_in_the_turns_folder() {
    let mark = new_mark();
    let marker = format!("ce-escape-{}", std::process::id());
    let dir = std::env::temp_dir().join(format!("ce-escape-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let scope = Scope {
        dir: dir.clone(),
        since: boot_ticks(),
    };
    // The subshell exits at once: the escapee is orphaned, no descendant of the leader.
    let script = format!(
        "( env -i setsid bash -c 'trap \"\" TERM; exec -a {marker} sleep 30' & ); \
         while :; do sleep 0.1; done"
    );
    let mut cmd = tokio::process::Command::new("sh");
    cmd.arg("-c")
        .arg(&script)
        .env(MARK_VAR, &mark)
        .current_dir(&dir);
    let mut child = own_group(&mut cmd).spawn().unwrap();
    let pgid = child.id().unwrap() as i32;
    let live = LiveGroup::register(pgid, &mark);
    live.scope(&scope);
    let deadline = Instant::now() + Duration::from_secs(5);
    while processes_with(&marker).is_empty() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert!(!processes_with(&marker).is_empty());
    // Control: by group and mark alone the escapee outlives the kill.
    kill_groups(&[(pgid, mark.clone(), None)]);
    child.wait().await.unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(
        !processes_with(&marker).is_empty(),
        "the control killed it: the test would prove nothing"
    );
    // With the registered scope (what `kill_live_groups_and_wait` reads) it is killed.
    let registered: Vec<_> = LIVE
        .lock()
        .unwrap()
        .iter()
        .filter(|(p, _, _)| *p == pgid)
        .cloned()
        .collect();
    assert!(registered[0].2.is_some(), "the scope is registered");
    kill_groups(&registered);
    let deadline = Instant::now() + Duration::from_secs(2);
    while !processes_with(&marker).is_empty() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert!(processes_with(&marker).is_empty(), "the escapee survived");
    drop(live);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_process_in_the_middle_of_exec_is_still_found_by_its_mark() {
    // A marked process that `exec`s itself without pause: each `execve` leaves its
    // environment reading empty for a moment, which a single read takes for unmarked
    // (the field failure: a detached `setsid bash -c 'exec …'` escaped a check's sweep).
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("again.sh");
    std::fs::write(&script, "#!/bin/sh\nexec \"$0\"\n").unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let mark = new_mark();
    let mut child = std::process::Command::new(&script)
        .env(MARK_VAR, &mark)
        .spawn()
        .unwrap();
    let pid = child.id() as i32;
    // Until its first `execve` the child still holds the test's own environment.
    let deadline = Instant::now() + Duration::from_secs(5);
    while !marked(&mark).contains(&pid) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(1));
    }
    let missed = (0..300).filter(|_| !marked(&mark).contains(&pid)).count();
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(missed, 0, "scans that missed the marked process, of 300");
}

#[test]
fn an_environment_that_reads_empty_is_read_again_until_it_settles() {
    let reads = std::cell::RefCell::new(std::collections::HashMap::<i32, usize>::new());
    let env = format!("A=1\0{MARK_VAR}=m-1\0");
    let found = marked_by([101, 102, 103, 1], "m-1", |pid| {
        let n = {
            let mut reads = reads.borrow_mut();
            let n = reads.entry(pid).or_default();
            *n += 1;
            *n
        };
        match pid {
            // Mid-exec for its first three reads, then marked.
            101 if n <= 3 => Some(Vec::new()),
            101 => Some(env.clone().into_bytes()),
            // Empty for good (started with nothing): given up on, not marked.
            102 => Some(Vec::new()),
            // Gone after its first read.
            103 if n == 1 => Some(Vec::new()),
            103 => None,
            // Init is never read.
            _ => panic!("pid {pid} was read"),
        }
    });
    assert_eq!(found, vec![101]);
    let reads = reads.into_inner();
    assert_eq!(reads[&101], 4);
    assert_eq!(reads[&103], 2);
    assert!(reads[&102] > 4, "re-read until the settle time is up");
}
