//! coder-eval: evaluates coding-agent CLIs.
//!
//! The data flow, one module per stage: a task file ([`task`], its limits in [`limits`])
//! → a harness component's launch plan ([`runtime::harness`], resolved by [`components`])
//! → one turn, live or replayed ([`turn`]: spawn and record, reduce, collect, finish) →
//! grading ([`grading`]) → the documented machine output ([`results`]). [`run`] drives a
//! suite of tasks through those stages; components run in the sandbox of [`runtime`].
//!
//! The public surface is what the `coder-eval` binary, the workspace tests (`tests/all`)
//! and the benchmarks (`host/benches`) use; everything else is `pub(crate)`, and the
//! `unreachable_pub` lint keeps it so.

#![warn(unreachable_pub)]

/// `eprintln!` for this crate, shadowing std's (a `macro_rules!` in textual scope wins over
/// the prelude's): the same output, but a stderr that cannot be written (a closed pipe,
/// `coder-eval run … 2>&1 | head -1`, a full disk) is ignored instead of panicking
/// ("failed printing to stderr"): a diagnostic that cannot be shown must not stop a run.
/// (A stderr closed before the start, `2>&-`, is /dev/null: Rust reopens fds 0–2.)
macro_rules! eprintln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

pub mod components;
mod embedded;
pub mod exit_codes;
pub mod export;
pub mod gateway;
pub mod grading;
pub mod interrupt;
pub mod limits;
pub mod process;
pub mod results;
pub mod run;
pub mod runtime;
pub mod sandbox;
mod suggest;
pub mod suite;
pub mod task;
pub mod turn;
pub mod workspace;

pub use harness_kit::{Event, ToolStatus, Usage};
