//! `working_dir`: the workspace is copied into the container's folder before the agent
//! runs and copied back after, as tar archives through the Engine API.

use super::DockerError;
use bollard::Docker;
use bollard::query_parameters::{DownloadFromContainerOptions, UploadToContainerOptions};
use futures_util::StreamExt;
use std::path::{Path, PathBuf};

/// Copies the contents of `workspace` into folder `dir` of container `id` (made if
/// missing; owners and modes kept).
pub(super) async fn copy_in(
    docker: &Docker,
    id: &str,
    workspace: &Path,
    dir: &Path,
) -> Result<(), DockerError> {
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
    docker
        .upload_to_container(
            id,
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

/// Copies host folder or file `path` into container `id` at the same path (parents made;
/// owners and modes kept; symlinks copied as links).
pub(super) async fn copy_path_in(
    docker: &Docker,
    id: &str,
    path: &Path,
) -> Result<(), DockerError> {
    let io = |source| DockerError::Io {
        what: "pack a folder for the container",
        path: path.to_path_buf(),
        source,
    };
    let inner = path.strip_prefix("/").unwrap_or(path);
    let mut builder = tar::Builder::new(Vec::new());
    builder.follow_symlinks(false);
    if path.is_dir() {
        builder.append_dir_all(inner, path).map_err(io)?;
    } else {
        builder.append_path_with_name(path, inner).map_err(io)?;
    }
    let tar_bytes = builder.into_inner().map_err(io)?;
    docker
        .upload_to_container(
            id,
            Some(UploadToContainerOptions {
                path: "/".into(),
                ..Default::default()
            }),
            bollard::body_full(tar_bytes.into()),
        )
        .await
        .map_err(|source| DockerError::Api {
            what: "copy a folder into the container",
            source,
        })
}

/// Replaces the contents of `workspace` with those of folder `dir` of container `id`.
pub(super) async fn copy_out(
    docker: &Docker,
    id: &str,
    dir: &Path,
    workspace: &Path,
) -> Result<(), DockerError> {
    let io = |what, source| DockerError::Io {
        what,
        path: workspace.to_path_buf(),
        source,
    };
    let mut stream = docker.download_from_container(
        id,
        Some(DownloadFromContainerOptions {
            path: dir.display().to_string(),
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
