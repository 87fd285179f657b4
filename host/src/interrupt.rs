//! Interrupts of the host: SIGINT (Ctrl-C), SIGTERM (a CI job's timeout, a pod eviction,
//! `kill`) and SIGHUP (the terminal went away) all take one path.
//!
//! - **The first signal** is *raised* here ([`raise`]): every running agent CLI stops
//!   (its turn's `cancel`), every running shell step (`pre_run`, `post_run`,
//!   `run_command`, an install) stops ([`crate::process::run_shell`] waits on
//!   [`wait`]), no further task starts, and the run writes each task's `task.json` with
//!   the stop reason `interrupted`, then `run.json`. The binary then exits with
//!   [`exit_code`] (128 + the signal's number: 130 for SIGINT, 143 for SIGTERM, 129 for
//!   SIGHUP, as a shell reports them).
//! - **A second signal** (any of the three) does not wait for the first stop's grace
//!   periods: every live process group of the host is SIGKILLed, and the host waits
//!   (bounded) until none of their processes is left, *then* exits. This module only
//!   hears it ([`listen`] resolves with both signals); the process groups are `process`'s,
//!   and the command line, above both, kills them (`process::kill_live_groups_and_wait`)
//!   and exits without writing `run.json` again. Each finished task's `task.json` is on
//!   disk (written as its task ends); `run.json` lists only the tasks that ended before its
//!   last rewrite (rewrites are paced, at most one per 2 s, and none once the first
//!   signal came: `run::suite::RunJsonPace`), so the tasks that ended in the last 2 s
//!   before the first signal, or after it, are missing from it (`unfinished` counts them).
//!
//! SIGKILL of the host cannot be handled; see the README's "What coder-eval guarantees".
//! The signal handling itself is tokio's (`tokio::signal::unix`, over
//! `signal-hook-registry`).

use std::sync::LazyLock;
use tokio::sync::watch;

/// The first interrupting signal's number, once one came.
static RAISED: LazyLock<watch::Sender<Option<i32>>> = LazyLock::new(|| watch::Sender::new(None));

/// The signals that interrupt a run, with their names.
pub const SIGNALS: [(i32, &str); 3] = [
    (libc::SIGINT, "SIGINT"),
    (libc::SIGTERM, "SIGTERM"),
    (libc::SIGHUP, "SIGHUP"),
];

/// Records that `signal` interrupted the host (the first one wins) and wakes every
/// [`wait`]er.
pub(crate) fn raise(signal: i32) {
    RAISED.send_if_modified(|raised| {
        if raised.is_none() {
            *raised = Some(signal);
            true
        } else {
            false
        }
    });
}

/// The signal that interrupted the host, if one did.
pub fn raised() -> Option<i32> {
    *RAISED.borrow()
}

/// Resolves once the host is interrupted (at once if it already is), with the signal.
pub async fn wait() -> i32 {
    let mut rx = RAISED.subscribe();
    let signal = rx
        .wait_for(Option::is_some)
        .await
        .map(|s| s.unwrap_or(libc::SIGINT));
    match signal {
        Ok(signal) => signal,
        // The sender is a static: it is never dropped.
        Err(_) => std::future::pending().await,
    }
}

/// A `cancel` for a run started outside the suite's loop (an `agent_judge`'s CLI): it
/// turns true when the host is interrupted (at once if it already is). Call it inside a
/// tokio runtime.
pub(crate) fn cancel_on_interrupt() -> watch::Receiver<bool> {
    let (tx, rx) = watch::channel(raised().is_some());
    tokio::spawn(async move {
        tokio::select! {
            _ = wait() => {
                let _ = tx.send(true);
            }
            // Nobody listens any more: the run ended.
            _ = tx.closed() => {}
        }
    });
    rx
}

/// The exit code of a run a signal interrupted: 128 + its number.
pub fn exit_code(signal: i32) -> i32 {
    128 + signal
}

/// The name of an interrupting signal (`SIGTERM`), or its number.
pub fn name(signal: i32) -> String {
    SIGNALS
        .iter()
        .find(|(n, _)| *n == signal)
        .map_or_else(|| format!("signal {signal}"), |(_, name)| name.to_string())
}

/// The variable through which the outer process of an isolated run (`--isolate-network`,
/// which re-runs the binary inside a network namespace) asks the inner one to report
/// each signal it gets: `<fd>:<outer pid>`, the write end of a pipe the outer reads. The
/// outer forwards a signal only when the inner did not report one of its own (a signal
/// sent to every process of the run, as `pkill` or a CI's kill of the process tree do,
/// reaches both: forwarding it too would make it the inner's second signal).
pub const SIGNAL_REPORT_ENV: &str = "CODER_EVAL_SIGNAL_FD";

/// The pipe to report signals on, when this process is the inner run and its parent
/// (the outer run, whose pid the variable names) passed one. The fd is made
/// close-on-exec so no CLI or step inherits it.
fn report_fd() -> Option<i32> {
    let value = std::env::var(SIGNAL_REPORT_ENV).ok()?;
    let (fd, outer) = value.split_once(':')?;
    let (fd, outer): (i32, u32) = (fd.parse().ok()?, outer.parse().ok()?);
    if std::os::unix::process::parent_id() != outer || fd < 3 {
        return None;
    }
    // SAFETY: fcntl on an fd number only reads or sets its flags; a closed one fails.
    unsafe {
        if libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) != 0 {
            return None;
        }
    }
    Some(fd)
}

/// Tells the outer run (through `fd`, see [`SIGNAL_REPORT_ENV`]) that this process got
/// a signal. A failed write is ignored: the outer then forwards the signal itself.
fn report(fd: Option<i32>) {
    if let Some(fd) = fd {
        // SAFETY: writes one byte from a live buffer to an fd this process owns.
        unsafe {
            libc::write(fd, b"s".as_ptr().cast(), 1);
        }
    }
}

/// The two signals of an interrupt that [`listen`] heard: the first (which sets the exit
/// code, [`exit_code`]) and the second (which asks to kill everything at once).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Twice {
    /// The first signal's number.
    pub first: i32,
    /// The second signal's number.
    pub second: i32,
}

/// Installs the handlers for SIGINT, SIGTERM and SIGHUP and returns what acts on them, a
/// future the caller spawns: the first signal raises the interrupt and sets `cancel`; the
/// future resolves at the second, with both ([`Twice`]). What the second does (SIGKILL
/// every live process group, wait until they are gone, exit with the first signal's
/// [`exit_code`]) is the caller's: this module sits below the processes it would kill.
/// Call it inside a tokio runtime, before any process starts. Errors: a handler could
/// not be installed.
pub fn listen(
    cancel: watch::Sender<bool>,
) -> std::io::Result<impl std::future::Future<Output = Twice> + Send + 'static> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut streams = Vec::new();
    for (number, _) in SIGNALS {
        streams.push((number, signal(SignalKind::from_raw(number))?));
    }
    let fd = report_fd();
    Ok(async move {
        let first = next(&mut streams).await;
        report(fd);
        use std::io::IsTerminal;
        eprintln!(
            "{}",
            first_message(&name(first), std::io::stdout().is_terminal())
        );
        raise(first);
        let _ = cancel.send(true);
        let second = next(&mut streams).await;
        report(fd);
        Twice { first, second }
    })
}

/// What the first signal prints. `bar_shown`: stdout is a terminal, so the progress bar
/// may be on the screen's last line without its newline: the message starts a line of
/// its own instead of being written onto the bar.
fn first_message(signal: &str, bar_shown: bool) -> String {
    format!(
        "{}interrupted ({signal}): stopping every running CLI and shell step and writing \
         what was recorded (a second signal kills them at once)",
        if bar_shown { "\n" } else { "" }
    )
}

/// The number of the next signal any of `streams` receives.
async fn next(streams: &mut [(i32, tokio::signal::unix::Signal)]) -> i32 {
    let futures = streams.iter_mut().map(|(number, stream)| {
        let number = *number;
        Box::pin(async move {
            stream.recv().await;
            number
        })
    });
    futures_util::future::select_all(futures).await.0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 15 trial: the message was written onto the end of the progress bar's line.
    #[test]
    fn the_interrupt_message_starts_a_line_of_its_own_under_a_bar() {
        assert!(first_message("SIGINT", true).starts_with("\ninterrupted (SIGINT): "));
        assert!(first_message("SIGINT", false).starts_with("interrupted (SIGINT): "));
    }

    #[test]
    fn exit_codes_are_128_plus_the_signal() {
        assert_eq!(exit_code(libc::SIGINT), 130);
        assert_eq!(exit_code(libc::SIGTERM), 143);
        assert_eq!(exit_code(libc::SIGHUP), 129);
        assert_eq!(name(libc::SIGTERM), "SIGTERM");
    }
}
