//! The exit codes of the `coder-eval` binary.

/// Everything ran and passed.
pub const OK: i32 = 0;
/// Ran, but some task failed (or a replay's reducer failed).
pub const FAILED: i32 = 1;
/// Bad invocation or bad input file: nothing was run. A configuration error: running
/// again as it is fails again (a Kubernetes Job's `podFailurePolicy` fails the Job). For
/// a shard also: its CLI missing or not executable, its folder held by another process
/// or a plain run's, its task files changed since the plan.
pub const USAGE: i32 = 2;
/// A run whose results could not be written (a full disk, an I/O error); any command whose
/// output could not be written to stdout (but a closed pipe, `| head`, which ends with 0):
/// this code then replaces the one the command's verdict would give. Or a shard
/// (`run --plan … --shard K/N`) that did not finish for a reason outside its tasks: a unit
/// ended in an infrastructure error (`suite::infra::INFRA_ERROR_KINDS`, or one its retries
/// gave up on: `suite::infra::infra_cause`), or results could not be written. Retryable:
/// running the shard again into the same folder
/// keeps its complete units and runs the rest. (A shard whose units all ran exits 0
/// whether they passed or not; `coder-eval merge` gives the verdict.)
pub const INFRA: i32 = 3;
/// Interrupted by SIGINT (Ctrl-C). Every interrupt exits with 128 + its signal's number,
/// as a shell reports it: 130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP
/// ([`crate::interrupt::exit_code`]). After one signal every task's result and `run.json`
/// are written (the interrupted tasks with the stop reason `interrupted`); after a second
/// one every running process was killed and the interrupted tasks have no `task.json`.
pub const INTERRUPTED: i32 = 130;
