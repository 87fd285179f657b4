//! The process-hygiene matrix (issue 17): for each stop path (exit, reducer trap, CLI
//! crash, turn_timeout, task_timeout, max_turns, max_tool_calls, SIGTERM of the host) ×
//! each way an agent starts processes (`&`, `nohup`, `setsid`, double fork, `env -i`,
//! ignoring SIGTERM, a grandchild holding stdout), no process of the task survives it. One stand-in CLI (a script that starts
//! the processes, then prints a recorded Claude Code stream and ends as the stop path
//! needs), run with the process group and mark alone (`--no-pid-namespace`), and in a PID
//! namespace.

use crate::reliability::alive_with;
use crate::support::{bin, corpus, scratch};
use coder_eval::results::TaskResult;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The ways an agent starts a process, each as the shell line that starts it; `{R}` is
/// the folder where each writes its pid once started, `{M}` its marker.
const WAYS: [(&str, &str); 7] = [
    (
        "bg",
        r#"(bash -c 'echo $$ > {R}/bg; exec -a {M}-bg sleep 300') >/dev/null 2>&1 &"#,
    ),
    (
        "nohup",
        r#"nohup bash -c 'echo $$ > {R}/nohup; exec -a {M}-nohup sleep 300' >/dev/null 2>&1 &"#,
    ),
    (
        "setsid",
        r#"setsid bash -c 'echo $$ > {R}/setsid; exec -a {M}-setsid sleep 300' >/dev/null 2>&1 &"#,
    ),
    (
        "double_fork",
        r#"(bash -c 'echo $$ > {R}/double_fork; exec -a {M}-double sleep 300' >/dev/null 2>&1 &)"#,
    ),
    (
        "env_i",
        r#"env -i bash -c 'echo $$ > {R}/env_i; exec -a {M}-envi sleep 300' >/dev/null 2>&1 &"#,
    ),
    (
        "ignores_sigterm",
        r#"(trap '' TERM; exec bash -c 'echo $$ > {R}/ignores_sigterm; exec -a {M}-deaf sleep 300') >/dev/null 2>&1 &"#,
    ),
    (
        "holds_stdout",
        r#"bash -c 'echo $$ > {R}/holds_stdout; exec -a {M}-holder sleep 300' &"#,
    ),
];

/// The stop paths: (name, run_limits of the task, how the stand-in ends after starting
/// its processes, the stop reason expected without / with the PID namespace).
struct Path_ {
    name: &'static str,
    limits: &'static str,
    ending: &'static str,
    stop: Option<&'static str>,
    stop_pidns: Option<&'static str>,
    /// Run with a reducer that traps (`test_panicker`): the turn goes on without it.
    trapping_reducer: bool,
}

const PATHS: [Path_; 8] = [
    // Exits on its own: the grandchild holding stdout makes it a leaked-pipes stop; in a
    // namespace the kernel kills it with the CLI, so nothing is left to stop.
    Path_ {
        name: "exit",
        limits: "{}",
        ending: "cat {HELLO}; exit 0",
        stop: Some("leaked_pipes"),
        stop_pidns: None,
        trapping_reducer: false,
    },
    // The reducer traps on the first line: the host records the reducer error and lets
    // the CLI run to its end.
    Path_ {
        name: "reducer_trap",
        limits: "{}",
        ending: "cat {HELLO}; exit 0",
        stop: Some("leaked_pipes"),
        stop_pidns: None,
        trapping_reducer: true,
    },
    Path_ {
        name: "crash",
        limits: "{}",
        ending: "head -n 2 {HELLO}; kill -SEGV $$; exit 3",
        stop: Some("leaked_pipes"),
        stop_pidns: None,
        trapping_reducer: false,
    },
    Path_ {
        name: "turn_timeout",
        limits: "{turn_timeout: 4}",
        ending: "head -n 2 {HELLO}; sleep 300",
        stop: Some("turn_timeout"),
        stop_pidns: Some("turn_timeout"),
        trapping_reducer: false,
    },
    Path_ {
        name: "task_timeout",
        limits: "{task_timeout: 4}",
        ending: "head -n 2 {HELLO}; sleep 300",
        stop: Some("task_timeout"),
        stop_pidns: Some("task_timeout"),
        trapping_reducer: false,
    },
    Path_ {
        name: "max_turns",
        limits: "{max_turns: 1}",
        ending: "cat {HELLO}; sleep 300",
        stop: Some("max_turns"),
        stop_pidns: Some("max_turns"),
        trapping_reducer: false,
    },
    Path_ {
        name: "max_tool_calls",
        limits: "{max_tool_calls: 1}",
        ending: "cat {HELLO}; sleep 300",
        stop: Some("max_tool_calls"),
        stop_pidns: Some("max_tool_calls"),
        trapping_reducer: false,
    },
    Path_ {
        name: "sigterm",
        limits: "{}",
        ending: "head -n 2 {HELLO}; sleep 300",
        stop: Some("interrupted"),
        stop_pidns: Some("interrupted"),
        trapping_reducer: false,
    },
];

/// One cell row: the stop path `p` with every way, with or without the namespace.
fn run_path(p: &Path_, pidns: bool) -> Result<(), String> {
    let label = format!("{}-{}", p.name, if pidns { "pidns" } else { "group" });
    let dir = scratch(&format!("hygiene-{label}"));
    let ready = dir.join("ready");
    std::fs::create_dir_all(&ready).unwrap();
    let marker = format!("ce-hyg-{}-{label}", std::process::id());
    let hello = corpus("live/claude/hello.jsonl");
    let mut script = String::from(
        "#!/bin/bash\nif [ \"$1\" = \"--version\" ]; then echo \"stand-in 1.0\"; exit 0; fi\n",
    );
    for (_, line) in WAYS {
        script.push_str(
            &line
                .replace("{R}", &ready.display().to_string())
                .replace("{M}", &marker),
        );
        script.push('\n');
    }
    script.push_str(&format!(
        "while [ $(ls {} | wc -l) -lt {} ]; do sleep 0.05; done\n",
        ready.display(),
        WAYS.len()
    ));
    script.push_str(&p.ending.replace("{HELLO}", &hello.display().to_string()));
    script.push('\n');
    let cli = dir.join("cli.sh");
    std::fs::write(&cli, script).unwrap();
    std::fs::set_permissions(&cli, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let task = dir.join("task.yaml");
    std::fs::write(
        &task,
        format!(
            "task_id: {}\ninitial_prompt: hi\nrun_limits: {}\n",
            p.name, p.limits
        ),
    )
    .unwrap();
    let out = dir.join("out");
    let mut cmd = Command::new(bin());
    cmd.arg("run")
        .arg(&task)
        .args(["--harness", "claude-code", "--cli"])
        .arg(&cli)
        .arg("--out")
        .arg(&out)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    if pidns {
        cmd.arg("--pid-namespace");
    } else {
        cmd.arg("--no-pid-namespace");
    }
    if p.trapping_reducer {
        cmd.arg("--component").arg(format!(
            "claude-code={}",
            crate::support::test_component("test_panicker.wasm").display()
        ));
    }
    let mut child = cmd.spawn().unwrap();
    if p.name == "sigterm" {
        let start = Instant::now();
        while std::fs::read_dir(&ready).unwrap().count() < WAYS.len() {
            if start.elapsed() > Duration::from_secs(60) {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("{label}: the processes never started"));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        std::thread::sleep(Duration::from_millis(200));
        // SAFETY: plain syscall to our own child.
        unsafe {
            libc::kill(child.id() as i32, libc::SIGTERM);
        }
    }
    child.wait().unwrap();
    let mut problems = Vec::new();
    // Positive control: every way's process had started (it wrote its pid).
    for (way, _) in WAYS {
        if !ready.join(way).exists() {
            problems.push(format!("{label}: `{way}` never started"));
        }
    }
    // The kernel's kill of a namespace is asynchronous: give it a moment.
    let start = Instant::now();
    while !alive_with(&marker).is_empty() && start.elapsed() < Duration::from_secs(3) {
        std::thread::sleep(Duration::from_millis(50));
    }
    for (way, _) in WAYS {
        let pid = std::fs::read_to_string(ready.join(way)).unwrap_or_default();
        let pid: i32 = pid.trim().parse().unwrap_or(0);
        if pid > 0 && alive_with(&marker).contains(&pid) {
            problems.push(format!("{label}: `{way}` (pid {pid}) survived"));
            // SAFETY: plain syscall; the test's own stand-in process.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
            }
        }
    }
    let result = match std::fs::read_to_string(out.join(p.name).join("claude-code/task.json")) {
        Ok(text) => text,
        Err(e) => {
            problems.push(format!("{label}: no task.json: {e}"));
            return Err(problems.join("\n"));
        }
    };
    let r: TaskResult = serde_json::from_str(&result).unwrap();
    let stop = r.stop.as_ref().map(|s| s.reason.as_str());
    let expected = if pidns { p.stop_pidns } else { p.stop };
    if stop != expected {
        problems.push(format!("{label}: stop {stop:?}, expected {expected:?}"));
    }
    if p.trapping_reducer && r.turn.as_ref().is_none_or(|t| t.reducer_error.is_none()) {
        problems.push(format!("{label}: the reducer did not trap"));
    }
    let containment = if pidns {
        "pid_namespace"
    } else {
        "process_group"
    };
    if r.cli.containment.as_deref() != Some(containment) {
        problems.push(format!("{label}: containment {:?}", r.cli.containment));
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n"))
    }
}

fn matrix(pidns: bool) {
    let failures: Vec<String> = std::thread::scope(|s| {
        let handles: Vec<_> = PATHS
            .iter()
            .map(|p| s.spawn(move || run_path(p, pidns)))
            .collect();
        handles
            .into_iter()
            .filter_map(|h| h.join().unwrap().err())
            .collect()
    });
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn no_process_survives_any_stop_path_with_the_group_and_mark() {
    matrix(false);
}

#[test]
fn no_process_survives_any_stop_path_in_a_pid_namespace() {
    if !crate::support::pid_namespace_available() {
        eprintln!("note: no PID namespace can be made here");
        return;
    }
    matrix(true);
}
