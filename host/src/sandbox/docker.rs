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
//!
//! Where things live: the daemon socket and connection in `connect`, containers in
//! `container`, images in `image`, exec in `exec`, port forwards in `forward`, the
//! workspace copy in `workdir`; the sandbox itself here.

mod connect;
mod container;
mod exec;
mod forward;
mod image;
mod shell;
pub mod spec;
mod workdir;

pub(crate) use connect::probe_daemon;
pub use connect::{connect, connect_at, host_node_paths};
pub use container::remove_leftovers;
pub use exec::{DockerExec, ExecRequest};
pub(crate) use image::ImageReady;
pub(crate) use shell::CONTAINER_PATH;
pub(crate) use spec::DockerSpecError;
pub use spec::{DockerNetwork, DockerSpec};

use bollard::Docker;
use bollard::query_parameters::{CreateContainerOptions, RemoveContainerOptions};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

/// The label on every container (and built image) coder-eval makes; a container's value
/// is the pid of the host process that made it.
pub const LABEL: &str = "org.coder-eval.sandbox";
/// The label naming the task a container runs.
pub(crate) const TASK_LABEL: &str = "org.coder-eval.task";

/// The socket used when `DOCKER_HOST` is not set.
pub(crate) const DEFAULT_SOCKET: &str = "/var/run/docker.sock";

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
    /// Nothing listens on the daemon's socket (found before any API call).
    #[error("no Docker daemon at {socket}: start dockerd or use driver: tempdir")]
    NoSocket {
        /// The socket path tried.
        socket: String,
        /// Why the connection failed.
        #[source]
        source: std::io::Error,
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
            Some("auto") => Some(container::image_workdir(&docker, &image.image).await?),
            Some(path) => Some(PathBuf::from(path)),
        };
        let owner = std::fs::metadata(&request.workspace).map_err(|source| DockerError::Io {
            what: "read the workspace",
            path: request.workspace.clone(),
            source,
        })?;
        let body = container::container_body(spec, request, &image.image)?;
        let created = docker
            .create_container(
                Some(CreateContainerOptions {
                    name: Some(container::container_name(&request.task_id)),
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
            network: spec.network(),
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
            workdir::copy_in(&sandbox.docker, &sandbox.id, &request.workspace, dir).await?;
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
        match &self.copy_back {
            Some(workspace) => {
                workdir::copy_out(&self.docker, &self.id, &self.agent_dir, workspace).await
            }
            None => Ok(()),
        }
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
            let _ = container::remove_blocking(&self.socket, &self.id);
        }
    }
}
