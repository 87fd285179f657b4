//! `coder-eval run`.

use coder_eval::components::{BUILTIN_HARNESSES, ComponentSource, parse_override};
use coder_eval::exit_codes;
use coder_eval::results::{TaskResult, TaskStatus};
use coder_eval::run::{RunOptions, locate, prepare, run_all};
use coder_eval::task::Task;
use std::path::PathBuf;

/// Runs task files on agent CLIs, records what they stream, grades the result and writes
/// `task.json` per task and harness. Exit code: 0 all passed, 1 some did not, 2 bad
/// invocation or task file (nothing was run).
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  coder-eval run tasks/hello_date/task.yaml
  coder-eval run tasks/hello_date/task.yaml --harness all --out runs/smoke
  coder-eval run tasks/run_limits/max_turns_cap/task.yaml --harness claude-code --no-native-limits
  coder-eval run task.yaml --scripted-model other-script.yaml --isolate-network")]
pub struct RunArgs {
    /// Task files (YAML).
    #[arg(required = true)]
    tasks: Vec<PathBuf>,
    /// Harness to run on (repeatable); `all` = every built-in harness whose CLI is
    /// installed. Default: each task's `agent.type`.
    #[arg(long)]
    harness: Vec<String>,
    /// Output folder (default: runs/<UTC timestamp>).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Play this model script instead of the task's `agent.scripted_model`.
    #[arg(long, value_name = "SCRIPT")]
    scripted_model: Option<PathBuf>,
    /// A folder of replacement components (`<harness>.wasm`).
    #[arg(long, value_name = "DIR")]
    components: Option<PathBuf>,
    /// Replace one harness's component: NAME=PATH (repeatable).
    #[arg(long, value_name = "NAME=PATH", value_parser = parse_override)]
    component: Vec<(String, PathBuf)>,
    /// Use this CLI binary (default: the pinned install in harnesses/, then PATH).
    #[arg(long, value_name = "PATH")]
    cli: Option<PathBuf>,
    /// Do not pass limits to the CLI; enforce them with the host's backstop alone.
    #[arg(long)]
    no_native_limits: bool,
    /// How many tasks run at once.
    #[arg(long, default_value_t = 1)]
    jobs: usize,
    /// Pass this host environment variable to the CLI (repeatable).
    #[arg(long, value_name = "NAME")]
    pass_env: Vec<String>,
    /// Run inside a new network namespace with only loopback up (`unshare -n`).
    #[arg(long)]
    isolate_network: bool,
}

pub fn run(args: RunArgs) -> Result<i32, Box<dyn std::error::Error>> {
    if args.isolate_network && std::env::var_os("CODER_EVAL_NETNS").is_none() {
        return reexec_isolated();
    }
    let mut tasks = Vec::new();
    for path in &args.tasks {
        match Task::load(path) {
            Ok(task) => tasks.push(task),
            Err(err) => {
                super::print_error(&err);
                return Ok(exit_codes::USAGE);
            }
        }
    }
    let harnesses: Vec<String> = if args.harness.iter().any(|h| h == "all") {
        installed_harnesses()
    } else {
        args.harness.clone()
    };
    let out_dir = args
        .out
        .unwrap_or_else(|| PathBuf::from("runs").join(timestamp()));
    if out_dir.join("run.json").exists() {
        eprintln!(
            "note: {} already holds a run; run.json, junit.xml and report.html will list this \
             run's tasks only (the folders of earlier tasks stay, a task run again is replaced)",
            out_dir.display()
        );
    }
    let mut options = RunOptions::new(out_dir.clone());
    options.components = ComponentSource {
        dir: args.components,
        overrides: args.component.into_iter().collect(),
    };
    options.cli_override = args.cli;
    options.script_override = args.scripted_model;
    options.native_limits = !args.no_native_limits;
    options.pass_env = args.pass_env;
    let prepared = match prepare(tasks, &harnesses, &options) {
        Ok(p) => p,
        Err(err) => {
            super::print_error(&err);
            return Ok(exit_codes::USAGE);
        }
    };
    if prepared.is_empty() {
        eprintln!(
            "error: no harness to run on (is any CLI installed? `scripts/setup.sh` installs them)"
        );
        return Ok(exit_codes::USAGE);
    }
    let runtime = tokio::runtime::Runtime::new()?;
    let results = runtime.block_on(async {
        let (cancel_tx, cancel_rx) = tokio::sync::watch::channel(false);
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                eprintln!("interrupted: stopping every running CLI (Ctrl-C again to quit at once)");
                let _ = cancel_tx.send(true);
                if tokio::signal::ctrl_c().await.is_ok() {
                    // The stops under way wait out their grace; kill every group now, so
                    // no CLI outlives the host (they lead their own groups: the terminal's
                    // SIGINT does not reach them).
                    let killed = coder_eval::process::kill_live_groups();
                    eprintln!("interrupted again: killed {killed} running process group(s)");
                    std::process::exit(exit_codes::INTERRUPTED);
                }
            }
        });
        run_all(prepared, &options, args.jobs, cancel_rx, print_row).await
    })?;
    let failed = results
        .iter()
        .filter(|r| r.status != TaskStatus::Success)
        .count();
    eprintln!(
        "{} passed, {} failed; results in {}",
        results.len() - failed,
        failed,
        out_dir.display()
    );
    Ok(if failed == 0 {
        exit_codes::OK
    } else {
        exit_codes::FAILED
    })
}

/// The terminal summary line of one task.
fn print_row(r: &TaskResult) {
    let turn = r.turn.as_ref();
    let capped = r
        .notes()
        .map_or(String::new(), |note| format!("  [{note}]"));
    let leftovers = match r.cli.leftover_processes {
        0 => String::new(),
        1 => "  [1 process the agent left running was stopped]".to_string(),
        n => format!("  [{n} processes the agent left running were stopped]"),
    };
    let line = format!(
        "{} {:<28} {:<12} {:<20} score {:<5} turns {:<3} tools {:<3} {:>7.1} s{}{capped}{leftovers}",
        r.status.icon(),
        r.task_id,
        r.harness,
        r.status.as_str(),
        r.weighted_score.map_or("-".into(), |s| format!("{s:.2}")),
        turn.map_or("-".into(), |t| t.num_turns.to_string()),
        turn.map_or("-".into(), |t| t.tool_calls.len().to_string()),
        turn.map_or(0.0, |t| t.timing.turn_duration_ms as f64 / 1000.0),
        r.error
            .as_ref()
            .map_or(String::new(), |e| format!("  ({})", printable(e))),
    );
    println!("{line}");
}

/// `text` for a terminal: control characters (escape sequences from a CLI's stderr, say)
/// shown escaped instead of acted on.
fn printable(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// Built-in harnesses whose CLI can be found.
fn installed_harnesses() -> Vec<String> {
    BUILTIN_HARNESSES
        .iter()
        .filter(|h| locate::is_installed(h.program))
        .map(|h| h.name.to_string())
        .collect()
}

/// Runs this same command again inside a new network namespace with loopback up.
fn reexec_isolated() -> Result<i32, Box<dyn std::error::Error>> {
    let exe = std::env::current_exe()?;
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut child = std::process::Command::new("unshare")
        .args([
            "-n",
            "--",
            "sh",
            "-c",
            "ip link set lo up && exec \"$@\"",
            "sh",
        ])
        .arg(exe)
        .args(args)
        .env("CODER_EVAL_NETNS", "1")
        .spawn()
        .map_err(|e| format!("could not start `unshare -n` for --isolate-network: {e}"))?;
    // Ctrl-C reaches the inner run too (same terminal process group); this process only
    // waits for it to stop its CLIs and write what was recorded.
    // SAFETY: setting a signal disposition to "ignore" has no preconditions.
    unsafe {
        libc::signal(libc::SIGINT, libc::SIG_IGN);
    }
    let status = child.wait()?;
    Ok(status.code().unwrap_or(exit_codes::FAILED))
}

/// UTC now as `YYYYMMDD-HHMMSS`.
fn timestamp() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Civil from days (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}{month:02}{day:02}-{:02}{:02}{:02}",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn control_characters_are_shown_not_acted_on() {
        assert_eq!(
            super::printable("red \u{1b}[31mX\u{7}\nend"),
            "red \\u{1b}[31mX\\u{7}\\nend"
        );
        assert_eq!(super::printable("café ✓"), "café ✓");
    }
}
