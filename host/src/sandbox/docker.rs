//! `driver: docker`: the agent CLI runs inside a container of its own, through the
//! Docker Engine API (bollard), with the same observable behaviour as a child of the host.
//!
//! One container per task ([`DockerSandbox::prepare`]): the image is a local one
//! (`sandbox.docker.image`, never pulled) or built from the task's Dockerfile. The
//! workspace and the CLI's private HOME are bind-mounted read-write **at the same paths as
//! on the host**, and the agent CLIs and `node` read-only at theirs, so the launch plan's
//! argv, env and cwd stay valid unchanged. `sandbox.limits` become the container's cgroup
//! limits (`max_memory_mb` → memory (swap included), `max_cpus` → CPU quota, `max_pids` →
//! pids limit; `max_disk_mb` is not enforced, as in coder_eval). Docker's init (tini) is
//! PID 1, so processes the agent orphans are reaped.
//!
//! Each command ([`DockerSandbox::exec`]) is a Docker exec whose stdout and stderr come
//! back as two byte streams, read exactly like a child's pipes, with its exit code from
//! [`DockerExec::wait`]. Every exec carries a mark in its environment
//! ([`crate::process::MARK_VAR`]), which all its processes inherit, even those it detaches
//! with `setsid` or `nohup`. [`DockerExec::stop`] stops them all with the host's own policy
//! (SIGTERM, grace, SIGKILL, checked in the process table): the daemon is local, so the
//! container's processes are the host kernel's processes, found in `/proc` by their mark.
//! Where the host cannot see them (a daemon in another PID namespace), a small `sh` script
//! run inside the container does the same by the mark. At the end,
//! [`DockerSandbox::remove`] (or `Drop`, on any error path) force-removes the container,
//! which kills whatever is left in it.
//!
//! Networks: `bridge` (coder_eval's default) and `host` run in the host's network
//! namespace, the only one that reaches the host's loopback scripted model; `none` has no
//! network at all, except the ports the run forwards in
//! ([`DockerSandbox::forward_host_port`]: the scripted model's). Containers carry the label [`LABEL`] = the host's pid, so
//! [`remove_leftovers`] finds and removes those of a host that died.
//!
//! Only a daemon on a local unix socket is used (`DOCKER_HOST=unix://…`, else
//! `/var/run/docker.sock`): same-path bind mounts and the stop through `/proc` need the
//! daemon on this machine.

mod exec;
mod forward;
mod image;
pub mod spec;

pub use exec::{DockerExec, ExecOutput, ExecRequest};
pub use image::ImageReady;
pub use spec::{DockerBuild, DockerNetwork, DockerSpec, DockerSpecError, ImageSource};

use bollard::Docker;
use bollard::models::{ContainerCreateBody, HostConfig, Mount, MountType};
use bollard::query_parameters::{
    CreateContainerOptions, DownloadFromContainerOptions, ListContainersOptions,
    RemoveContainerOptions, UploadToContainerOptions,
};
use futures_util::StreamExt;
use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// The label on every container (and built image) coder-eval makes; a container's value
/// is the pid of the host process that made it.
pub const LABEL: &str = "org.coder-eval.sandbox";
/// The label naming the task a container runs.
pub const TASK_LABEL: &str = "org.coder-eval.task";

/// The socket used when `DOCKER_HOST` is not set.
pub const DEFAULT_SOCKET: &str = "/var/run/docker.sock";

/// A failure to set up or use a Docker sandbox. A task that meets one ends as an `ERROR`
/// with this message; none of them is a panic.
#[derive(Debug, thiserror::Error)]
pub enum DockerError {
    /// No daemon answers on the socket.
    #[error("no Docker daemon at {socket}: start dockerd or use driver: tempdir")]
    NoDaemon {
        /// The socket path tried.
        socket: String,
        /// Why the connection failed.
        #[source]
        source: bollard::errors::Error,
    },
    /// `DOCKER_HOST` names something other than a local unix socket.
    #[error(
        "DOCKER_HOST={value} is not a local unix socket: driver: docker needs the daemon on this machine (unix://PATH)"
    )]
    NotLocal {
        /// The value of `DOCKER_HOST`.
        value: String,
    },
    /// The task's `sandbox.docker` cannot be used.
    #[error(transparent)]
    Spec(#[from] DockerSpecError),
    /// The image is not on this machine (nothing is pulled).
    #[error(
        "image {image} is not on this machine and cannot be pulled here: build it locally (scripts/docker-setup.sh makes coder-eval-base:local) or set sandbox.docker.dockerfile_path"
    )]
    ImageMissing {
        /// The image reference.
        image: String,
    },
    /// The task's Dockerfile did not build.
    #[error("building image {tag} failed: {message}")]
    Build {
        /// The tag being built.
        tag: String,
        /// The builder's error message.
        message: String,
        /// The whole build output, for `docker.log`.
        log: String,
    },
    /// A call to the Engine API failed.
    #[error("docker: could not {what}")]
    Api {
        /// What was being done.
        what: &'static str,
        /// The API's error.
        #[source]
        source: bollard::errors::Error,
    },
    /// A host port could not be forwarded into the container.
    #[error("could not forward the host's port {port} into the container")]
    Forward {
        /// The port.
        port: u16,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A local file operation failed.
    #[error("could not {what} ({path})")]
    Io {
        /// What was being done.
        what: &'static str,
        /// The path involved.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
}

/// Container limits, from `sandbox.limits` (coder_eval's `ResourceLimits`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct DockerLimits {
    /// `max_memory_mb`: memory and swap together, MiB.
    pub max_memory_mb: Option<u64>,
    /// `max_cpus`: CPUs (fractional).
    pub max_cpus: Option<f64>,
    /// `max_pids`: processes and threads.
    pub max_pids: Option<i64>,
}

/// What [`DockerSandbox::prepare`] needs besides the spec.
#[derive(Debug, Clone)]
pub struct SandboxRequest {
    /// The task's id (names a built image, labels the container).
    pub task_id: String,
    /// The task file's folder (relative paths of the spec resolve against it).
    pub task_dir: PathBuf,
    /// The fresh workspace: mounted read-write at the same path.
    pub workspace: PathBuf,
    /// The CLI's private HOME: mounted read-write at the same path.
    pub home: PathBuf,
    /// Mounted read-only at the same paths: the agent CLIs (`harnesses/node_modules`),
    /// `node` (see [`host_node_paths`]). Each must exist.
    pub read_only: Vec<PathBuf>,
    /// From `sandbox.limits`.
    pub limits: DockerLimits,
}

/// A running container for one task. Remove it with [`remove`](Self::remove); dropping
/// it removes it too (synchronously, for error paths).
#[derive(Debug)]
pub struct DockerSandbox {
    docker: Docker,
    socket: PathBuf,
    id: String,
    image: ImageReady,
    /// `user:group` every exec runs as: the owner of the workspace.
    user: String,
    /// Where the agent runs (`working_dir`, or the workspace).
    agent_dir: PathBuf,
    /// The workspace on the host, when `working_dir` moved the agent elsewhere.
    copy_back: Option<PathBuf>,
    host_sees_processes: bool,
    /// The container's init process in the host's PID namespace (when it is visible).
    init_pid: Option<i64>,
    network: DockerNetwork,
    /// Ports forwarded in by [`forward_host_port`](Self::forward_host_port).
    forwards: std::sync::Mutex<Vec<tokio::task::JoinHandle<()>>>,
    removed: AtomicBool,
}

/// The socket of the local daemon: `DOCKER_HOST` when it is `unix://PATH`, else
/// [`DEFAULT_SOCKET`].
pub fn socket_path() -> Result<PathBuf, DockerError> {
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

impl DockerSandbox {
    /// Sets up the task's container: connects to the daemon, builds or finds the image,
    /// creates and starts the container (mounts, limits, network, labels), and copies the
    /// workspace to `working_dir` when the spec sets one. Any failure after the container
    /// was created removes it before returning.
    pub async fn prepare(spec: &DockerSpec, request: &SandboxRequest) -> Result<Self, DockerError> {
        spec.validate(&request.task_dir, &request.task_id)?;
        let source = spec.image_source(&request.task_dir, &request.task_id)?;
        let (docker, socket) = connect().await?;
        let image = image::ensure_image(&docker, &source).await?;
        let working_dir = match spec.working_dir_checked()? {
            None => None,
            Some("auto") => Some(image_workdir(&docker, &image.image).await?),
            Some(path) => Some(PathBuf::from(path)),
        };
        let owner = std::fs::metadata(&request.workspace).map_err(|source| DockerError::Io {
            what: "read the workspace",
            path: request.workspace.clone(),
            source,
        })?;
        let body = container_body(spec, request, &image.image)?;
        let created = docker
            .create_container(
                Some(CreateContainerOptions {
                    name: Some(container_name(&request.task_id)),
                    platform: String::new(),
                }),
                body,
            )
            .await
            .map_err(|source| DockerError::Api {
                what: "create the container",
                source,
            })?;
        let mut sandbox = DockerSandbox {
            docker,
            socket,
            id: created.id,
            image,
            user: format!("{}:{}", owner.uid(), owner.gid()),
            agent_dir: working_dir
                .clone()
                .unwrap_or_else(|| request.workspace.clone()),
            copy_back: working_dir.as_ref().map(|_| request.workspace.clone()),
            host_sees_processes: false,
            init_pid: None,
            network: spec.network,
            forwards: Default::default(),
            removed: AtomicBool::new(false),
        };
        // From here on, an error drops `sandbox`, which removes the container.
        sandbox
            .docker
            .start_container(&sandbox.id, None)
            .await
            .map_err(|source| DockerError::Api {
                what: "start the container",
                source,
            })?;
        sandbox.init_pid = sandbox.visible_init().await;
        sandbox.host_sees_processes = sandbox.init_pid.is_some();
        if let Some(dir) = &working_dir {
            sandbox.copy_in(&request.workspace, dir).await?;
        }
        Ok(sandbox)
    }

    /// The container's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The image the container runs, with its build log and time.
    pub fn image(&self) -> &ImageReady {
        &self.image
    }

    /// Where the agent runs inside the container: `working_dir`, or the workspace's path.
    pub fn agent_dir(&self) -> &Path {
        &self.agent_dir
    }

    /// The Engine API client.
    pub fn client(&self) -> &Docker {
        &self.docker
    }

    /// Whether the host sees the container's processes in its own `/proc` (a local
    /// daemon in the host's PID namespace), so stops use the host's process table.
    pub fn host_sees_processes(&self) -> bool {
        self.host_sees_processes
    }

    /// Makes `127.0.0.1:port` inside the container reach `127.0.0.1:port` on the host, for
    /// a network that does not reach the host's loopback (`none`): a sealed run still
    /// reaches the scripted model at the URL its launch plan names, and nothing else. With
    /// `bridge` or `host` it does nothing (the host's loopback is the container's). Needs
    /// the host to see the container's processes and the right to enter its network
    /// namespace (root).
    pub fn forward_host_port(&self, port: u16) -> Result<(), DockerError> {
        if self.network.reaches_host_loopback() {
            return Ok(());
        }
        let failed = |source| DockerError::Forward { port, source };
        let pid = self.init_pid.ok_or_else(|| {
            failed(std::io::Error::other(
                "the host does not see the container's processes",
            ))
        })?;
        let task = forward::forward(pid, port).map_err(failed)?;
        self.forwards
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(task);
        Ok(())
    }

    /// Starts `request` in the container (see [`DockerExec`]).
    pub async fn exec(&self, request: ExecRequest) -> Result<DockerExec, DockerError> {
        exec::start(self, request).await
    }

    /// After the agent ran in `working_dir`: replaces the workspace's contents with that
    /// folder's, so criteria grade what the agent left. Does nothing without `working_dir`.
    pub async fn copy_out(&self) -> Result<(), DockerError> {
        let Some(workspace) = &self.copy_back else {
            return Ok(());
        };
        let io = |what, source| DockerError::Io {
            what,
            path: workspace.clone(),
            source,
        };
        let mut stream = self.docker.download_from_container(
            &self.id,
            Some(DownloadFromContainerOptions {
                path: self.agent_dir.display().to_string(),
            }),
        );
        let mut tar_bytes = Vec::new();
        while let Some(chunk) = stream.next().await {
            tar_bytes.extend_from_slice(&chunk.map_err(|source| DockerError::Api {
                what: "copy working_dir out of the container",
                source,
            })?);
        }
        for entry in std::fs::read_dir(workspace).map_err(|e| io("read the workspace", e))? {
            let path = entry.map_err(|e| io("read the workspace", e))?.path();
            let removed = if path.is_dir() && !path.is_symlink() {
                std::fs::remove_dir_all(&path)
            } else {
                std::fs::remove_file(&path)
            };
            removed.map_err(|e| io("clear the workspace", e))?;
        }
        let mut archive = tar::Archive::new(tar_bytes.as_slice());
        for entry in archive.entries().map_err(|e| io("unpack working_dir", e))? {
            let mut entry = entry.map_err(|e| io("unpack working_dir", e))?;
            let path = entry.path().map_err(|e| io("unpack working_dir", e))?;
            // The archive's first component is the folder itself; nothing may climb out.
            let inner: PathBuf = path.components().skip(1).collect();
            let safe = inner
                .components()
                .all(|c| matches!(c, std::path::Component::Normal(_)));
            if inner.as_os_str().is_empty() || !safe {
                continue;
            }
            let dest = workspace.join(&inner);
            if let Some(parent) = dest.parent() {
                std::fs::create_dir_all(parent).map_err(|e| io("unpack working_dir", e))?;
            }
            entry
                .unpack(&dest)
                .map_err(|e| io("unpack working_dir", e))?;
        }
        Ok(())
    }

    /// Force-removes the container (killing everything still running in it) and its
    /// anonymous volumes. Idempotent; a container already gone is not an error.
    pub async fn remove(&self) -> Result<(), DockerError> {
        if self.removed.swap(true, Ordering::SeqCst) {
            return Ok(());
        }
        self.stop_forwards();
        let options = RemoveContainerOptions {
            force: true,
            v: true,
            link: false,
        };
        match self.docker.remove_container(&self.id, Some(options)).await {
            Ok(()) => Ok(()),
            Err(bollard::errors::Error::DockerResponseServerError {
                status_code: 404, ..
            }) => Ok(()),
            Err(source) => {
                self.removed.store(false, Ordering::SeqCst);
                Err(DockerError::Api {
                    what: "remove the container",
                    source,
                })
            }
        }
    }

    async fn copy_in(&self, workspace: &Path, dir: &Path) -> Result<(), DockerError> {
        let io = |source| DockerError::Io {
            what: "pack the workspace for working_dir",
            path: workspace.to_path_buf(),
            source,
        };
        let inner = dir.strip_prefix("/").unwrap_or(dir);
        let mut builder = tar::Builder::new(Vec::new());
        builder.follow_symlinks(false);
        builder.append_dir_all(inner, workspace).map_err(io)?;
        let tar_bytes = builder.into_inner().map_err(io)?;
        self.docker
            .upload_to_container(
                &self.id,
                Some(UploadToContainerOptions {
                    path: "/".into(),
                    ..Default::default()
                }),
                bollard::body_full(tar_bytes.into()),
            )
            .await
            .map_err(|source| DockerError::Api {
                what: "copy the workspace into working_dir",
                source,
            })
    }

    /// The container's init process, when it is in the host's `/proc` (its cgroup names
    /// the container).
    async fn visible_init(&self) -> Option<i64> {
        let info = self.docker.inspect_container(&self.id, None).await.ok()?;
        let pid = info.state.and_then(|s| s.pid).filter(|&p| p > 0)?;
        std::fs::read_to_string(format!("/proc/{pid}/cgroup"))
            .is_ok_and(|cgroup| cgroup.contains(&self.id))
            .then_some(pid)
    }

    fn stop_forwards(&self) {
        for task in self
            .forwards
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .drain(..)
        {
            task.abort();
        }
    }

    fn user(&self) -> &str {
        &self.user
    }
}

impl Drop for DockerSandbox {
    fn drop(&mut self) {
        self.stop_forwards();
        if !self.removed.swap(true, Ordering::SeqCst) {
            // Synchronous: an error path may drop the sandbox where no runtime runs.
            let _ = remove_blocking(&self.socket, &self.id);
        }
    }
}

/// `DELETE /containers/<id>?force=true&v=true` over the unix socket, without the async
/// client. `Ok` once the daemon answered 2xx or 404.
fn remove_blocking(socket: &Path, id: &str) -> std::io::Result<()> {
    use std::io::{Read, Write};
    let mut stream = std::os::unix::net::UnixStream::connect(socket)?;
    stream.set_read_timeout(Some(Duration::from_secs(60)))?;
    write!(
        stream,
        "DELETE /containers/{id}?force=true&v=true HTTP/1.0\r\nHost: docker\r\n\r\n"
    )?;
    let mut reply = Vec::new();
    stream.read_to_end(&mut reply)?;
    let status = String::from_utf8_lossy(&reply);
    let code = status.split_whitespace().nth(1).unwrap_or("");
    if code.starts_with('2') || code == "404" {
        Ok(())
    } else {
        Err(std::io::Error::other(format!(
            "remove container {id}: {}",
            status.lines().next().unwrap_or("")
        )))
    }
}

/// Removes the containers labelled [`LABEL`] whose host process is gone (a host that was
/// killed before it could remove them). Returns their ids.
pub async fn remove_leftovers(docker: &Docker) -> Result<Vec<String>, DockerError> {
    let list = docker
        .list_containers(Some(ListContainersOptions {
            all: true,
            filters: Some(HashMap::from([(
                "label".to_string(),
                vec![LABEL.to_string()],
            )])),
            ..Default::default()
        }))
        .await
        .map_err(|source| DockerError::Api {
            what: "list containers",
            source,
        })?;
    let mut removed = Vec::new();
    for container in list {
        let (Some(id), Some(labels)) = (container.id, container.labels) else {
            continue;
        };
        let owner_alive = labels
            .get(LABEL)
            .and_then(|pid| pid.parse::<u32>().ok())
            .is_some_and(|pid| Path::new(&format!("/proc/{pid}")).exists());
        if owner_alive {
            continue;
        }
        let options = RemoveContainerOptions {
            force: true,
            v: true,
            link: false,
        };
        if docker.remove_container(&id, Some(options)).await.is_ok() {
            removed.push(id);
        }
    }
    Ok(removed)
}

/// `coder-eval-<task>-<host pid>-<n>`, unique on this machine, readable in `docker ps`.
fn container_name(task_id: &str) -> String {
    let task: String = task_id
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .take(40)
        .collect();
    format!("coder-eval-{task}-{}", crate::process::new_mark())
}

/// The image's `WORKDIR`, or `/root` when it sets none (coder_eval's `auto`).
async fn image_workdir(docker: &Docker, image: &str) -> Result<PathBuf, DockerError> {
    let info = docker
        .inspect_image(image)
        .await
        .map_err(|source| DockerError::Api {
            what: "inspect the image",
            source,
        })?;
    let dir = info
        .config
        .and_then(|c| c.working_dir)
        .filter(|d| d.starts_with('/'));
    Ok(PathBuf::from(dir.unwrap_or_else(|| "/root".into())))
}

/// The container: a shell that waits on a stdin nobody writes (only `sh` is needed from
/// the image), under Docker's init; mounts, limits, network and labels from the spec.
fn container_body(
    spec: &DockerSpec,
    request: &SandboxRequest,
    image: &str,
) -> Result<ContainerCreateBody, DockerError> {
    let bind = |path: &Path, target: &Path, read_only: bool| -> Result<Mount, DockerError> {
        let source = path.canonicalize().map_err(|source| DockerError::Io {
            what: "find a path to mount",
            path: path.to_path_buf(),
            source,
        })?;
        Ok(Mount {
            target: Some(target.display().to_string()),
            source: Some(source.display().to_string()),
            typ: Some(MountType::BIND),
            read_only: Some(read_only),
            ..Default::default()
        })
    };
    let mut mounts = vec![
        bind(&request.workspace, &request.workspace, false)?,
        bind(&request.home, &request.home, false)?,
    ];
    for path in &request.read_only {
        mounts.push(bind(path, path, true)?);
    }
    for extra in spec.extra_mounts(&request.task_dir)? {
        mounts.push(bind(&extra.source, &extra.target, extra.read_only)?);
    }
    let limits = request.limits;
    let memory = limits
        .max_memory_mb
        .map(|mb| (mb as i64).saturating_mul(1024 * 1024));
    let host_config = HostConfig {
        mounts: Some(mounts),
        network_mode: Some(spec.network.network_mode().into()),
        memory,
        memory_swap: memory,
        nano_cpus: limits.max_cpus.map(|c| (c * 1e9) as i64),
        pids_limit: limits.max_pids,
        init: Some(true),
        cap_drop: spec.agent_isolation.then(|| vec!["ALL".to_string()]),
        security_opt: spec
            .agent_isolation
            .then(|| vec!["no-new-privileges".to_string()]),
        ..Default::default()
    };
    Ok(ContainerCreateBody {
        image: Some(image.into()),
        entrypoint: Some(vec![
            "sh".into(),
            "-c".into(),
            "read -r _ || :; exit 0".into(),
        ]),
        cmd: Some(vec![]),
        open_stdin: Some(true),
        working_dir: Some(request.workspace.display().to_string()),
        labels: Some(HashMap::from([
            (LABEL.to_string(), std::process::id().to_string()),
            (TASK_LABEL.to_string(), request.task_id.clone()),
        ])),
        host_config: Some(host_config),
        ..Default::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(dir: &Path) -> SandboxRequest {
        SandboxRequest {
            task_id: "data/row 1".into(),
            task_dir: dir.to_path_buf(),
            workspace: dir.join("ws"),
            home: dir.join("home"),
            read_only: vec![dir.join("clis")],
            limits: DockerLimits {
                max_memory_mb: Some(512),
                max_cpus: Some(1.5),
                max_pids: Some(100),
            },
        }
    }

    #[test]
    fn the_container_maps_the_spec_and_limits() {
        let dir = std::env::temp_dir().join(format!("ce-docker-body-{}", std::process::id()));
        for sub in ["ws", "home", "clis"] {
            std::fs::create_dir_all(dir.join(sub)).unwrap();
        }
        let dir = dir.canonicalize().unwrap();
        let spec = DockerSpec {
            network: DockerNetwork::None,
            extra_mounts: vec![format!("clis:/opt/clis:ro")],
            ..DockerSpec::default()
        };
        let body = container_body(&spec, &request(&dir), "img:1").unwrap();
        assert_eq!(body.image.as_deref(), Some("img:1"));
        let labels = body.labels.unwrap();
        assert_eq!(labels[LABEL], std::process::id().to_string());
        assert_eq!(labels[TASK_LABEL], "data/row 1");
        let host = body.host_config.unwrap();
        assert_eq!(host.network_mode.as_deref(), Some("none"));
        assert_eq!(host.memory, Some(512 << 20));
        assert_eq!(host.memory_swap, Some(512 << 20));
        assert_eq!(host.nano_cpus, Some(1_500_000_000));
        assert_eq!(host.pids_limit, Some(100));
        assert_eq!(host.init, Some(true));
        assert_eq!(host.cap_drop, Some(vec!["ALL".to_string()]));
        let mounts: Vec<(String, String, bool)> = host
            .mounts
            .unwrap()
            .into_iter()
            .map(|m| (m.source.unwrap(), m.target.unwrap(), m.read_only.unwrap()))
            .collect();
        let at = |p: &str| dir.join(p).display().to_string();
        assert_eq!(
            mounts,
            [
                (at("ws"), at("ws"), false),
                (at("home"), at("home"), false),
                (at("clis"), at("clis"), true),
                (at("clis"), "/opt/clis".to_string(), true),
            ]
        );

        let open = DockerSpec {
            agent_isolation: false,
            ..DockerSpec::default()
        };
        let mut unlimited = request(&dir);
        unlimited.limits = DockerLimits::default();
        let host = container_body(&open, &unlimited, "img:1")
            .unwrap()
            .host_config
            .unwrap();
        assert_eq!(host.network_mode.as_deref(), Some("host"));
        assert_eq!(
            (host.memory, host.nano_cpus, host.pids_limit),
            (None, None, None)
        );
        assert_eq!((host.cap_drop, host.security_opt), (None, None));

        let mut missing = request(&dir);
        missing.read_only.push(dir.join("nope"));
        let err = container_body(&open, &missing, "img:1").unwrap_err();
        assert!(
            err.to_string()
                .starts_with("could not find a path to mount ("),
            "{err}"
        );
        assert_eq!(
            container_name("data/row 1")
                .split('-')
                .take(5)
                .collect::<Vec<_>>(),
            ["coder", "eval", "data", "row", "1"]
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

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
