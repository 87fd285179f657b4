//! The host under stress at its edges (issue 17): SIGTERM, SIGHUP and SIGINT take one
//! path, a second signal kills everything before the host exits, and results are on disk
//! as tasks end. Each test drives the real binary against a stand-in CLI (a script that
//! prints the head of a recorded Claude Code stream, then starts processes the ways an
//! agent does), so nothing leaves the machine.

use crate::support::{bin, corpus, pid_namespace_available, scratch};
use coder_eval::results::TaskResult;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Live processes whose command line holds `marker` (zombies excluded).
pub fn alive_with(marker: &str) -> Vec<i32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| {
            let e = e.ok()?;
            let pid: i32 = e.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(e.path().join("stat")).ok()?;
            let state = stat
                .rsplit_once(')')?
                .1
                .split_whitespace()
                .next()?
                .to_string();
            let cmdline = std::fs::read(e.path().join("cmdline")).ok()?;
            (state != "Z" && String::from_utf8_lossy(&cmdline).contains(marker)).then_some(pid)
        })
        .collect()
}

/// Waits (at most `limit`) until `count` processes hold `marker`; panics otherwise.
pub fn wait_for(marker: &str, count: usize, limit: Duration) {
    let start = Instant::now();
    while alive_with(marker).len() < count {
        assert!(
            start.elapsed() < limit,
            "only {:?} of {count} `{marker}` processes started",
            alive_with(marker)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A stand-in CLI: answers `--version`; in a workspace of a task named `one` it prints a
/// whole recorded stream and exits; elsewhere it prints the stream's first two lines,
/// then starts `marker` processes four ways (`&`, `nohup`, `setsid`, `env -i`) and waits.
/// With `deaf`, every process of it ignores SIGTERM.
pub fn stand_in_cli(dir: &Path, marker: &str, deaf: bool) -> PathBuf {
    let hello = corpus("live/claude/hello.jsonl");
    let cli = dir.join("stand-in-cli.sh");
    let trap = if deaf { "trap '' TERM" } else { "" };
    std::fs::write(
        &cli,
        format!(
            r#"#!/bin/bash
if [ "$1" = "--version" ]; then echo "stand-in 1.0"; exit 0; fi
case "$PWD" in */one/*) cat {hello}; exit 0;; esac
{trap}
head -n 2 {hello}
(exec -a {marker}-bg sleep 300) &
nohup bash -c 'exec -a {marker}-nohup sleep 300' >/dev/null 2>&1 &
setsid bash -c 'exec -a {marker}-setsid sleep 300' >/dev/null 2>&1 &
env -i bash -c 'exec -a {marker}-envi sleep 300' >/dev/null 2>&1 &
wait
"#,
            hello = hello.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&cli, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    cli
}

/// Writes task files `names` (minimal tasks) into `dir`.
pub fn tasks(dir: &Path, names: &[&str]) -> Vec<PathBuf> {
    names
        .iter()
        .map(|name| {
            let path = dir.join(format!("{name}.yaml"));
            std::fs::write(&path, format!("task_id: {name}\ninitial_prompt: hi\n")).unwrap();
            path
        })
        .collect()
}

/// Starts `coder-eval run` of `tasks` on the stand-in `cli`, one task at a time.
pub fn start_run(tasks: &[PathBuf], cli: &Path, out: &Path) -> Child {
    start_run_with(tasks, cli, out, &[])
}

/// [`start_run`] with more arguments.
pub fn start_run_with(tasks: &[PathBuf], cli: &Path, out: &Path, extra: &[&str]) -> Child {
    Command::new(bin())
        .arg("run")
        .args(tasks)
        .args(["--harness", "claude-code", "--cli"])
        .arg(cli)
        .arg("--out")
        .arg(out)
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn signal(child: &Child, signal: i32) {
    // SAFETY: plain syscall to our own child.
    unsafe {
        libc::kill(child.id() as i32, signal);
    }
}

fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> T {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every file under `dir` whose name ends in `.tmp`.
pub fn temporary_files(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let path = e.path();
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push(path);
            } else if path.to_string_lossy().ends_with(".tmp") {
                found.push(path);
            }
        }
    }
    found
}

/// A three-task suite, the signal arriving while the second task's agent has started its
/// processes: the first task's result stands, the second is `interrupted` with what was
/// recorded, the third never starts (its result says so), run.json lists all three, the
/// exit code is 128 + the signal, and no process of the agent is left.
fn one_signal_stops_everything(sig: i32, name: &str) {
    let dir = scratch(&format!("signal-{name}"));
    let marker = format!("ce-sig-{}-{name}", std::process::id());
    let cli = stand_in_cli(&dir, &marker, false);
    let out = dir.join("out");
    let mut child = start_run(&tasks(&dir, &["one", "two", "three"]), &cli, &out);
    // Positive control: all four of the agent's processes run before the signal.
    wait_for(&marker, 4, Duration::from_secs(60));
    // The first task ended before the second started: its row reaches run.json as it
    // ends (the main loop writes it while the next task starts).
    let start = Instant::now();
    let run = loop {
        let run: serde_json::Value = read_json(&out.join("run.json"));
        if run["rows"][0]["task_id"] == "one" || start.elapsed() > Duration::from_secs(10) {
            break run;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(run["rows"][0]["task_id"], "one", "{run}");
    assert_eq!(run["unfinished"], 2, "{run}");
    signal(&child, sig);
    let status = child.wait().unwrap();
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert_eq!(status.code(), Some(128 + sig), "{stderr}");
    assert!(
        stderr.contains(&format!("interrupted ({name})")),
        "{stderr}"
    );
    let left = alive_with(&marker);
    assert!(left.is_empty(), "survivors after {name}: {left:?}");
    // The progress line: the stopped task is interrupted, not failed; the one that
    // never started is not run, not done (issue 15 trial: "3/3 done, 2 failed").
    let last = stderr
        .lines()
        .rfind(|l| l.starts_with("progress: "))
        .unwrap_or_default();
    assert!(
        last.starts_with("progress: 2/3 done, 0 running, 0 failed, 1 interrupted, 1 not run;"),
        "{stderr}"
    );

    let task = |id: &str| read_json::<TaskResult>(&out.join(id).join("claude-code/task.json"));
    let one = task("one");
    assert_eq!(one.status.as_str(), "SUCCESS", "{:?}", one.error);
    assert!(one.stop.is_none());
    let two = task("two");
    assert_eq!(two.status.as_str(), "ERROR");
    assert_eq!(two.stop.as_ref().unwrap().reason.as_str(), "interrupted");
    assert_eq!(two.error_kind.as_deref(), Some("interrupted"));
    // What was recorded is kept: the two lines the agent printed, and the stop.
    let turn = two.turn.as_ref().expect("the partial turn is kept");
    assert_eq!(turn.stdout_lines, 2);
    let recording = std::fs::read_to_string(out.join("two/claude-code/recording.jsonl")).unwrap();
    assert!(
        recording.contains(r#""reason":"interrupted""#),
        "{recording}"
    );
    let three = task("three");
    assert_eq!(three.stop.as_ref().unwrap().reason.as_str(), "interrupted");
    assert!(three.turn.is_none(), "the third task must not start");
    let said = three.error.as_deref().unwrap_or_default();
    assert!(said.contains("before the agent started"), "{said}");
    assert!(!out.join("three/claude-code/recording.jsonl").exists());

    let run: serde_json::Value = read_json(&out.join("run.json"));
    let ids: Vec<&str> = run["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["task_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["one", "two", "three"]);
    assert!(run.get("unfinished").is_none(), "{run}");
    assert!(
        temporary_files(&out).is_empty(),
        "{:?}",
        temporary_files(&out)
    );
}

#[test]
fn sigterm_stops_every_cli_writes_every_result_and_exits_143() {
    one_signal_stops_everything(libc::SIGTERM, "SIGTERM");
}

#[test]
fn sighup_stops_every_cli_writes_every_result_and_exits_129() {
    one_signal_stops_everything(libc::SIGHUP, "SIGHUP");
}

#[test]
fn sigint_stops_every_cli_writes_every_result_and_exits_130() {
    one_signal_stops_everything(libc::SIGINT, "SIGINT");
}

/// The agent's processes all ignore SIGTERM, so the first signal's stop waits out its
/// grace; a second signal kills them at once, and they are gone when the host has exited
/// (not after). What finished before is on disk: task one's result and a run.json that
/// lists it.
#[test]
fn a_second_signal_kills_every_process_before_the_host_exits() {
    let dir = scratch("signal-twice");
    let marker = format!("ce-sig2-{}", std::process::id());
    let cli = stand_in_cli(&dir, &marker, true);
    let out = dir.join("out");
    let mut child = start_run(&tasks(&dir, &["one", "two"]), &cli, &out);
    wait_for(&marker, 4, Duration::from_secs(60));
    wait_for_rows(&out, 1);
    signal(&child, libc::SIGTERM);
    std::thread::sleep(Duration::from_millis(300));
    // Deaf to SIGTERM: still alive inside the grace.
    assert_eq!(alive_with(&marker).len(), 4, "they ignore SIGTERM");
    signal(&child, libc::SIGINT);
    let status = child.wait().unwrap();
    // Checked the moment the host is gone: nothing of the agent outlived it.
    let left = alive_with(&marker);
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert!(left.is_empty(), "survivors: {left:?}\n{stderr}");
    assert_eq!(status.code(), Some(143), "{stderr}");
    assert!(stderr.contains("interrupted again (SIGINT)"), "{stderr}");
    let one: TaskResult = read_json(&out.join("one/claude-code/task.json"));
    assert_eq!(one.status.as_str(), "SUCCESS");
    let run: serde_json::Value = read_json(&out.join("run.json"));
    assert_eq!(run["rows"].as_array().unwrap().len(), 1, "{run}");
    assert_eq!(run["unfinished"], 1, "{run}");
    assert!(
        temporary_files(&out).is_empty(),
        "{:?}",
        temporary_files(&out)
    );
}

/// A signal while a `pre_run` shell runs stops that shell (and what it started) too; the
/// task is `interrupted`, never started.
#[test]
fn a_signal_stops_a_running_pre_run_shell() {
    let dir = scratch("signal-pre-run");
    let marker = format!("ce-sig-pre-{}", std::process::id());
    let cli = stand_in_cli(&dir, &marker, false);
    let task = dir.join("slow.yaml");
    std::fs::write(
        &task,
        format!(
            "task_id: slow\ninitial_prompt: hi\npre_run:\n  - command: \"bash -c 'exec -a {marker}-pre sleep 300' & bash -c 'exec -a {marker}-pre2 sleep 300'\"\n    timeout: 300\n"
        ),
    )
    .unwrap();
    let out = dir.join("out");
    let mut child = start_run(&[task], &cli, &out);
    wait_for(&marker, 2, Duration::from_secs(60));
    signal(&child, libc::SIGTERM);
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(143));
    let left = alive_with(&marker);
    assert!(left.is_empty(), "survivors: {left:?}");
    let r: TaskResult = read_json(&out.join("slow/claude-code/task.json"));
    assert_eq!(
        r.error_kind.as_deref(),
        Some("interrupted"),
        "{:?}",
        r.error
    );
    assert_eq!(r.stop.as_ref().unwrap().reason.as_str(), "interrupted");
    assert!(r.turn.is_none());
}

/// `--isolate-network` where no network namespace can be made (`unshare -n` fails, as in
/// a container without user namespaces) is an error before anything runs, never a run
/// without isolation; so is a `CODER_EVAL_NETNS` inherited into a process that is not in
/// a namespace of its own.
#[test]
fn isolate_network_never_runs_without_isolation() {
    let dir = scratch("isolate-refused");
    let marker = format!("ce-netns-{}", std::process::id());
    let cli = stand_in_cli(&dir, &marker, false);
    let bin_dir = dir.join("bin");
    std::fs::create_dir_all(&bin_dir).unwrap();
    let unshare = bin_dir.join("unshare");
    std::fs::write(
        &unshare,
        "#!/bin/sh\necho 'unshare: unshare failed: Operation not permitted' >&2\nexit 1\n",
    )
    .unwrap();
    std::fs::set_permissions(
        &unshare,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let task = tasks(&dir, &["one"]);
    let run = |out: &Path, path: String, netns: Option<&str>| {
        let mut cmd = Command::new(bin());
        cmd.arg("run")
            .args(&task)
            .args(["--harness", "claude-code", "--isolate-network", "--cli"])
            .arg(&cli)
            .arg("--out")
            .arg(out)
            .env("PATH", path);
        match netns {
            Some(v) => cmd.env("CODER_EVAL_NETNS", v),
            None => cmd.env_remove("CODER_EVAL_NETNS"),
        };
        cmd.output().unwrap()
    };
    let path = std::env::var("PATH").unwrap();
    let out = dir.join("out-no-unshare");
    let o = run(&out, format!("{}:{path}", bin_dir.display()), None);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("refusing to run without it"), "{stderr}");
    assert!(stderr.contains("Operation not permitted"), "{stderr}");
    assert!(!out.join("one/claude-code/task.json").exists());

    let out = dir.join("out-spoofed");
    let o = run(&out, path, Some("1"));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("not in a network namespace of its own"),
        "{stderr}"
    );
    assert!(!out.join("one/claude-code/task.json").exists());
}

/// SIGKILL of the host cannot be handled by it; with `--pid-namespace` nothing of the
/// running task survives it all the same: not a `setsid` process, not one that cleared
/// its environment, not a double-forked orphan. The control run without the namespace
/// shows what the namespace adds: there, the same processes outlive the host.
#[test]
fn with_a_pid_namespace_nothing_survives_a_sigkilled_host() {
    if !pid_namespace_available() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must be able to make a PID namespace"
        );
        eprintln!("note: no PID namespace can be made here; the test has nothing to check");
        return;
    }
    let kill_host = |name: &str, extra: &[&str]| -> (PathBuf, String, Vec<i32>) {
        let dir = scratch(name);
        let marker = format!("ce-{name}-{}", std::process::id());
        let cli = stand_in_cli(&dir, &marker, true);
        let out = dir.join("out");
        let mut child = start_run_with(&tasks(&dir, &["one", "two"]), &cli, &out, extra);
        wait_for(&marker, 4, Duration::from_secs(60));
        wait_for_rows(&out, 1);
        signal(&child, libc::SIGKILL);
        child.wait().unwrap();
        // The kernel's chain (unshare, then the CLI, then the namespace) takes a moment.
        let start = Instant::now();
        while !alive_with(&marker).is_empty() && start.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(50));
        }
        (out, marker.clone(), alive_with(&marker))
    };
    // Control: without the namespace the agent's processes outlive a SIGKILLed host.
    let (_, marker, survivors) = kill_host("sigkill-plain", &["--no-pid-namespace"]);
    assert!(
        !survivors.is_empty(),
        "the control run left nothing: the test would prove nothing"
    );
    for pid in survivors {
        // SAFETY: plain syscall; these are this test's own stand-in processes.
        unsafe {
            libc::kill(pid, libc::SIGKILL);
        }
    }
    wait_for_none(&marker);
    let (out, _, survivors) = kill_host("sigkill-pidns", &["--pid-namespace"]);
    assert!(survivors.is_empty(), "survivors: {survivors:?}");
    // What finished before the SIGKILL is on disk, and says how it was contained.
    let one: TaskResult = read_json(&out.join("one/claude-code/task.json"));
    assert_eq!(one.cli.containment.as_deref(), Some("pid_namespace"));
    let run: serde_json::Value = read_json(&out.join("run.json"));
    assert_eq!(run["rows"][0]["task_id"], "one", "{run}");
    assert_eq!(run["unfinished"], 1, "{run}");
}

/// Waits until `out`'s run.json lists `rows` finished tasks: a run rewrites it at most
/// once per 2 s as tasks end (`RunJsonPace::EVERY`), even when no further task ends, so
/// a row is there within that bound (panics after 10 s).
fn wait_for_rows(out: &Path, rows: usize) {
    let start = Instant::now();
    loop {
        let listed = std::fs::read(out.join("run.json"))
            .ok()
            .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
            .and_then(|v| v["rows"].as_array().map(Vec::len));
        if listed == Some(rows) {
            return;
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "run.json lists {listed:?} rows, not {rows}, 10 s on"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn wait_for_none(marker: &str) {
    let start = Instant::now();
    while !alive_with(marker).is_empty() {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "{marker} lingers"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The same suite with and without `--pid-namespace` records the same turn; the
/// namespace's task says so in `cli.containment`, and a process the agent detached is
/// still gone after the task.
#[test]
fn a_pid_namespace_task_records_the_same_turn() {
    if !pid_namespace_available() {
        return;
    }
    let dir = scratch("pidns-same");
    let marker = format!("ce-pidns-same-{}", std::process::id());
    let cli = stand_in_cli(&dir, &marker, false);
    let task = tasks(&dir, &["one"]);
    let run = |out: &Path, extra: &[&str]| -> TaskResult {
        let status = start_run_with(&task, &cli, out, extra).wait().unwrap();
        assert_eq!(status.code(), Some(0));
        read_json(&out.join("one/claude-code/task.json"))
    };
    let plain = run(&dir.join("plain"), &["--no-pid-namespace"]);
    let pidns = run(&dir.join("pidns"), &["--pid-namespace"]);
    assert_eq!(plain.cli.containment.as_deref(), Some("process_group"));
    assert_eq!(pidns.cli.containment.as_deref(), Some("pid_namespace"));
    let (a, b) = (plain.turn.unwrap(), pidns.turn.unwrap());
    assert_eq!(a.stdout_lines, b.stdout_lines);
    assert_eq!(a.final_status, b.final_status);
    assert_eq!(a.tool_calls.len(), b.tool_calls.len());
}

/// `coder-eval check` reports every error of a file, each with its line, not only the
/// first; a good file beside it still loads.
#[test]
fn check_reports_every_error_of_a_file() {
    let dir = scratch("check-every-error");
    let bad = dir.join("bad.yaml");
    std::fs::write(
        &bad,
        "task_id: t\ninitial_prompt: hi\nrun_limits:\n  max_turns: many\nsuccess_criteria:\n  - {type: file_exists, path: a.txt, description: ok}\n  - {type: no_such_type, description: x}\nagent:\n  type: claude-code\n  bogus_field: 1\n",
    )
    .unwrap();
    let good = tasks(&dir, &["good"]);
    let out = Command::new(bin())
        .arg("check")
        .arg(&bad)
        .args(&good)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    let errors: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("error: "))
        .collect();
    assert_eq!(errors.len(), 3, "{stderr}");
    let bad_name = bad.display().to_string();
    for (error, (line, what)) in
        errors
            .iter()
            .zip([(4, "max_turns"), (7, "no_such_type"), (10, "bogus_field")])
    {
        assert!(
            error.contains(&format!("{bad_name}:{line}:")) && error.contains(what),
            "{error}\n{stderr}"
        );
    }
    assert!(String::from_utf8_lossy(&out.stdout).contains("ok "));
    assert!(
        stderr.contains("1 of 2 task files did not load"),
        "{stderr}"
    );
}

/// A CLI whose `--version` hangs (and starts a child): a signal during the probe stops
/// the probe's whole group at once; nothing of it outlives the host.
#[test]
fn a_signal_during_the_version_probe_stops_the_probe() {
    let dir = scratch("signal-probe");
    let marker = format!("ce-sig-probe-{}", std::process::id());
    let cli = dir.join("hanging-cli.sh");
    std::fs::write(
        &cli,
        format!(
            "#!/bin/bash\nif [ \"$1\" = \"--version\" ]; then (exec -a {marker}-child sleep 300) & exec -a {marker}-probe sleep 300; fi\nexit 0\n"
        ),
    )
    .unwrap();
    std::fs::set_permissions(&cli, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let out = dir.join("out");
    let mut child = start_run(&tasks(&dir, &["probe"]), &cli, &out);
    wait_for(&marker, 2, Duration::from_secs(60));
    signal(&child, libc::SIGTERM);
    let status = child.wait().unwrap();
    let left = alive_with(&marker);
    assert!(left.is_empty(), "the probe outlived the host: {left:?}");
    assert_eq!(status.code(), Some(143));
    let r: TaskResult = read_json(&out.join("probe/claude-code/task.json"));
    assert_eq!(
        r.error_kind.as_deref(),
        Some("interrupted"),
        "{:?}",
        r.error
    );
}

/// A `--cli` path that is not there, or not executable, is the `launch` error a CLI not
/// found by name is (`RunError::Launch`), with or without the PID namespace; never the
/// `cli` of an I/O error while it ran.
#[test]
fn a_missing_or_non_executable_cli_path_is_a_launch_error() {
    let dir = scratch("cli-missing-kind");
    let task = dir.join("t.yaml");
    std::fs::write(&task, "task_id: t\ninitial_prompt: hi\n").unwrap();
    let not_exec = dir.join("not-exec-claude");
    std::fs::write(&not_exec, "#!/bin/sh\necho stand-in 1.0\n").unwrap();
    let missing = dir.join("no-such-claude");
    for (cli, says) in [
        (missing.as_path(), "no such executable"),
        (not_exec.as_path(), "not executable"),
    ] {
        for extra in [&[][..], &["--no-pid-namespace"][..]] {
            let out = dir.join(format!("out-{}", extra.len()));
            let _ = std::fs::remove_dir_all(&out);
            let child = start_run_with(std::slice::from_ref(&task), cli, &out, extra);
            let o = child.wait_with_output().unwrap();
            let r: TaskResult = read_json(&out.join("t/claude-code/task.json"));
            let shown = format!(
                "{cli:?} {extra:?}: {:?} {}",
                r.error,
                String::from_utf8_lossy(&o.stderr)
            );
            assert_eq!(r.error_kind.as_deref(), Some("launch"), "{shown}");
            let error = r.error.clone().unwrap_or_default();
            assert!(error.contains(says), "{shown}");
            assert!(error.contains(&cli.display().to_string()), "{shown}");
        }
    }
}
