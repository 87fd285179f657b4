//! The container of a sandbox: how the spec and the request become Docker's create body,
//! its name, and its removal (also without the async client, and of a dead host's
//! leftovers).

use super::{DockerError, DockerSpec, LABEL, SandboxRequest, TASK_LABEL};
use bollard::Docker;
use bollard::models::{ContainerCreateBody, HostConfig, Mount, MountType};
use bollard::query_parameters::{ListContainersOptions, RemoveContainerOptions};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// `coder-eval-<task>-<host pid>-<n>`, unique on this machine, readable in `docker ps`.
pub(super) fn container_name(task_id: &str) -> String {
    let task: String = task_id
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .take(40)
        .collect();
    format!("coder-eval-{task}-{}", crate::process::new_mark())
}

/// The image's `WORKDIR`, or `/root` when it sets none (coder_eval's `auto`).
pub(super) async fn image_workdir(docker: &Docker, image: &str) -> Result<PathBuf, DockerError> {
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
pub(super) fn container_body(
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
        network_mode: Some(spec.network().network_mode().into()),
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

/// `DELETE /containers/<id>?force=true&v=true` over the unix socket, without the async
/// client. `Ok` once the daemon answered 2xx or 404.
pub(super) fn remove_blocking(socket: &Path, id: &str) -> std::io::Result<()> {
    use std::io::{Read, Write};
    let mut stream = std::os::unix::net::UnixStream::connect(socket)?;
    stream.set_read_timeout(Some(crate::limits::DOCKER_REMOVE_TIMEOUT))?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::docker::{DockerLimits, DockerNetwork};

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
            network: Some(DockerNetwork::None),
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
}
