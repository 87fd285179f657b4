//! Suite throughput on one machine (issue 15 §5, issue 17's load item): a suite of M
//! tasks run with `--jobs` 1, 4, 16 and 32 through `run_all`, each level reporting
//!
//! - tasks per minute (wall clock of the whole suite);
//! - host overhead per task: the CPU time of the host process (user + system,
//!   `getrusage(RUSAGE_SELF)`: its threads, the scripted models it serves included, its
//!   children, the agents, not) over the level, divided by M — what each task costs the
//!   host whatever `--jobs` is. Shown beside it, for the record: the median wall time of a
//!   task's host stages (setup + grading + turn work, as `task.json` carries them), which
//!   grows with `--jobs` above the cores because a stage then waits for a core, and the
//!   suite's wall × jobs / M less the mean agent time;
//! - the host's peak RSS during the level (`VmHWM`, reset before each level through
//!   `/proc/self/clear_refs`);
//! - that nothing was lost or leaked: M results, M `task.json` files and M rows in
//!   `run.json`, every task passed; no child process left; the host's open fds the same
//!   before and after.
//!
//! The agent: by default a stand-in for `claude` (`--cli`) that writes the task's file
//! and prints a recorded Claude Code stream (`tests/corpus/live/claude/hello.jsonl`), so
//! the host's share is what is measured, not 32 node processes fighting for the cores
//! (the scripted model is started per task all the same). `THROUGHPUT_CLI=claude` runs
//! the real Claude Code CLI against the scripted model instead (pinned install,
//! `scripts/setup.sh`). `THROUGHPUT_TASKS=M` (default 64), `THROUGHPUT_JOBS=1,4,16,32`.
//!
//! One task is run first, unmeasured: what the host sets up once (the component cache,
//! the runtime's threads, the CLI's version) is no task's cost and no leak.
//!
//! Targets: host CPU ≤ 20 ms per task at every level, host RSS ≤ 200 MB at 32,
//! nothing lost or leaked. `cargo bench --bench throughput` prints the table and exits 1
//! (FAIL lines) when a target is missed.

use coder_eval::results::TaskStatus;
use coder_eval::run::{RunOptions, prepare, run_all};
use coder_eval::task::Task;
use std::path::{Path, PathBuf};
use std::time::Instant;

const OVERHEAD_TARGET_MS: f64 = 20.0;
const RSS_TARGET_MB: f64 = 200.0;

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let m: usize = env_or("THROUGHPUT_TASKS", 64);
    let levels: Vec<usize> = std::env::var("THROUGHPUT_JOBS")
        .ok()
        .map(|v| v.split(',').filter_map(|j| j.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![1, 4, 16, 32]);
    let real = std::env::var("THROUGHPUT_CLI").is_ok_and(|v| v == "claude");
    let base = std::env::temp_dir().join(format!("coder-eval-throughput-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    let tasks = write_tasks(&base, &root, m);
    let stand_in = (!real).then(|| write_stand_in(&base, &root));
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let mut failures = Vec::new();
    println!(
        "throughput: {m} tasks per level, agent: {}",
        if real {
            "the real Claude Code CLI against the scripted model"
        } else {
            "a stand-in printing a recorded Claude Code stream (scripted model started per task)"
        }
    );
    println!(
        "{:>5} {:>11} {:>10} {:>12} {:>13} {:>12} {:>11} {:>9} {:>7} {:>9}",
        "jobs",
        "tasks/min",
        "wall s",
        "host CPU ms",
        "stages wall",
        "slot-agent",
        "agent ms",
        "RSS MB",
        "lost",
        "leaks"
    );
    // Warm-up: one task, not measured.
    {
        let mut options = RunOptions::new(base.join("warm-up"));
        options.cli_override = stand_in.clone();
        let prepared =
            prepare(tasks[..1].to_vec(), &["claude-code".to_string()], &options).unwrap();
        let (_tx, rx) = tokio::sync::watch::channel(false);
        runtime
            .block_on(run_all(prepared, Vec::new(), &options, 1, rx, |_| {}))
            .unwrap();
    }
    for &jobs in &levels {
        let out = base.join(format!("out-j{jobs}"));
        let mut options = RunOptions::new(out.clone());
        options.cli_override = stand_in.clone();
        // An infrastructure error is a finding here, not something to run again.
        options.retry.max_retries = 0;
        let prepared = prepare(tasks.clone(), &["claude-code".to_string()], &options).unwrap();
        let fds_before = open_fds();
        reset_peak_rss();
        let (_tx, rx) = tokio::sync::watch::channel(false);
        let cpu_before = cpu_ms();
        let start = Instant::now();
        let results = runtime
            .block_on(run_all(prepared, Vec::new(), &options, jobs, rx, |_| {}))
            .unwrap();
        let wall = start.elapsed();
        let cpu_per_task = (cpu_ms() - cpu_before) / m as f64;
        let peak_mb = peak_rss_kb() as f64 / 1024.0;
        // Reaped children and closed pipes can trail the last result by a moment.
        let mut children = child_processes();
        for _ in 0..50 {
            if children == 0 && open_fds() <= fds_before {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
            children = child_processes();
        }
        let fds_after = open_fds();
        let passed = results
            .iter()
            .filter(|r| r.status == TaskStatus::Success)
            .count();
        let files = (0..m)
            .filter(|i| out.join(format!("t{i:03}/claude-code/task.json")).is_file())
            .count();
        let rows = std::fs::read_to_string(out.join("run.json"))
            .ok()
            .and_then(|t| serde_json::from_str::<coder_eval::results::RunSummary>(&t).ok())
            .map_or(0, |s| s.rows.len());
        let lost = m - passed.min(files).min(rows).min(results.len());
        let mut overheads: Vec<f64> = results
            .iter()
            .filter_map(|r| {
                let command_ms: u64 = r
                    .criteria
                    .iter()
                    .filter(|c| c.kind == "run_command")
                    .map(|c| c.duration_ms)
                    .sum();
                Some(
                    r.setup_ms? as f64
                        + r.grading_ms?.saturating_sub(command_ms) as f64
                        + r.host_turn_work_us? as f64 / 1000.0,
                )
            })
            .collect();
        overheads.sort_by(f64::total_cmp);
        let overhead = overheads
            .get(overheads.len() / 2)
            .copied()
            .unwrap_or(f64::NAN);
        let agent_ms: Vec<u64> = results
            .iter()
            .filter_map(|r| r.turn.as_ref().map(|t| t.timing.turn_duration_ms))
            .collect();
        let mean_agent = agent_ms.iter().sum::<u64>() as f64 / agent_ms.len().max(1) as f64;
        let slot_ms = wall.as_secs_f64() * 1000.0 * jobs.min(m) as f64 / m as f64;
        let leaks = format!("{}p {:+}fd", children, fds_after as i64 - fds_before as i64);
        println!(
            "{:>5} {:>11.1} {:>10.2} {:>12.1} {:>13.1} {:>12.1} {:>11.1} {:>9.1} {:>7} {:>9}",
            jobs,
            m as f64 / wall.as_secs_f64() * 60.0,
            wall.as_secs_f64(),
            cpu_per_task,
            overhead,
            slot_ms - mean_agent,
            mean_agent,
            peak_mb,
            lost,
            leaks
        );
        if cpu_per_task > OVERHEAD_TARGET_MS {
            failures.push(format!(
                "--jobs {jobs}: host overhead {cpu_per_task:.1} ms CPU per task > {OVERHEAD_TARGET_MS} ms"
            ));
        }
        if jobs >= 32 && peak_mb > RSS_TARGET_MB {
            failures.push(format!(
                "--jobs {jobs}: host peak RSS {peak_mb:.1} MB > {RSS_TARGET_MB} MB"
            ));
        }
        if lost > 0 {
            let errors: Vec<_> = results
                .iter()
                .filter(|r| r.status != TaskStatus::Success)
                .take(3)
                .map(|r| format!("{}: {:?} {:?}", r.task_id, r.status, r.error))
                .collect();
            failures.push(format!(
                "--jobs {jobs}: {lost} of {m} results lost or not passed ({} results, {files} task.json, {rows} run.json rows, {passed} passed) {errors:?}",
                results.len()
            ));
        }
        if children > 0 || fds_after > fds_before {
            failures.push(format!(
                "--jobs {jobs}: leaked {children} child process(es), {} fd(s)",
                fds_after as i64 - fds_before as i64
            ));
        }
        let _ = std::fs::remove_dir_all(&out);
    }
    let _ = std::fs::remove_dir_all(&base);
    println!(
        "targets: host CPU <= {OVERHEAD_TARGET_MS} ms per task, RSS <= {RSS_TARGET_MB} MB at --jobs 32, nothing lost, nothing leaked"
    );
    if failures.is_empty() {
        println!("all targets met");
    } else {
        for f in &failures {
            println!("FAIL {f}");
        }
        std::process::exit(1);
    }
}

fn env_or(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// M task files `t000`… (each its own folder and id), on the hello_date script; graded
/// by two file criteria (no command of the task's own in the figures).
fn write_tasks(base: &Path, root: &Path, m: usize) -> Vec<Task> {
    let script = root.join("tasks/hello_date/script.yaml");
    (0..m)
        .map(|i| {
            let dir = base.join(format!("tasks/t{i:03}"));
            std::fs::create_dir_all(&dir).unwrap();
            let path = dir.join("task.yaml");
            std::fs::write(
                &path,
                format!(
                    "task_id: t{i:03}\ninitial_prompt: Write app.py that prints the date.\nagent:\n  type: claude-code\n  scripted_model: {}\nrun_limits:\n  max_turns: 10\n  turn_timeout: 600\nsuccess_criteria:\n  - type: file_exists\n    description: app.py was written\n    path: app.py\n  - type: file_contains\n    description: app.py uses the date\n    path: app.py\n    includes: [print, date]\n",
                    script.display()
                ),
            )
            .unwrap();
            Task::load(&path).unwrap()
        })
        .collect()
}

/// The stand-in `claude`: answers `--version`; otherwise writes app.py into its working
/// folder (the workspace) and prints the recorded stream.
fn write_stand_in(base: &Path, root: &Path) -> PathBuf {
    let capture = root
        .join("tests/corpus/live/claude/hello.jsonl")
        .canonicalize()
        .unwrap();
    let path = base.join("claude");
    std::fs::write(
        &path,
        format!(
            "#!/bin/sh\nif [ \"$1\" = \"--version\" ]; then echo '2.1.197 (Claude Code)'; exit 0; fi\nprintf 'import datetime\\nprint(\"hi\", datetime.date.today())\\n' > app.py\nexec cat {}\n",
            capture.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    path
}

/// CPU time of this process (user + system, all its threads; not its children), ms.
fn cpu_ms() -> f64 {
    // SAFETY: getrusage fills the zeroed struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    let ms = |t: libc::timeval| t.tv_sec as f64 * 1000.0 + t.tv_usec as f64 / 1000.0;
    ms(usage.ru_utime) + ms(usage.ru_stime)
}

/// Open fds of this process.
fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").map_or(0, |d| d.count())
}

/// Processes whose parent is this one (a reaped child is gone; a zombie counts).
fn child_processes() -> usize {
    let me = std::process::id().to_string();
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| {
            let name = e.ok()?.file_name();
            name.to_str()?.parse::<u32>().ok()?;
            std::fs::read_to_string(Path::new("/proc").join(name).join("stat")).ok()
        })
        .filter(|stat| {
            // pid (comm) state ppid …: the fields after the last ')'.
            stat.rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().nth(1).map(str::to_string))
                .is_some_and(|ppid| ppid == me)
        })
        .count()
}

/// Resets the peak RSS (`VmHWM`) to the current RSS (Linux: `echo 5 > clear_refs`).
fn reset_peak_rss() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// The peak RSS since the last reset, kB.
fn peak_rss_kb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}
