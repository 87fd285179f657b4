//! `--isolate-network`: the run re-executes itself inside a network namespace of its own
//! (loopback only) and forwards signals and output; the inner run checks it really is
//! isolated.

use coder_eval::exit_codes;
use std::os::unix::process::CommandExt;

/// The network namespace this process runs in (the inode of `/proc/self/ns/net`).
pub(super) fn netns() -> Option<u64> {
    netns_of("self")
}

/// The network namespace of process `pid` (`self` for this one).
pub(super) fn netns_of(pid: &str) -> Option<u64> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(format!("/proc/{pid}/ns/net"))
        .ok()
        .map(|m| m.ino())
}

/// Whether this run is the re-run inside the network namespace: `CODER_EVAL_NETNS`
/// names the namespace the outer run left, which must be its parent's (the outer run)
/// and not its own. Errors: the variable is set otherwise (by hand, or inherited):
/// isolation would silently not hold, so the run refuses.
pub(super) fn isolated() -> Result<bool, String> {
    let Some(outer) = std::env::var_os("CODER_EVAL_NETNS") else {
        return Ok(false);
    };
    let outer = outer.to_string_lossy().parse::<u64>().ok();
    let parent = netns_of(&std::os::unix::process::parent_id().to_string());
    match (outer, netns()) {
        (Some(outer), Some(here)) if outer != here && parent == Some(outer) => Ok(true),
        _ => Err(
            "CODER_EVAL_NETNS is set but this process is not in a network namespace of its \
             own: refusing to run as if the network were isolated (unset it)"
                .into(),
        ),
    }
}

/// Runs this same command again inside a new network namespace with loopback up. Errors
/// (exit 2, nothing run): a network namespace cannot be made here (`unshare -n` fails:
/// no unprivileged user namespaces, no CAP_SYS_ADMIN): the run never goes on without
/// the isolation it was asked for.
pub(super) fn reexec_isolated() -> Result<i32, Box<dyn std::error::Error>> {
    if let Some(why) = unshare_refused() {
        eprintln!(
            "error: network isolation (--isolate-network, or a task's sandbox.network_enabled: \
             false) is not available here: `unshare -n` failed ({why}); refusing to run \
             without it (nothing was run)"
        );
        return Ok(exit_codes::USAGE);
    }
    // The inner run reports each signal it gets on this pipe (see
    // `coder_eval::interrupt::SIGNAL_REPORT_ENV`).
    let mut fds = [0i32; 2];
    // SAFETY: pipe2 fills `fds` with two new fds (close-on-exec) or fails.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) } != 0 {
        return Err(std::io::Error::last_os_error().into());
    }
    let (report_read, report_write) = (fds[0], fds[1]);
    let mut cmd = inner_command(report_write)?;
    let child = cmd.spawn();
    // SAFETY: closes this process's copy of the write end (the child has its own).
    unsafe { libc::close(report_write) };
    let child =
        child.map_err(|e| format!("could not start `unshare -n` for --isolate-network: {e}"))?;
    let status = wait_forwarding_signals(child, report_read)?;
    Ok(status.code().unwrap_or(exit_codes::FAILED))
}

/// Why `unshare -n` fails here (its stderr, or why it could not start); `None` when a
/// network namespace can be made.
fn unshare_refused() -> Option<String> {
    let probe = std::process::Command::new("unshare")
        .args(["-n", "--", "true"])
        .stdin(std::process::Stdio::null())
        .output();
    match &probe {
        Ok(out) if out.status.success() => None,
        Ok(out) => Some(String::from_utf8_lossy(&out.stderr).trim().to_string()),
        Err(e) => Some(e.to_string()),
    }
}

/// This same command (`current_exe` and its arguments) under `unshare -n` with loopback
/// up, leading a process group of its own, reporting each signal it gets on the pipe
/// `report_write`, interrupted (SIGTERM) when this process dies.
fn inner_command(report_write: i32) -> std::io::Result<std::process::Command> {
    let exe = std::env::current_exe()?;
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut cmd = std::process::Command::new("unshare");
    cmd.args([
        "-n",
        "--",
        "sh",
        "-c",
        "ip link set lo up && exec \"$@\"",
        "sh",
    ])
    .arg(exe)
    .args(args)
    .env(
        "CODER_EVAL_NETNS",
        netns().map_or_else(String::new, |n| n.to_string()),
    )
    .env(
        coder_eval::interrupt::SIGNAL_REPORT_ENV,
        format!("{report_write}:{}", std::process::id()),
    )
    // The inner run leads a group of its own: a terminal's Ctrl-C reaches this process
    // only, which passes each signal on once (two Ctrl-C are two, not four).
    .process_group(0);
    // SAFETY: prctl and fcntl are async-signal-safe; they set this child's parent-death
    // signal and the flags of an fd it inherited.
    unsafe {
        cmd.pre_exec(move || {
            // If this process dies (even by SIGKILL), the inner run is interrupted as by
            // SIGTERM: it stops its CLIs and writes what it recorded.
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // The report pipe's write end survives the exec into the inner run (which
            // makes it close-on-exec again for its own children); blocking there, so a
            // report is never lost to a full pipe's EAGAIN (one byte per signal).
            if libc::fcntl(report_write, libc::F_SETFD, 0) != 0
                || libc::fcntl(report_write, libc::F_SETFL, 0) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    Ok(cmd)
}

/// Waits for the inner run `child`, passing on each signal this process gets that the
/// inner run did not report getting itself on `report_read`; returns its exit status.
fn wait_forwarding_signals(
    child: std::process::Child,
    report_read: i32,
) -> std::io::Result<std::process::ExitStatus> {
    let pid = child.id() as i32;
    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(async move {
        use tokio::signal::unix::{SignalKind, signal};
        let mut streams = Vec::new();
        for (number, _) in coder_eval::interrupt::SIGNALS {
            streams.push((number, signal(SignalKind::from_raw(number))?));
        }
        let mut wait = tokio::task::spawn_blocking(move || {
            let mut child = child;
            child.wait()
        });
        // Signals this process got, and signals the inner run reported getting (its own
        // and forwarded ones): each signal here should be one there.
        let (mut received, mut reported) = (0u64, 0u64);
        loop {
            let forwarded =
                futures_util::future::select_all(streams.iter_mut().map(|(number, stream)| {
                    let number = *number;
                    Box::pin(async move {
                        stream.recv().await;
                        number
                    })
                }));
            tokio::select! {
                status = &mut wait => return status.map_err(std::io::Error::other)?,
                (signal, _, _) = forwarded => {
                    received += 1;
                    // A signal sent to every process of the run reaches the inner one
                    // too: give it a moment to report it, and forward only if it did not
                    // (a terminal's Ctrl-C reaches this process's group alone).
                    tokio::select! {
                        status = &mut wait => return status.map_err(std::io::Error::other)?,
                        () = tokio::time::sleep(FORWARD_AFTER) => {}
                    }
                    reported += drain(report_read);
                    if reported < received {
                        // SAFETY: plain syscall to our own child.
                        unsafe { libc::kill(pid, signal) };
                        // (It reports the forwarded one too, when it gets it.)
                    }
                }
            }
        }
    })
}

/// How long the outer run of `--isolate-network` waits for the inner run to report a
/// signal before forwarding it.
pub(super) const FORWARD_AFTER: std::time::Duration = coder_eval::limits::ISOLATE_FORWARD_AFTER;

/// Bytes waiting on the non-blocking `fd` (each is one signal the inner run reported),
/// read and counted.
pub(super) fn drain(fd: i32) -> u64 {
    let mut count = 0u64;
    let mut buf = [0u8; 64];
    loop {
        // SAFETY: reads into a live buffer of its length from an fd this process owns.
        let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
        if n <= 0 {
            return count;
        }
        count += n as u64;
    }
}
