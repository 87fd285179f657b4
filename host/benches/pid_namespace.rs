//! What a PID namespace per task costs (the default of `coder-eval run`; `--no-pid-namespace`
//! is the baseline).
//!
//! Prints two figures, median over the runs:
//! 1. the mechanism alone: starting `true` directly vs through `unshare --pid --fork
//!    --kill-child --mount-proc` (plus `--user --map-current-user` when not root) under
//!    `tini -g -p SIGKILL` as PID 1 and the shell that is the CLI's parent (as the host
//!    runs it; without them when tini is missing);
//! 2. a whole one-task run of the real binary on a stand-in CLI (a script printing a
//!    recorded Claude Code stream), with `--no-pid-namespace` and with the default.
//!
//! Target: the mechanism under 20 ms per task (far less than any agent turn); a missed
//! target prints FAIL and exits 1. The whole-run figure is printed for context (on a
//! loaded machine its spread is larger than the cost). Run: `cargo bench --bench
//! pid_namespace` (`--profile dev` skips the release build; the figures are the kernel's
//! and `unshare`'s, not the host's).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const TARGET: Duration = Duration::from_millis(20);

fn unshare_flags() -> Vec<&'static str> {
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let mut flags = Vec::new();
    if !root {
        flags.extend(["--user", "--map-current-user"]);
    }
    flags.extend(["--pid", "--fork", "--kill-child", "--mount-proc"]);
    flags
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn time(runs: usize, mut f: impl FnMut()) -> Duration {
    f(); // warm-up
    median(
        (0..runs)
            .map(|_| {
                let start = Instant::now();
                f();
                start.elapsed()
            })
            .collect(),
    )
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn main() {
    let flags = unshare_flags();
    let available = Command::new("unshare")
        .args(&flags)
        .args(["--", "true"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !available {
        println!("pid_namespace: no PID namespace can be made here; nothing to measure");
        return;
    }
    let tini = Command::new("tini")
        .arg("--version")
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    let direct = time(50, || {
        Command::new("true").status().unwrap();
    });
    let wrapped = time(50, || {
        let mut cmd = Command::new("unshare");
        cmd.args(&flags).arg("--");
        if tini {
            // As the host runs it: tini, and the shell that is the CLI's parent.
            cmd.args([
                "tini",
                "-g",
                "-p",
                "SIGKILL",
                "--",
                "/bin/sh",
                "-c",
                "trap : TERM INT HUP; \"$@\"; exit $?",
                "coder-eval-init",
            ]);
        }
        cmd.arg("true").status().unwrap();
    });
    println!(
        "mechanism: start `true` {:.2} ms direct, {:.2} ms in a PID namespace: +{:.2} ms",
        ms(direct),
        ms(wrapped),
        ms(wrapped.saturating_sub(direct))
    );

    let dir = std::env::temp_dir().join(format!("ce-bench-pidns-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let hello = root.join("tests/corpus/live/claude/hello.jsonl");
    let cli = dir.join("cli.sh");
    std::fs::write(
        &cli,
        format!(
            "#!/bin/sh\n[ \"$1\" = --version ] && {{ echo 1.0; exit 0; }}\ncat {}\n",
            hello.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&cli, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let task = dir.join("t.yaml");
    std::fs::write(&task, "task_id: t\ninitial_prompt: hi\n").unwrap();
    let run = |extra: &[&str], n: &mut usize| {
        *n += 1;
        let out: PathBuf = dir.join(format!("out-{n}"));
        let status = Command::new(env!("CARGO_BIN_EXE_coder-eval"))
            .arg("run")
            .arg(&task)
            .args(["--harness", "claude-code", "--cli"])
            .arg(&cli)
            .arg("--out")
            .arg(&out)
            .args(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .unwrap();
        assert_eq!(status.code(), Some(0));
        let _ = std::fs::remove_dir_all(&out);
    };
    // Interleaved, so a machine's load drifting during the bench weighs on both alike.
    let mut n = 0;
    let (mut plain, mut pidns) = (Vec::new(), Vec::new());
    run(&["--no-pid-namespace"], &mut n);
    for _ in 0..15 {
        let start = Instant::now();
        run(&["--no-pid-namespace"], &mut n);
        plain.push(start.elapsed());
        let start = Instant::now();
        run(&[], &mut n);
        pidns.push(start.elapsed());
    }
    let (plain, pidns) = (median(plain), median(pidns));
    println!(
        "one task (whole `coder-eval run`, noisy on a loaded machine): {:.1} ms without, \
         {:.1} ms with the PID namespace: {:+.1} ms",
        ms(plain),
        ms(pidns),
        ms(pidns) - ms(plain),
    );
    let _ = std::fs::remove_dir_all(&dir);
    let cost = wrapped.saturating_sub(direct);
    println!(
        "per-task cost of the namespace: {:.2} ms (target < {} ms)",
        ms(cost),
        TARGET.as_millis()
    );
    if cost > TARGET {
        println!(
            "FAIL: the PID namespace costs more than {} ms per task",
            TARGET.as_millis()
        );
        std::process::exit(1);
    }
}
