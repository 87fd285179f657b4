//! A host loopback port made reachable at the same address inside a container that has
//! no network (`network: none`): the host opens a listening socket *in the container's
//! network namespace* (a short-lived thread enters it with `setns`; the socket stays
//! there) and forwards each connection to the same port on its own loopback. Nothing runs
//! in the container and nothing else becomes reachable, so a sealed run still reaches the
//! scripted model at the URL the launch plan names.

use std::fs::File;
use std::os::fd::AsRawFd;
use tokio::task::JoinHandle;

/// Listens on `127.0.0.1:port` in the network namespace of process `pid` (the container's
/// init, in the host's `/proc`) and forwards every connection to `127.0.0.1:port` on the
/// host. Needs the right to enter that namespace (root, or `CAP_SYS_ADMIN`). The returned
/// task serves until aborted.
pub(super) fn forward(pid: i64, port: u16) -> std::io::Result<JoinHandle<()>> {
    let ns = File::open(format!("/proc/{pid}/ns/net"))?;
    // A thread of its own enters the namespace, binds, and ends: no other thread of the
    // host ever changes namespace.
    let listener = std::thread::spawn(move || -> std::io::Result<std::net::TcpListener> {
        // SAFETY: plain syscall on an open namespace file; it changes this thread only.
        if unsafe { libc::setns(ns.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        let listener = std::net::TcpListener::bind(("127.0.0.1", port))?;
        listener.set_nonblocking(true)?;
        Ok(listener)
    })
    .join()
    .map_err(|_| std::io::Error::other("the namespace thread panicked"))??;
    let listener = tokio::net::TcpListener::from_std(listener)?;
    Ok(tokio::spawn(async move {
        while let Ok((mut inside, _)) = listener.accept().await {
            tokio::spawn(async move {
                if let Ok(mut host) = tokio::net::TcpStream::connect(("127.0.0.1", port)).await {
                    let _ = inside.set_nodelay(true);
                    let _ = host.set_nodelay(true);
                    let _ = tokio::io::copy_bidirectional(&mut inside, &mut host).await;
                }
            });
        }
    }))
}
