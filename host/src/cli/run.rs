//! `coder-eval run`: the flags ([`RunArgs`]) and the run's steps in order; each step
//! lives in a room of its own under `run/`.

use coder_eval::components::parse_override;
use coder_eval::exit_codes;
use coder_eval::results::TaskResult;
use std::path::PathBuf;

mod execute;
mod folder;
mod isolate;
mod load;
mod options;
mod output;
mod resume;
mod shard;
mod summary;
mod units;
use isolate::{isolated, reexec_isolated};
use output::{print_line, print_statistics, row};
pub use shard::{MergeArgs, PlanArgs, merge, plan};

/// Runs task files on agent CLIs, records what they stream, grades the result and writes
/// `task.json` per task and harness. Exit code: 0 all passed, 1 some did not, 2 bad
/// invocation or task file (nothing was run), 128+N interrupted by signal N (130 Ctrl-C,
/// 143 SIGTERM); a shard (`--plan`): 0 every unit ran, 3 an infrastructure failure
/// (retry it), 2 a configuration error (do not).
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  coder-eval run tasks/hello_date/task.yaml
  coder-eval run tasks/hello_date/task.yaml --harness all --out runs/smoke
  coder-eval run tasks/run_limits/max_turns_cap/task.yaml --harness claude-code --no-native-limits
  coder-eval run task.yaml --scripted-model other-script.yaml --isolate-network
  coder-eval run --experiment examples/experiments/hello-date.yaml tasks/hello_date/task.yaml
  coder-eval run tasks/hello_date/task.yaml --repeats 5 -D run_limits.max_turns=4
  coder-eval run --resume runs/20260101-120000
  coder-eval run --plan plan.json --shard 0/3 --out runs/shard-0-of-3")]
pub struct RunArgs {
    /// Task files (YAML).
    #[arg(required_unless_present_any = ["resume", "plan"])]
    tasks: Vec<PathBuf>,
    /// Harness to run on (repeatable); `all` = every built-in harness whose CLI is
    /// installed. Default: each task's `agent.type`. With `--experiment` or `-D`: one
    /// harness, the command line's `agent.type` (it beats the variants').
    #[arg(long)]
    harness: Vec<String>,
    /// An experiment file (coder_eval's `experiment_id`, `defaults`, `variants`): every
    /// task runs under every variant, results under `<out>/<variant_id>/`.
    #[arg(long, short = 'e', value_name = "EXPERIMENT.yaml")]
    experiment: Option<PathBuf>,
    /// Set a task-file field for every task, above the experiment's variants:
    /// `-D run_limits.max_turns=5`, `-D agent.model=claude-opus-4-1` (repeatable; the
    /// value is read as YAML).
    #[arg(short = 'D', value_name = "PATH=VALUE")]
    define: Vec<String>,
    /// The model for every task (= `-D agent.model=MODEL`).
    #[arg(long)]
    model: Option<String>,
    /// Run each task × variant N times (replicates `r00`, `r01`, …, each in its own
    /// folder); beats the task's and the experiment's `repeats`. 1 to 10000.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=i64::from(coder_eval::suite::MAX_REPEATS)))]
    repeats: Option<u32>,
    /// Finish an interrupted run: resolve its units again from its `invocation.json`,
    /// keep each whose `task.json` is complete, run the rest (other options are the
    /// original run's; only --jobs, --infra-retries, --retry-initial-delay,
    /// --otlp-endpoint, --isolate-network and --[no-]pid-namespace may be given anew).
    // Task files, --out and --experiment with it are refused by `resume_ignores`, not
    // by clap: a clap conflict's usage line would advertise `--resume <RUN_DIR> [TASKS]...`.
    #[arg(long, value_name = "RUN_DIR")]
    resume: Option<PathBuf>,
    /// Output folder (default: runs/<UTC timestamp>; with --plan: runs/shard-K-of-N).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Run one shard of a plan (`coder-eval plan`): the plan's units whose id falls in
    /// the shard given by --shard or --shard-from-env, resolved from the plan's arguments
    /// (refused when they resolve to other units here). Only --out, --jobs, --cli,
    /// --infra-retries, --retry-initial-delay, --otlp-endpoint, --isolate-network and
    /// --[no-]pid-namespace may be given with it. Exit code 0 when every unit ran (passed
    /// or failed: `merge` judges), 3 an infrastructure failure (a unit still crashed or
    /// met HTTP 429/5xx when its retries ran out, results not writable: run the shard
    /// again), 2 a configuration error (bad plan or arguments, task files changed since
    /// planning, the CLI missing or not executable, the folder busy or not a shard's: a
    /// retry fails the same way).
    #[arg(long, value_name = "PLAN.json", conflicts_with_all = ["resume", "tasks"])]
    plan: Option<PathBuf>,
    /// With --plan: run shard K of N (0 <= K < N).
    #[arg(long, value_name = "K/N", requires = "plan")]
    shard: Option<String>,
    /// With --plan: the shard index from JOB_COMPLETION_INDEX (a Kubernetes Indexed Job),
    /// the number of shards from --shard-count, else CODER_EVAL_SHARD_COUNT.
    #[arg(long, requires = "plan", conflicts_with = "shard")]
    shard_from_env: bool,
    /// With --shard-from-env: the number of shards.
    #[arg(long, value_name = "N", requires = "shard_from_env")]
    shard_count: Option<u32>,
    /// Play this model script instead of the task's `agent.scripted_model`.
    #[arg(long, value_name = "SCRIPT")]
    scripted_model: Option<PathBuf>,
    /// A folder of replacement components (`<harness>.wasm`).
    #[arg(long, value_name = "DIR")]
    components: Option<PathBuf>,
    /// Replace one harness's component: NAME=PATH (repeatable).
    #[arg(long, value_name = "NAME=PATH", value_parser = parse_override)]
    component: Vec<(String, PathBuf)>,
    /// Use this CLI binary (default: the pinned install in harnesses/, then PATH).
    #[arg(long, value_name = "PATH")]
    cli: Option<PathBuf>,
    /// Do not pass limits to the CLI; enforce them with the host's backstop alone.
    #[arg(long)]
    no_native_limits: bool,
    /// How many tasks run at once.
    #[arg(long, default_value_t = 1)]
    jobs: usize,
    /// Run a task again, up to N times, when its attempt ends in an infrastructure error
    /// (the CLI crashed before its first model call, HTTP 429/5xx from the model API, a
    /// documented transient exit code); every attempt is kept under `attempts/<n>/`. A
    /// graded failure is never run again. coder_eval's `retry.max_retries`; beats a task
    /// file's `retry:` block. 0 to 20; default 2.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(0..=i64::from(coder_eval::run::retry::MAX_RETRIES)))]
    infra_retries: Option<u32>,
    /// The wait before the first infrastructure retry, in seconds (0 to 3600; default 1);
    /// it doubles for each later one (coder_eval's `retry.initial_delay`; beats a task
    /// file's `retry:` block).
    #[arg(long, value_name = "SECONDS", value_parser = parse_delay)]
    retry_initial_delay: Option<f64>,
    /// Pass this host environment variable to the CLI (repeatable). Judges may read it
    /// too. With `--gateway`, API keys and other secret-looking names (`…_KEY`,
    /// `…_TOKEN`, `…_SECRET`, `…_PASSWORD`, `…API_KEY…`) are held back from the CLI (a
    /// note says so); the gateway's keys go to it with `--upstream`.
    #[arg(long, value_name = "NAME")]
    pass_env: Vec<String>,
    /// Hand this host environment variable to judges only (`llm_judge`, `agent_judge`),
    /// never to the agent: e.g. `--judge-env ANTHROPIC_API_KEY` (repeatable).
    #[arg(long, value_name = "NAME")]
    judge_env: Vec<String>,
    /// Put the model gateway between each CLI and its model: every request is forwarded
    /// unchanged and recorded (`model_call` records), `num_turns` is counted and
    /// `max_turns` held there. Upstream: the task's scripted model, or `--upstream`.
    #[arg(long)]
    gateway: bool,
    /// With `--gateway`: the real API's base URL (e.g. `https://api.anthropic.com`). The
    /// API keys among `--pass-env` then go to the gateway only; the CLI gets a dummy key.
    /// Checked before any agent starts; refused with `--isolate-network`.
    #[arg(long, value_name = "URL", requires = "gateway")]
    upstream: Option<String>,
    /// With `--gateway`: keep request and response bodies in the call records (secrets
    /// redacted; a response kept up to 1 MiB).
    #[arg(long, requires = "gateway")]
    gateway_bodies: bool,
    /// With `--gateway`: price each model call from the API's own usage with this table
    /// of USD per million tokens per model (YAML or JSON; see README, *Price table*):
    /// the turn's `gateway.cost_usd` (`cost_source: price_table`), and `max_usd` held at
    /// the gateway. Only the gateway sees each call's usage, so it needs `--gateway`.
    /// Checked before any agent starts (a bad table: exit 2, `FILE:LINE:COL`).
    #[arg(long, value_name = "FILE", requires = "gateway")]
    price_table: Option<PathBuf>,
    /// Register the criterion plugin types of DIR (`DIR/criteria.yaml`, else every
    /// `DIR/<type>.wasm`) before loading the task files (repeatable).
    #[arg(long, value_name = "DIR")]
    criteria: Vec<PathBuf>,
    /// Run inside a new network namespace with only loopback up (`unshare -n`). A run
    /// holding a task with `sandbox.network_enabled: false` does so by itself.
    #[arg(long)]
    isolate_network: bool,
    /// The default (kept for old command lines): each agent CLI starts in a PID namespace
    /// of its own (`unshare --pid --fork --kill-child --mount-proc`, with `--user` when
    /// not root, under `tini` as PID 1), where the kernel allows it: every process of a
    /// task dies with it, even when coder-eval itself is SIGKILLed. Elsewhere a warning,
    /// and the process group and mark alone (`task.json`: `cli.containment`).
    #[arg(long, conflicts_with = "no_pid_namespace")]
    pid_namespace: bool,
    /// Start each agent CLI without a PID namespace: its process group, its descendants
    /// and the process mark hold its processes (`cli.containment: process_group`).
    #[arg(long)]
    no_pid_namespace: bool,
    /// Run only tasks having any of these tags (comma-separated, repeatable).
    #[arg(long, value_delimiter = ',', value_name = "TAG,...")]
    tags: Vec<String>,
    /// Leave out tasks having any of these tags (comma-separated, repeatable).
    #[arg(long, value_delimiter = ',', value_name = "TAG,...")]
    exclude_tags: Vec<String>,
    /// Run tasks marked `skip: true` too (else they are recorded as SKIPPED).
    #[arg(long)]
    include_skipped: bool,
    /// Dataset tasks: only the rows whose `dataset.split_field` is NAME (a dataset
    /// without split labels runs whole).
    #[arg(long, value_name = "NAME")]
    split: Option<String>,
    /// Dataset tasks: N rows drawn uniformly with a fixed seed (the same N every run).
    #[arg(long, value_name = "N")]
    sample: Option<usize>,
    /// Dataset tasks: up to N rows per stratum (overrides `dataset.sample_per_stratum`).
    #[arg(long, value_name = "N")]
    sample_per_stratum: Option<u32>,
    /// After the run, send one OpenTelemetry trace per task to this OTLP/HTTP collector
    /// (base URL; as `coder-eval export --format otlp`). Off by default; a collector that
    /// does not take them is a warning, never a change to the run's outcome.
    #[arg(long, value_name = "URL")]
    otlp_endpoint: Option<String>,
}

/// `RunArgs` parsed alone, for `invocation.json`.
#[derive(Debug, clap::Parser)]
struct StoredRun {
    #[command(flatten)]
    args: RunArgs,
}

pub fn run(args: RunArgs) -> Result<i32, Box<dyn std::error::Error>> {
    run_as(args, None)
}

/// `run`, or (`mode`) `plan`, `merge`, or a shard of a plan (`--plan`).
fn run_as(args: RunArgs, mode: Option<shard::Mode>) -> Result<i32, Box<dyn std::error::Error>> {
    match steps(args, mode) {
        Ok(code) | Err(Halt::Exit(code)) => Ok(code),
        Err(Halt::Error(err)) => Err(err),
    }
}

/// Why a step ends the run early: with an exit code (its reason, if any, already on
/// stderr), or with an error for `main` to print.
enum Halt {
    Exit(i32),
    Error(Box<dyn std::error::Error>),
}

impl<E: Into<Box<dyn std::error::Error>>> From<E> for Halt {
    fn from(err: E) -> Self {
        Halt::Error(err.into())
    }
}

/// A step's value, or why the run ends here.
type Flow<T> = Result<T, Halt>;

/// Prints `error: {message}` and ends the run as a bad invocation.
fn usage<T>(message: impl std::fmt::Display) -> Flow<T> {
    eprintln!("error: {message}");
    Err(Halt::Exit(exit_codes::USAGE))
}

/// Prints `err` with its causes and ends the run as a bad invocation.
fn refused<T>(err: &dyn std::error::Error) -> Flow<T> {
    super::print_error(err);
    Err(Halt::Exit(exit_codes::USAGE))
}

/// The run's steps in order: resolve the arguments (a shard's, a resumed run's), load the
/// task files, prepare the units, hand over to a plan/merge/shard, claim the folder, keep
/// a resumed run's finished units, run the rest, report.
fn steps(mut args: RunArgs, mut mode: Option<shard::Mode>) -> Flow<i32> {
    if args.plan.is_none() {
        refuse_lone_shard_flags(&args)?;
    } else {
        let (stored, m) = shard::shard_mode(args).map_err(Halt::Exit)?;
        (args, mode) = (stored, Some(m));
    }
    if let Some(url) = &args.otlp_endpoint
        && let Err(err) = coder_eval::export::otlp::check_endpoint(url)
    {
        return usage(format!("--otlp-endpoint: {err}"));
    }
    // `--upstream` is checked before any agent starts (a bad URL would fail every task).
    if let Some(url) = &args.upstream {
        if let Err(err) = coder_eval::gateway::check_upstream(url) {
            return usage(format!("--upstream: {err}"));
        }
        if args.isolate_network {
            return usage(format!(
                "--upstream {url} with --isolate-network: the gateway runs inside the \
                 loopback-only network namespace and cannot reach the upstream; drop one"
            ));
        }
    }
    let mut resume_dir = None;
    if let Some(dir) = args.resume.clone() {
        match resume::reread(args, dir)? {
            // A shard's folder: its shard run again into it keeps what it finished.
            resume::Resumed::Shard(args) => return Ok(run_as(args, None)?),
            resume::Resumed::Run(stored, dir) => (args, resume_dir) = (stored, Some(dir)),
        }
    }
    // The price table is read and checked before any agent starts (after `--resume`
    // took its run's own flags).
    let price_table = match &args.price_table {
        Some(path) => match coder_eval::gateway::PriceTable::load(path) {
            Ok(table) => Some(table),
            Err(err) => return usage(err),
        },
        None => None,
    };
    let inside = isolated().or_else(usage)?;
    let may_reexec = !inside && !shard::Mode::runs_nothing(&mode);
    if args.isolate_network && may_reexec {
        return Ok(reexec_isolated()?);
    }
    let loaded = load::load(&args)?;
    if let Some(url) = &args.upstream
        && load::needs_network_namespace(&loaded.tasks)
    {
        return usage(format!(
            "--upstream {url}: a task sets sandbox.network_enabled: false, so the run goes \
             into a loopback-only network namespace where the gateway cannot reach the \
             upstream"
        ));
    }
    if load::needs_network_namespace(&loaded.tasks) && may_reexec {
        eprintln!(
            "note: a task sets sandbox.network_enabled: false: the whole run goes into a \
             network namespace with loopback only (as --isolate-network)"
        );
        return Ok(reexec_isolated()?);
    }
    let (runtime, cancel_rx) = execute::listen_for_signals()?;
    // Printed once (after a re-run inside the namespace, by that run only).
    for (path, notes) in &loaded.warnings {
        super::check::print_warnings(path, notes);
    }
    if args.gateway {
        for note in coder_eval::gateway::pass_env_notes(&args.pass_env, args.upstream.is_some()) {
            eprintln!("{note}");
        }
    }
    let harnesses = load::harnesses(&args, loaded.layered)?;
    let out_dir = options::out_dir(&args);
    let progress = std::sync::Arc::new(coder_eval::run::progress::Progress::for_stdout());
    let mut options = options::run_options(
        &args,
        loaded.experiment.as_ref(),
        &out_dir,
        progress.clone(),
    );
    options.price_table = price_table;
    let criteria = loaded.criteria();
    let mut units = units::prepare(loaded.resolved, &loaded.skip, &harnesses, &options)?;
    // A plan, a merge or a shard of a plan takes over here.
    let lock = match &mode {
        Some(mode) => hand_over(
            mode,
            &mut units,
            &options,
            &criteria,
            &runtime,
            &mut resume_dir,
        )?,
        None => None,
    };
    let _lock = folder::claim(&out_dir, lock, resume_dir.is_some())?;
    // The units' content ids (as a plan's), so that --resume can tell a changed unit.
    let unit_ids = match &mode {
        None => units.content_ids(&options, &runtime),
        Some(_) => Default::default(),
    };
    let write_invocation = mode.is_none() || resume_dir.is_none();
    let (prepared, kept) = resume::keep_finished(
        units.prepared,
        resume_dir.as_deref(),
        unit_ids,
        &out_dir,
        write_invocation,
    )?;
    let mut skipped = units::record_skipped(&units.skip, &out_dir);
    skipped.extend(kept);
    if prepared.is_empty() && skipped.is_empty() && units.agentless.is_empty() {
        return usage(
            "no harness to run on (is any CLI installed? `scripts/setup.sh` installs them)",
        );
    }
    let print = |r: &TaskResult| progress.println(&row(r));
    let results = execute::execute(
        &runtime,
        execute::Work {
            prepared,
            done: skipped,
            agentless: &units.agentless,
        },
        &options,
        args.jobs,
        cancel_rx,
        print,
        &out_dir,
    )?;
    summary::finish(&args, &results, &options, &criteria, mode.is_some())
}

/// A plan, a merge or a shard of a plan (`mode`) takes over the prepared `units`: it
/// ends the run here with its exit code, or goes on (a shard, maybe resuming its folder:
/// `resume_dir`) and returns the shard folder's lock, held until the run ends.
fn hand_over(
    mode: &shard::Mode,
    units: &mut units::Units,
    options: &coder_eval::run::RunOptions,
    criteria: &coder_eval::run::thresholds::CriteriaByTask,
    runtime: &tokio::runtime::Runtime,
    resume_dir: &mut Option<PathBuf>,
) -> Flow<Option<std::fs::File>> {
    let apply = shard::apply(
        mode,
        &mut units.prepared,
        &mut units.skip,
        &mut units.agentless,
        options,
        criteria,
        runtime,
    )?;
    match apply {
        shard::Next::Stop(code) => Err(Halt::Exit(code)),
        shard::Next::Run { resume, lock } => {
            *resume_dir = resume_dir.take().or(resume);
            Ok(lock)
        }
    }
}

/// `--shard`, `--shard-from-env` and `--shard-count` without `--plan` are refused.
fn refuse_lone_shard_flags(args: &RunArgs) -> Flow<()> {
    let lone: Vec<&str> = [
        (args.shard.is_some(), "--shard"),
        (args.shard_from_env, "--shard-from-env"),
        (args.shard_count.is_some(), "--shard-count"),
    ]
    .into_iter()
    .filter_map(|(given, flag)| given.then_some(flag))
    .collect();
    if !lone.is_empty() {
        return usage(format!(
            "{} runs a shard of a plan: give --plan PLAN.json too (make one with \
             `coder-eval plan`)",
            lone.join(", ")
        ));
    }
    Ok(())
}

/// `--retry-initial-delay`: seconds, a finite number from 0 to
/// [`coder_eval::run::retry::MAX_INITIAL_DELAY_SECS`].
fn parse_delay(text: &str) -> Result<f64, String> {
    let max = coder_eval::run::retry::MAX_INITIAL_DELAY_SECS;
    match text.trim().parse::<f64>() {
        Ok(secs) if secs.is_finite() && (0.0..=max).contains(&secs) => Ok(secs),
        Ok(_) => Err(format!("{text}: expected seconds from 0 to {max}")),
        Err(_) => Err(format!("{text}: not a number of seconds")),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn control_characters_are_shown_not_acted_on() {
        assert_eq!(
            super::output::printable("red \u{1b}[31mX\u{7}\nend"),
            "red \\u{1b}[31mX\\u{7}\\nend"
        );
        assert_eq!(super::output::printable("café ✓"), "café ✓");
    }
}
