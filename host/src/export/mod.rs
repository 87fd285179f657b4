//! Exports of a finished run to formats other tools read: Harbor's ATIF trajectories
//! ([`atif`]) and OpenTelemetry traces over OTLP ([`otlp`]). Each reads what a run left
//! on disk (`run.json`, `task.json`, the recording) and never changes it.

pub mod atif;
pub mod otlp;
pub mod run_dir;
