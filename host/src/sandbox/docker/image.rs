//! The task's image: an image already on this machine, or one built from the task's
//! Dockerfile through the Engine API (classic builder, the Dockerfile's folder as the
//! context, sent as a tar archive).

use super::DockerError;
use super::spec::ImageSource;
use bollard::Docker;
use bollard::query_parameters::BuildImageOptions;
use futures_util::StreamExt;
use std::path::Path;

/// How the image was had, for the task's record.
#[derive(Debug, Clone, PartialEq)]
pub struct ImageReady {
    /// The image reference containers are created from.
    pub image: String,
    /// The build's output (its `stream` lines), empty for a local image.
    pub build_log: String,
    /// Time spent building, ms (0 for a local image).
    pub build_ms: u64,
}

/// Makes the image of `source` available: checks a local image exists (it is never
/// pulled), or builds the Dockerfile. Errors: [`DockerError::ImageMissing`],
/// [`DockerError::Build`] (with the build's log), or the API call's failure.
pub(crate) async fn ensure_image(
    docker: &Docker,
    source: &ImageSource,
) -> Result<ImageReady, DockerError> {
    match source {
        ImageSource::Local(image) => {
            exists(docker, image).await?;
            Ok(ImageReady {
                image: image.clone(),
                build_log: String::new(),
                build_ms: 0,
            })
        }
        ImageSource::Build {
            dockerfile,
            context,
            tag,
            args,
            flags,
        } => {
            let started = std::time::Instant::now();
            let tar = context_tar(context).map_err(|source| DockerError::Io {
                what: "pack the build context",
                path: context.clone(),
                source,
            })?;
            let name = dockerfile
                .strip_prefix(context)
                .unwrap_or(dockerfile)
                .display()
                .to_string();
            let options = BuildImageOptions {
                dockerfile: name,
                t: Some(tag.clone()),
                rm: true,
                forcerm: true,
                nocache: flags.no_cache,
                pull: flags.pull.then(|| "1".to_string()),
                buildargs: Some(args.clone().into_iter().collect()),
                networkmode: flags.network.clone(),
                platform: flags.platform.clone().unwrap_or_default(),
                target: flags.target.clone().unwrap_or_default(),
                labels: Some([(super::LABEL.to_string(), "built".to_string())].into()),
                ..Default::default()
            };
            let mut stream =
                docker.build_image(options, None, Some(bollard::body_full(tar.into())));
            let mut log = String::new();
            while let Some(item) = stream.next().await {
                match item {
                    Ok(info) => {
                        if let Some(text) = info.stream {
                            log.push_str(&text);
                        }
                        if let Some(detail) = info.error_detail {
                            let message = detail.message.unwrap_or_default();
                            log.push_str(&message);
                            return Err(DockerError::Build {
                                tag: tag.clone(),
                                message,
                                log,
                            });
                        }
                    }
                    Err(e) => {
                        return Err(DockerError::Build {
                            tag: tag.clone(),
                            message: e.to_string(),
                            log,
                        });
                    }
                }
            }
            Ok(ImageReady {
                image: tag.clone(),
                build_log: log,
                build_ms: started.elapsed().as_millis() as u64,
            })
        }
    }
}

/// Whether `image` is on this machine; [`DockerError::ImageMissing`] when it is not.
pub(crate) async fn exists(docker: &Docker, image: &str) -> Result<(), DockerError> {
    match docker.inspect_image(image).await {
        Ok(_) => Ok(()),
        Err(bollard::errors::Error::DockerResponseServerError {
            status_code: 404, ..
        }) => Err(DockerError::ImageMissing {
            image: image.to_string(),
        }),
        Err(source) => Err(DockerError::Api {
            what: "inspect the image",
            source,
        }),
    }
}

/// The build context as an uncompressed tar archive (symlinks kept as links).
fn context_tar(context: &Path) -> std::io::Result<Vec<u8>> {
    let mut builder = tar::Builder::new(Vec::new());
    builder.follow_symlinks(false);
    builder.append_dir_all(".", context)?;
    builder.into_inner()
}
