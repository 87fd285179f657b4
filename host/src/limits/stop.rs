//! A live turn's stop rules ([`Deadlines`]) and every grace period and timeout of the
//! run, each named with why it has its value ([`StopPolicy`], [`CLI_VERSION_TIMEOUT`],
//! [`RUN_COMMAND_TIMEOUT_SECS`], [`GATEWAY_SHUTDOWN_GRACE`], [`GATEWAY_CONNECT_TIMEOUT`],
//! [`ISOLATE_FORWARD_AFTER`], [`INSTALL_TIMEOUT`], [`REFERENCE_COMPARISON_TIMEOUT`],
//! [`JUDGE_REQUEST_TIMEOUT`], [`PYTEST_TIMEOUT_SECS`], [`IMPORT_CHECK_TIMEOUT_SECS`],
//! [`PYLINT_TIMEOUT_SECS`], [`DOCKER_REMOVE_TIMEOUT`], [`OTLP_CONNECT_TIMEOUT`],
//! [`OTLP_EXPORT_TIMEOUT`], [`VIEW_SHUTDOWN_GRACE`]). Not here: a component's per-call
//! deadline, which is part of its sandbox budget with its memory cap and fuel
//! (`runtime::sandbox::Budget::REDUCER`, `Budget::GRADER`, `runtime::grader_v2`'s watcher
//! budget).

use crate::results::StopReason;
use std::time::{Duration, Instant};

/// A live turn's stop rules.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Deadlines {
    /// When the turn must end, with the reason if it does not (see
    /// [`RunLimitsSpec::deadline`]).
    pub deadline: Option<(Instant, StopReason)>,
    /// How the host stops what it started.
    pub policy: StopPolicy,
}

/// How the host stops the processes it starts, and how long it waits for what. Every stop
/// is SIGTERM to the whole process group (and the marked processes that left it), a
/// grace, then SIGKILL rescanned until nothing is alive (`process::stop_tree`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct StopPolicy {
    /// SIGTERM → SIGKILL grace when the host stops a running CLI (a cap, a timeout,
    /// Ctrl-C, a late exit) or a shell step that timed out: long enough for a CLI to
    /// flush its session files and answer its children, short enough that a stuck one
    /// does not hold a suite.
    pub kill_grace: Duration,
    /// After the CLI printed its final result, how long it may take to exit before its
    /// group is stopped ([`StopReason::ResultGrace`]): CLIs flush telemetry and session
    /// state after their result; 5 s covers the slowest seen (Gemini CLI) several times.
    pub result_grace: Duration,
    /// After the CLI exited, how long descendants may still hold its stdout or stderr
    /// before they are stopped ([`StopReason::LeakedPipes`]): a backgrounded process the
    /// agent left writing to the pipe would otherwise keep the turn open forever.
    pub leak_grace: Duration,
    /// After the scripted model holds a call (past `max_turns`, or a reply past
    /// `max_tool_calls`), how long the stream may
    /// still bring the lines of the calls before it (in flight in the pipe) before the
    /// cap fires. The CLI cannot do anything new meanwhile: it waits for an answer that
    /// will not come. Only the tool calls of lines later than this go uncounted (past the
    /// cut: not in the trajectory either): the number of turns is the scripted model's own
    /// count of the calls it answered, not what the stream has shown by then.
    pub held_settle: Duration,
    /// SIGTERM → SIGKILL grace for a sweep of what is left once the leader has gone (the
    /// end-of-turn sweep, the stop after leaked pipes, the end of a shell step): what is
    /// left is a stray, not the CLI at work, so it gets no more than a moment.
    pub sweep_grace: Duration,
    /// How long the SIGKILL rescan keeps finding and killing survivors (a forker deaf to
    /// SIGTERM) before it gives up; a process in uninterruptible sleep cannot be killed
    /// sooner, and the host must not hang on one.
    pub give_up: Duration,
}

impl StopPolicy {
    /// The policy of every run.
    pub(crate) const DEFAULT: StopPolicy = StopPolicy {
        kill_grace: Duration::from_secs(2),
        result_grace: Duration::from_secs(5),
        leak_grace: Duration::from_secs(1),
        held_settle: Duration::from_millis(200),
        sweep_grace: Duration::from_millis(200),
        give_up: Duration::from_secs(5),
    };
}

impl Default for StopPolicy {
    fn default() -> Self {
        StopPolicy::DEFAULT
    }
}

/// How long an agent CLI's `--version` may take. It only prints a line; a CLI that hangs
/// there (a first-run prompt, a network check) must not hold the task.
pub(crate) const CLI_VERSION_TIMEOUT: Duration = Duration::from_secs(30);

/// How long the model gateway's shutdown waits for its server task once every open
/// request was told to end: the requests are already answered or cut, so this only lets
/// the task notice; a stuck one must not hold the task's end.
pub(crate) const GATEWAY_SHUTDOWN_GRACE: Duration = Duration::from_secs(2);

/// How long the model gateway waits to connect to its upstream. There is no overall
/// timeout on a call (the turn's timeout bounds it); an upstream that does not accept a
/// connection in 30 s is down, and the CLI gets the error to retry or fail on.
pub(crate) const GATEWAY_CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// How long the outer run of `--isolate-network` waits for the inner run (in the network
/// namespace) to report a signal it received before forwarding the signal itself: a
/// signal sent to every process of the run reaches the inner one too, and a terminal's
/// Ctrl-C reaches the outer one's group alone.
pub const ISOLATE_FORWARD_AFTER: Duration = Duration::from_millis(500);

/// How long a workspace's package install (`pip install`, `npm install` of a task's
/// `sandbox.python` / `sandbox.node`) may take during setup.
pub(crate) const INSTALL_TIMEOUT: Duration = Duration::from_secs(900);

/// The default `timeout` of a `run_command` criterion, seconds (coder_eval's 30); the
/// criterion's own `timeout` can lengthen it.
pub(crate) const RUN_COMMAND_TIMEOUT_SECS: f64 = 30.0;

/// How long a second signal's exit waits for the result files being written to finish
/// (`results::close_writes`): a `task.json`, `run.json` or `report.html` is never cut
/// mid-write, and no temporary file is left; later writes are refused.
pub const EXIT_WRITE_GRACE: Duration = Duration::from_secs(2);

/// How long a `reference_comparison` criterion's `python3` comparison may take. It only
/// parses the agent's file and the reference (stdlib `ast`, `tokenize`, `difflib`; nothing
/// is executed), so anything longer is a pathological input; it then scores 0 with the
/// error kind `timeout`.
pub(crate) const REFERENCE_COMPARISON_TIMEOUT: Duration = Duration::from_secs(30);

/// How long one request of an `llm_judge` to the Anthropic API (or the scripted model)
/// may take: a long rubric and answer on a slow model take a minute or two; a request
/// still open after 5 minutes is stuck, and the criterion fails with the error.
pub(crate) const JUDGE_REQUEST_TIMEOUT: Duration = Duration::from_secs(300);

/// The default `timeout` of a `pytest` criterion, seconds; the criterion's own `timeout`
/// overrides it.
pub(crate) const PYTEST_TIMEOUT_SECS: f64 = 60.0;

/// The default `timeout` of an `import_check` criterion, seconds (one `python3 -c
/// "import …"`); the criterion's own `timeout` overrides it.
pub(crate) const IMPORT_CHECK_TIMEOUT_SECS: f64 = 30.0;

/// The default `timeout` of a `pylint_score` criterion, seconds (pylint over a whole
/// package is slow); the criterion's own `timeout` overrides it.
pub(crate) const PYLINT_TIMEOUT_SECS: f64 = 120.0;

/// How long the blocking removal of a task's container (`DELETE /containers/<id>`, at the
/// task's end or at an interrupt, outside the async client) waits for the Docker daemon's
/// answer: a force removal of a large container can take tens of seconds; a daemon that
/// does not answer in a minute must not hold the host's exit.
pub(crate) const DOCKER_REMOVE_TIMEOUT: Duration = Duration::from_secs(60);

/// How long `export --otlp` waits to connect to the collector before saying nothing
/// answers there (checked once before the spans are built).
pub(crate) const OTLP_CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// How long the OTLP exporter may take to hand one batch of spans to the collector.
pub(crate) const OTLP_EXPORT_TIMEOUT: Duration = Duration::from_secs(10);

/// After Ctrl-C, how long `coder-eval view` lets open requests finish before it exits: a
/// client that never ends its request must not hold the viewer.
pub const VIEW_SHUTDOWN_GRACE: Duration = Duration::from_secs(2);
