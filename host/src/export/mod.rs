//! Exports of a finished run to formats other tools read: Harbor's ATIF trajectories
//! ([`atif`]). Each reads what a run left on disk (`run.json`, `task.json`, the
//! recording) and never changes it.

pub mod atif;
pub mod run_dir;
