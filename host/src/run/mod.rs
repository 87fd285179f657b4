//! `coder-eval run`: tasks × harnesses, each in a fresh workspace with a private HOME,
//! against the scripted model or a real one; then grading and `task.json`.
//!
//! The rooms: [`options`] (how to run), [`prepare()`] (everything checked before any agent
//! starts; a suite's units, one per replicate, in [`units`]), [`one`] (one task as stages
//! that return values: setup → plan → launch → turn → grade, assembled into `task.json`
//! by `assemble`, a failed stage being an
//! [`error::RunError`]), [`suite`] (`run_all`, then `run.json`, `junit.xml` and
//! `report.html`), [`verdict`] (a turn's criteria and the task's status), [`probe`]
//! (an agent CLI's version), `launch` (the launch stage: argv, environment, files, the
//! recording; shared by `one` and [`sessions`]), `setup` (the task's folders),
//! [`regrade`] (the library of `coder-eval grade`), [`report`] and [`junit`],
//! [`thresholds`] (the suite-level `suite_thresholds` gate), `judge` (`agent_judge` CLIs
//! run as tasks of their own), [`agentless`] (`agent.type: none`: criteria on a prepared
//! sandbox, no agent).
//! This file only re-exports.

pub mod agentless;
mod anchors;
mod assemble;
pub mod caps;
mod container;
mod cost;
pub mod error;
mod gateway;
mod grade;
mod judge;
pub mod junit;
mod launch;
pub(crate) mod matrix_filter;
pub mod one;
pub mod options;
pub mod prepare;
pub mod probe;
pub mod progress;
pub mod regrade;
pub mod report;
pub mod retry;
pub mod sessions;
mod setup;
pub mod suite;
pub mod thresholds;
pub(crate) mod trajectory_view;
pub mod units;
pub mod verdict;
pub mod version;
mod write_result;

pub use agentless::{NO_AGENT, run_agentless};
pub(crate) use error::RunError;
pub use one::run_one;
pub use options::RunOptions;
pub use prepare::{PrepareError, Prepared, prepare};
pub(crate) use suite::write_suite_reports;
pub use suite::{record_skipped, run_all, write_run};
pub use units::prepare_units;
