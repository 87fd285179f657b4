//! The exit codes of the `coder-eval` binary.

/// Everything ran and passed.
pub const OK: i32 = 0;
/// Ran, but some task failed (or a replay's reducer failed).
pub const FAILED: i32 = 1;
/// Bad invocation or bad input file: nothing was run.
pub const USAGE: i32 = 2;
/// Interrupted by SIGINT (Ctrl-C). Every interrupt exits with 128 + its signal's number,
/// as a shell reports it: 130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP
/// ([`crate::interrupt::exit_code`]). After one signal every task's result and `run.json`
/// are written (the interrupted tasks with the stop reason `interrupted`); after a second
/// one every running process was killed and the interrupted tasks have no `task.json`.
pub const INTERRUPTED: i32 = 130;
