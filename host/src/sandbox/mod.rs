//! Where a task's agent CLI runs. `driver: tempdir` (the default) runs it as a child of
//! the host in a fresh workspace folder; `driver: docker` runs it inside a container of
//! its own ([`docker`]), with the same workspace and private home at the same paths.

pub mod docker;
