//! The exit codes of the `coder-eval` binary.

/// Everything ran and passed.
pub const OK: i32 = 0;
/// Ran, but some task failed (or a replay's reducer failed).
pub const FAILED: i32 = 1;
/// Bad invocation or bad input file: nothing was run.
pub const USAGE: i32 = 2;
/// Interrupted by a second Ctrl-C: every running CLI was killed, results were not
/// written (128 + SIGINT, as a shell reports it).
pub const INTERRUPTED: i32 = 130;
