//! Reaching the local Docker daemon: which socket (`DOCKER_HOST` or the default), connecting
//! and probing it, and the host `node` paths mounted into a sandbox.

use super::{DEFAULT_SOCKET, DockerError};
use bollard::Docker;
use std::path::{Path, PathBuf};

/// The socket of the local daemon: `DOCKER_HOST` when it is `unix://PATH`, else
/// [`DEFAULT_SOCKET`].
pub(crate) fn socket_path() -> Result<PathBuf, DockerError> {
    socket_from(std::env::var("DOCKER_HOST").ok().as_deref())
}

/// [`socket_path`] for a `DOCKER_HOST` value.
fn socket_from(docker_host: Option<&str>) -> Result<PathBuf, DockerError> {
    match docker_host {
        Some(value) if !value.is_empty() => match value.strip_prefix("unix://") {
            Some(path) => Ok(PathBuf::from(path)),
            None => Err(DockerError::NotLocal {
                value: value.to_string(),
            }),
        },
        _ => Ok(PathBuf::from(DEFAULT_SOCKET)),
    }
}

/// Connects to the local daemon and agrees on an API version (the daemon may be older
/// than the client: Debian 12's 20.10 speaks 1.41). Error: [`DockerError::NoDaemon`].
pub async fn connect() -> Result<(Docker, PathBuf), DockerError> {
    let socket = socket_path()?;
    let docker = connect_at(&socket).await?;
    Ok((docker, socket))
}

/// Whether a daemon listens on the local socket, without a runtime (for task loading):
/// a connection to the socket is opened and closed. Errors: [`DockerError::NotLocal`],
/// or [`DockerError::NoSocket`] naming the socket and the cause.
pub(crate) fn probe_daemon() -> Result<PathBuf, DockerError> {
    let socket = socket_path()?;
    match std::os::unix::net::UnixStream::connect(&socket) {
        Ok(_) => Ok(socket),
        Err(source) => Err(DockerError::NoSocket {
            socket: socket.display().to_string(),
            source,
        }),
    }
}

/// [`connect`] to the daemon on `socket`.
pub async fn connect_at(socket: &Path) -> Result<Docker, DockerError> {
    let no_daemon = |source| DockerError::NoDaemon {
        socket: socket.display().to_string(),
        source,
    };
    let docker = Docker::connect_with_socket(
        &socket.display().to_string(),
        600,
        bollard::API_DEFAULT_VERSION,
    )
    .map_err(no_daemon)?;
    docker.negotiate_version().await.map_err(no_daemon)
}

/// The paths that make the host's `node` runnable in a container when mounted read-only
/// at the same paths: `node` as found on `PATH`, and the file it links to. The image
/// needs a C library compatible with the host's (the base image of
/// `scripts/docker-setup.sh` is the host's Debian release).
pub fn host_node_paths() -> Vec<PathBuf> {
    let mut paths = Vec::new();
    let dirs = std::env::var_os("PATH").unwrap_or_default();
    if let Some(found) = std::env::split_paths(&dirs)
        .map(|d| d.join("node"))
        .find(|p| p.is_file())
    {
        if let Ok(real) = found.canonicalize()
            && real != found
        {
            paths.push(real);
        }
        paths.push(found);
    }
    paths
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn docker_host_must_be_a_local_socket() {
        assert_eq!(socket_from(None).unwrap(), Path::new(DEFAULT_SOCKET));
        assert_eq!(socket_from(Some("")).unwrap(), Path::new(DEFAULT_SOCKET));
        assert_eq!(
            socket_from(Some("unix:///run/user/1000/docker.sock")).unwrap(),
            Path::new("/run/user/1000/docker.sock")
        );
        let err = socket_from(Some("tcp://127.0.0.1:2375")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "DOCKER_HOST=tcp://127.0.0.1:2375 is not a local unix socket: driver: docker needs the daemon on this machine (unix://PATH)"
        );
    }
}
