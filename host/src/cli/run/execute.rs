//! Running the units: the signal handlers, leftover containers removed, the agentless
//! tasks, then every prepared unit (`run_all`).

use super::{Flow, Halt};
use coder_eval::exit_codes;
use coder_eval::results::TaskResult;
use coder_eval::run::{Prepared, RunOptions, run_all};
use coder_eval::task::Task;
use std::path::Path;
use tokio::runtime::Runtime;
use tokio::sync::watch;

/// SIGINT, SIGTERM and SIGHUP are handled from here on (in the run that runs the tasks,
/// not in a process that only re-runs itself in a network namespace; before any process
/// starts): the first stops every running CLI and shell step and the run writes what was
/// recorded (`coder_eval::interrupt`), the second kills every live process group at once
/// (`coder_eval::process::kill_live_groups_and_wait`), lets the result files being
/// written finish (`coder_eval::results::close_writes`) and exits with the first signal's
/// code. Returns the runtime and the cancel signal.
pub(super) fn listen_for_signals() -> Flow<(Runtime, watch::Receiver<bool>)> {
    let runtime = Runtime::new()?;
    let (cancel_tx, cancel_rx) = watch::channel(false);
    {
        let _context = runtime.enter();
        let signals = coder_eval::interrupt::listen(cancel_tx)?;
        runtime.spawn(async move {
            let twice = signals.await;
            let killed = coder_eval::process::kill_live_groups_and_wait();
            coder_eval::results::close_writes(coder_eval::limits::EXIT_WRITE_GRACE);
            eprintln!(
                "interrupted again ({}): killed {killed} running process group(s)",
                coder_eval::interrupt::name(twice.second)
            );
            std::process::exit(coder_eval::interrupt::exit_code(twice.first));
        });
    }
    Ok((runtime, cancel_rx))
}

/// What is left to run, and what is done already.
pub(super) struct Work<'a> {
    pub(super) prepared: Vec<Prepared>,
    /// Results already written (skipped, kept by `--resume`).
    pub(super) done: Vec<TaskResult>,
    pub(super) agentless: &'a [Task],
}

/// Runs `work` (`jobs` at once), printing each result with `print`; returns every
/// result. Results that cannot be written (a full disk) are an infrastructure failure
/// (exit 3), not a bad invocation: a shard is retried, not failed for good.
pub(super) fn execute(
    runtime: &Runtime,
    work: Work<'_>,
    options: &RunOptions,
    jobs: usize,
    cancel_rx: watch::Receiver<bool>,
    print: impl Fn(&TaskResult),
    out_dir: &Path,
) -> Flow<Vec<TaskResult>> {
    let Work {
        prepared,
        mut done,
        agentless,
    } = work;
    let results = runtime.block_on(async {
        if prepared
            .iter()
            .any(|p| p.task.sandbox.driver == coder_eval::task::sandbox::Driver::Docker)
        {
            remove_leftover_containers().await;
        }
        for task in agentless {
            done.push(coder_eval::run::run_agentless(task, options).await);
        }
        run_all(prepared, done, options, jobs, cancel_rx, print).await
    });
    results.map_err(|err| {
        eprintln!(
            "error: {}: the run's results could not be written: {err}",
            out_dir.display()
        );
        Halt::Exit(exit_codes::INFRA)
    })
}

/// Before a run with docker tasks: removes the containers that coder-eval runs killed
/// before they could clean up left behind (labelled with a host pid that is gone), and
/// says how many. A failure is a note: the run goes on.
async fn remove_leftover_containers() {
    use coder_eval::sandbox::docker;
    let removed = match docker::connect().await {
        Ok((client, _)) => docker::remove_leftovers(&client).await,
        Err(e) => Err(e),
    };
    match removed {
        Ok(ids) if ids.is_empty() => {}
        Ok(ids) => eprintln!(
            "note: removed {} container(s) left by earlier coder-eval runs that were killed ({})",
            ids.len(),
            ids.iter()
                .map(|id| &id[..id.len().min(12)])
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Err(e) => eprintln!("note: could not look for containers left by earlier runs: {e}"),
    }
}
