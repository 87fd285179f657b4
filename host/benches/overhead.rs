//! Host overhead per task: setup + grading + the host's own work during the turn
//! (recording, reducing, collecting), the CLI's time excluded, over 20 live runs of
//! hello_date on the real Claude Code CLI against the scripted model.
//!
//! hello_date's `run_command` criterion runs `python3 app.py`, the task's own program:
//! its run time is the task's, not the host's, so it is shown apart and left out of the
//! overhead figure (the host's part of it, starting and reaping the process group, is a
//! few ms inside it).
//!
//! `cargo bench --bench overhead` prints the median and the spread. Target: median ≤ 20 ms.
//! Needs the pinned CLIs (`scripts/setup.sh`).

use coder_eval::run::{RunOptions, prepare, run_all};
use coder_eval::task::Task;
use std::path::Path;

const RUNS: usize = 20;

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let task = Task::load(&root.join("tasks/hello_date/task.yaml")).unwrap();
    let out = std::env::temp_dir().join(format!("coder-eval-overhead-{}", std::process::id()));
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let mut rows = Vec::new();
    for i in 0..RUNS {
        let options = RunOptions::new(out.join(i.to_string()));
        let prepared = prepare(vec![task.clone()], &["claude-code".to_string()], &options).unwrap();
        let (_tx, rx) = tokio::sync::watch::channel(false);
        let results = runtime
            .block_on(run_all(prepared, Vec::new(), &options, 1, rx, |_| {}))
            .unwrap();
        let r = &results[0];
        assert_eq!(format!("{:?}", r.status), "Success", "{:?}", r.error);
        let command_ms: u64 = r
            .criteria
            .iter()
            .filter(|c| c.kind == "run_command")
            .map(|c| c.duration_ms)
            .sum();
        let (Some(setup_ms), Some(grading_ms), Some(host_us)) =
            (r.setup_ms, r.grading_ms, r.host_turn_work_us)
        else {
            panic!("a finished task has its setup, grading and turn-work figures");
        };
        let grading_ms = grading_ms.saturating_sub(command_ms);
        let overhead_ms = setup_ms as f64 + grading_ms as f64 + host_us as f64 / 1000.0;
        rows.push((overhead_ms, setup_ms, grading_ms, host_us, command_ms));
    }
    let _ = std::fs::remove_dir_all(&out);
    rows.sort_by(|a, b| a.0.total_cmp(&b.0));
    let median = rows[RUNS / 2];
    println!("host overhead per task over {RUNS} runs of hello_date (claude-code):");
    println!(
        "  median {:.1} ms (setup {} ms + grading {} ms + turn work {:.1} ms); min {:.1} ms, max {:.1} ms",
        median.0,
        median.1,
        median.2,
        median.3 as f64 / 1000.0,
        rows[0].0,
        rows[RUNS - 1].0
    );
    println!(
        "  not counted: the task's own `python3 app.py` (run_command) took {} ms in that run",
        median.4
    );
    if median.0 <= 20.0 {
        println!("PASS: median {:.1} ms <= 20 ms", median.0);
    } else {
        println!("FAIL: median {:.1} ms > the 20 ms target", median.0);
        std::process::exit(1);
    }
}
