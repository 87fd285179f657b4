//! coder-eval: evaluates coding-agent CLIs.
//!
//! The data flow, one module per stage: a harness component's launch plan
//! ([`runtime::harness`]) → spawn and record ([`recording`]) → reduce and collect
//! ([`pipeline`], [`collect`]) → the turn record ([`record`]). [`replay`] runs a recording
//! back through the same pipeline. Components are loaded by [`components`] and run in the
//! sandbox of [`runtime`].

pub mod collect;
pub mod components;
pub mod exit_codes;
pub mod grading;
pub mod pipeline;
pub mod process;
pub mod record;
pub mod recording;
pub mod replay;
pub mod run;
pub mod runtime;
pub mod task;

pub use harness_kit::{Event, ToolStatus, Usage};
