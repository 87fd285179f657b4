//! `coder-eval run`.

use coder_eval::components::{BUILTIN_HARNESSES, ComponentSource, parse_override};
use coder_eval::exit_codes;
use coder_eval::results::{TaskResult, TaskStatus};
use coder_eval::run::{RunOptions, locate, run_all};
use coder_eval::task::Task;
use std::path::PathBuf;

mod isolate;
mod output;
mod shard;
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
    /// too.
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
    #[arg(long, value_name = "URL", requires = "gateway")]
    upstream: Option<String>,
    /// With `--gateway`: keep request and response bodies in the call records (secrets
    /// redacted; a response kept up to 1 MiB).
    #[arg(long, requires = "gateway")]
    gateway_bodies: bool,
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
fn run_as(
    mut args: RunArgs,
    mut mode: Option<shard::Mode>,
) -> Result<i32, Box<dyn std::error::Error>> {
    if args.plan.is_none() {
        let lone: Vec<&str> = [
            (args.shard.is_some(), "--shard"),
            (args.shard_from_env, "--shard-from-env"),
            (args.shard_count.is_some(), "--shard-count"),
        ]
        .into_iter()
        .filter_map(|(given, flag)| given.then_some(flag))
        .collect();
        if !lone.is_empty() {
            eprintln!(
                "error: {} runs a shard of a plan: give --plan PLAN.json too (make one with \
                 `coder-eval plan`)",
                lone.join(", ")
            );
            return Ok(exit_codes::USAGE);
        }
    }
    if args.plan.is_some() {
        match shard::shard_mode(args) {
            Ok((stored, m)) => (args, mode) = (stored, Some(m)),
            Err(code) => return Ok(code),
        }
    }
    if let Some(url) = &args.otlp_endpoint
        && let Err(err) = coder_eval::export::otlp::check_endpoint(url)
    {
        eprintln!("error: --otlp-endpoint: {err}");
        return Ok(exit_codes::USAGE);
    }
    let mut resume_dir = None;
    if let Some(dir) = args.resume.clone() {
        let ignored = resume_ignores(&args);
        if !ignored.is_empty() {
            eprintln!(
                "error: --resume finishes a run with its own options: {} cannot be given with \
                 it (start a new run to change them)",
                ignored.join(", ")
            );
            return Ok(exit_codes::USAGE);
        }
        let invocation = coder_eval::suite::resume::Invocation::read(&dir)?;
        let dir = std::path::absolute(&dir)?;
        if let Some(note) = invocation.enter(&dir)? {
            eprintln!("note: {note}");
        }
        let given = args;
        let stored = <StoredRun as clap::Parser>::try_parse_from(
            std::iter::once("run".to_string()).chain(invocation.args),
        )?;
        args = stored.args;
        args.out = Some(dir.clone());
        // What changes no unit may be given anew (`resume_ignores` refused the rest).
        args.isolate_network |= given.isolate_network;
        if given.jobs != 1 {
            args.jobs = given.jobs;
        }
        if given.pid_namespace || given.no_pid_namespace {
            (args.pid_namespace, args.no_pid_namespace) =
                (given.pid_namespace, given.no_pid_namespace);
        }
        args.infra_retries = given.infra_retries.or(args.infra_retries);
        args.retry_initial_delay = given.retry_initial_delay.or(args.retry_initial_delay);
        args.otlp_endpoint = given.otlp_endpoint.or(args.otlp_endpoint);
        if args.plan.is_some() {
            // A shard's folder: its shard run again into it keeps what it finished.
            return run_as(args, None);
        }
        resume_dir = Some(dir);
    }
    let inside = match isolated() {
        Ok(inside) => inside,
        Err(message) => {
            eprintln!("error: {message}");
            return Ok(exit_codes::USAGE);
        }
    };
    if args.isolate_network && !inside && !shard::Mode::runs_nothing(&mode) {
        return reexec_isolated();
    }
    let select = coder_eval::task::dataset::Selection {
        split: args.split.clone(),
        sample: args.sample,
        sample_per_stratum: args.sample_per_stratum,
    };
    for dir in &args.criteria {
        if let Err(err) = coder_eval::grading::plugins::register_dir(dir) {
            super::print_error(&err);
            return Ok(exit_codes::USAGE);
        }
    }
    let experiment = match &args.experiment {
        Some(path) => match coder_eval::suite::experiment::Experiment::load(path) {
            Ok(e) => Some(e),
            Err(err) => {
                super::print_error(&err);
                return Ok(exit_codes::USAGE);
            }
        },
        None => None,
    };
    let overrides = coder_eval::suite::experiment::Overrides {
        set: args.define.clone(),
        model: args.model.clone(),
        harness: None,
        repeats: args.repeats,
        scripted_model: args.scripted_model.clone(),
    };
    let layered = experiment.is_some() || overrides.sets_fields();
    let mut overrides = overrides;
    if layered && !args.harness.is_empty() {
        if args.harness.len() > 1 || args.harness[0] == "all" {
            eprintln!(
                "error: with --experiment, -D or --model, --harness names one harness (the \
                 command line's agent.type); compare harnesses with variants"
            );
            return Ok(exit_codes::USAGE);
        }
        overrides.harness = Some(args.harness[0].clone());
    }
    if let Some(e) = &experiment {
        for note in overrides.replaced_in(e) {
            eprintln!("note: {note}");
        }
    }
    let mut tasks = Vec::new();
    let mut resolved = Vec::new();
    let mut warnings = Vec::new();
    for path in &args.tasks {
        match coder_eval::suite::experiment::resolve_file(
            path,
            &select,
            experiment.as_ref(),
            &overrides,
        ) {
            Ok((loaded, notes)) => {
                warnings.push((path.clone(), notes));
                tasks.extend(loaded.iter().map(|r| r.task.clone()));
                resolved.extend(loaded);
            }
            Err(err) => {
                super::print_error(&err);
                return Ok(exit_codes::USAGE);
            }
        }
    }
    let selected = |t: &Task| {
        (args.tags.is_empty() || t.tags.iter().any(|tag| args.tags.contains(tag)))
            && !t.tags.iter().any(|tag| args.exclude_tags.contains(tag))
    };
    let given = tasks.len();
    tasks.retain(selected);
    if tasks.is_empty() {
        eprintln!(
            "error: none of the {given} tasks is selected by --tags / --exclude-tags / --split"
        );
        return Ok(exit_codes::USAGE);
    }
    resolved.retain(|r| selected(&r.task));
    let (skip, resolved): (Vec<_>, Vec<_>) = resolved
        .into_iter()
        .partition(|r| r.task.skip && !args.include_skipped);
    let tasks: Vec<Task> = resolved.iter().map(|r| r.task.clone()).collect();
    // A docker task's container is sealed by itself (network none); a tempdir task needs
    // the whole run in a namespace.
    if tasks.iter().any(|t| {
        t.sandbox.network_enabled == Some(false)
            && t.sandbox.driver == coder_eval::task::sandbox::Driver::Tempdir
    }) && !inside
        && !shard::Mode::runs_nothing(&mode)
    {
        eprintln!(
            "note: a task sets sandbox.network_enabled: false: the whole run goes into a \
             network namespace with loopback only (as --isolate-network)"
        );
        return reexec_isolated();
    }
    // SIGINT, SIGTERM and SIGHUP are handled from here on (in the run that runs the
    // tasks, not in a process that only re-runs itself in a network namespace; before any
    // process starts):
    // the first stops every running CLI and shell step and the run writes what was
    // recorded, the second kills them at once (`coder_eval::interrupt`).
    let runtime = tokio::runtime::Runtime::new()?;
    let (cancel_tx, cancel_rx) = tokio::sync::watch::channel(false);
    {
        let _context = runtime.enter();
        coder_eval::interrupt::listen(cancel_tx)?;
    }
    // Printed once (after a re-run inside the namespace, by that run only).
    for (path, notes) in &warnings {
        super::check::print_warnings(path, notes);
    }
    let harnesses: Vec<String> = if layered {
        Vec::new()
    } else if args.harness.iter().any(|h| h == "all") {
        let installed = installed_harnesses(args.components.as_deref());
        if installed.is_empty() {
            eprintln!(
                "error: --harness all: no harness's CLI is installed (looked in {} and on \
                 PATH); install the pinned CLIs with scripts/setup.sh, or set \
                 CODER_EVAL_HARNESSES to a folder holding their node_modules",
                coder_eval::run::locate::harnesses_dir()
                    .join("node_modules/.bin")
                    .display()
            );
            return Ok(exit_codes::USAGE);
        }
        installed
    } else {
        args.harness.clone()
    };
    let out_dir = args
        .out
        .unwrap_or_else(|| PathBuf::from("runs").join(timestamp()));
    let mut options = RunOptions::new(out_dir.clone());
    options.components = ComponentSource {
        dir: args.components,
        overrides: args.component.into_iter().collect(),
    };
    options.cli_override = args.cli;
    options.script_override = args.scripted_model;
    options.native_limits = !args.no_native_limits;
    options.pass_env = args.pass_env;
    options.gateway = args.gateway;
    options.upstream = args.upstream;
    options.gateway_bodies = args.gateway_bodies;
    options.judge_env = args.judge_env.clone();
    options.experiment = experiment
        .as_ref()
        .map(|e| coder_eval::results::ExperimentRecord {
            experiment_id: e.experiment_id.clone(),
            description: e.description.clone(),
            file: std::path::absolute(&e.path)
                .unwrap_or_else(|_| e.path.clone())
                .display()
                .to_string(),
            variants: e.variants.iter().map(|v| v.variant_id.clone()).collect(),
        });
    options.pid_namespace = args.pid_namespace || !args.no_pid_namespace;
    // Above each task file's `retry:` block.
    options.retry_given.max_retries = args.infra_retries;
    options.retry_given.initial_delay = args.retry_initial_delay;
    let progress = std::sync::Arc::new(coder_eval::run::progress::Progress::for_stdout());
    options.progress = Some(progress.clone());
    let criteria: coder_eval::run::thresholds::CriteriaByTask = tasks
        .iter()
        .map(|t| (t.task_id.clone(), t.success_criteria.clone()))
        .collect();
    // Agentless tasks (`agent.type: none`) run on no harness: apart, before the others.
    let (agentless, resolved): (Vec<_>, Vec<_>) = resolved
        .into_iter()
        .partition(|r| r.task.agent.harness.as_deref() == Some(coder_eval::run::NO_AGENT));
    let mut agentless: Vec<Task> = agentless.into_iter().map(|r| r.task).collect();
    let mut prepared = if resolved.is_empty() {
        Vec::new()
    } else {
        match coder_eval::suite::prepare_units(resolved, &harnesses, &options) {
            Ok(p) => p,
            Err(err) => {
                super::print_error(&err);
                return Ok(exit_codes::USAGE);
            }
        }
    };
    // A skipped task is recorded on the harnesses it would have run on; nothing starts.
    let mut skip_units: Vec<(Task, coder_eval::suite::UnitId)> = skip
        .iter()
        .flat_map(|r| {
            let names: Vec<String> = if harnesses.is_empty() {
                vec![
                    r.task
                        .agent
                        .harness
                        .clone()
                        .unwrap_or_else(|| "none".into()),
                ]
            } else {
                harnesses.clone()
            };
            names.into_iter().flat_map(move |h| {
                (0..r.repeats).map(move |i| {
                    (
                        r.task.clone(),
                        coder_eval::suite::UnitId {
                            variant: r.variant.clone(),
                            task_id: r.task.task_id.clone(),
                            harness: h.clone(),
                            replicate: (r.repeats > 1).then_some(i),
                        },
                    )
                })
            })
        })
        .collect();
    // A plan, a merge or a shard of a plan takes over here.
    let mut _shard_lock = None;
    if let Some(mode) = &mode {
        let apply = shard::apply(
            mode,
            &mut prepared,
            &mut skip_units,
            &mut agentless,
            &options,
            &criteria,
            &runtime,
        )?;
        match apply {
            shard::Next::Stop(code) => return Ok(code),
            shard::Next::Run { resume, lock } => {
                resume_dir = resume_dir.or(resume);
                _shard_lock = lock;
            }
        }
    }
    if let Err(err) = std::fs::create_dir_all(&out_dir) {
        eprintln!("error: {}: {err}", out_dir.display());
        return Ok(exit_codes::USAGE);
    }
    // One process at a time per run folder, as per shard folder (a second `run --out` or
    // `--resume` into it would interleave).
    if _shard_lock.is_none() {
        match coder_eval::suite::lock::lock_run_folder(&out_dir) {
            Ok(lock) => _shard_lock = Some(lock),
            Err(err) => {
                super::print_error(&err);
                return Ok(exit_codes::USAGE);
            }
        }
    }
    // Only once the folder is this run's (locked), and not when the run keeps the earlier
    // units (`--resume`, a shard run again into its folder).
    if resume_dir.is_none() && out_dir.join("run.json").exists() {
        eprintln!(
            "note: {} already holds a run; run.json, junit.xml and report.html will list this \
             run's tasks only (the folders of earlier tasks stay, a task run again is replaced)",
            out_dir.display()
        );
    }
    // The units' content ids (as a plan's), so that --resume can tell a changed unit.
    let unit_ids = match &mode {
        None => shard::unit_ids(&prepared, &skip_units, &agentless, &options, &runtime),
        Some(_) => Default::default(),
    };
    // What --resume reads; a resumed run keeps the original (with the ids of now).
    let invocation = coder_eval::suite::resume::Invocation {
        cwd: std::env::current_dir()?,
        args: std::env::args().skip(2).collect(),
        unit_ids: Default::default(),
    };
    let invocation = match &resume_dir {
        Some(dir) => coder_eval::suite::resume::Invocation::read(dir).unwrap_or(invocation),
        None => invocation,
    };
    // Resuming: units with a complete task.json are kept, as they are, unless their id
    // changed since.
    let mut kept = Vec::new();
    let prepared = match &resume_dir {
        None => prepared,
        Some(dir) => {
            let split = coder_eval::suite::resume::split(
                dir,
                prepared,
                |p| &p.unit,
                &invocation.unit_ids,
                &unit_ids,
            );
            for line in &split.changed {
                eprintln!("note: {line}");
            }
            kept = split.kept;
            eprintln!(
                "resuming {}: {} unit(s) complete and kept, {} to run{}",
                dir.display(),
                kept.len(),
                split.todo.len(),
                match split.changed.len() {
                    0 => String::new(),
                    n => format!(" ({n} of them changed since they ran)"),
                }
            );
            split.todo
        }
    };
    if mode.is_none() || resume_dir.is_none() {
        coder_eval::suite::resume::Invocation {
            unit_ids,
            ..invocation
        }
        .write(&out_dir)?;
    }
    let mut skipped: Vec<TaskResult> = skip_units
        .iter()
        .map(|(t, unit)| coder_eval::run::record_skipped(t, unit, &out_dir))
        .collect();
    skipped.extend(kept);
    if prepared.is_empty() && skipped.is_empty() && agentless.is_empty() {
        eprintln!(
            "error: no harness to run on (is any CLI installed? `scripts/setup.sh` installs them)"
        );
        return Ok(exit_codes::USAGE);
    }
    let results = runtime.block_on(async {
        if prepared
            .iter()
            .any(|p| p.task.sandbox.driver == coder_eval::task::sandbox::Driver::Docker)
        {
            remove_leftover_containers().await;
        }
        let mut done = skipped;
        for task in &agentless {
            done.push(coder_eval::run::run_agentless(task, &options).await);
        }
        let print = |r: &TaskResult| progress.println(&row(r));
        run_all(prepared, done, &options, args.jobs, cancel_rx, print).await
    });
    let results = match results {
        Ok(results) => results,
        // Results that cannot be written (a full disk) are an infrastructure failure, not
        // a bad invocation: a shard is retried, not failed for good.
        Err(err) => {
            eprintln!(
                "error: {}: the run's results could not be written: {err}",
                out_dir.display()
            );
            return Ok(exit_codes::INFRA);
        }
    };
    if let Some(signal) = coder_eval::interrupt::raised() {
        eprintln!(
            "interrupted ({}): every task's result and run.json are written; results in {}",
            coder_eval::interrupt::name(signal),
            out_dir.display()
        );
        return Ok(coder_eval::interrupt::exit_code(signal));
    }
    let failed = results
        .iter()
        .filter(|r| !matches!(r.status, TaskStatus::Success | TaskStatus::Skipped))
        .count();
    let skipped = results
        .iter()
        .filter(|r| r.status == TaskStatus::Skipped)
        .count();
    print_statistics(&out_dir);
    if let Some(url) = &args.otlp_endpoint
        && super::export::otlp(&out_dir, url, options.components.dir.clone())? != exit_codes::OK
    {
        eprintln!("warning: not every trace reached {url} (the run's results are unchanged)");
    }
    let gates = coder_eval::run::thresholds::suite_verdicts(&results, &criteria);
    for g in &gates {
        print_line(&coder_eval::run::thresholds::summary_line(g));
    }
    let gates_failed = gates.iter().filter(|g| !g.passed).count();
    let gate_note = match gates_failed {
        0 if gates.is_empty() => String::new(),
        0 => format!("; suite thresholds met ({})", gates.len()),
        n => format!("; {n} of {} suite threshold group(s) missed", gates.len()),
    };
    eprintln!(
        "{} passed, {} failed{}{gate_note}; results in {}",
        results.len() - failed - skipped,
        failed,
        if skipped > 0 {
            format!(", {skipped} skipped")
        } else {
            String::new()
        },
        out_dir.display()
    );
    if mode.is_some() {
        return Ok(shard::exit_code(&results));
    }
    Ok(if failed == 0 && gates_failed == 0 {
        exit_codes::OK
    } else {
        exit_codes::FAILED
    })
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

/// The options given with `--resume` that the resumed run's own options would override.
fn resume_ignores(args: &RunArgs) -> Vec<&'static str> {
    [
        (!args.tasks.is_empty(), "task files"),
        (args.out.is_some(), "--out"),
        (args.experiment.is_some(), "--experiment"),
        (args.repeats.is_some(), "--repeats"),
        (!args.harness.is_empty(), "--harness"),
        (!args.define.is_empty(), "-D"),
        (args.model.is_some(), "--model"),
        (args.scripted_model.is_some(), "--scripted-model"),
        (args.components.is_some(), "--components"),
        (!args.component.is_empty(), "--component"),
        (args.cli.is_some(), "--cli"),
        (args.no_native_limits, "--no-native-limits"),
        (!args.pass_env.is_empty(), "--pass-env"),
        (!args.judge_env.is_empty(), "--judge-env"),
        (!args.criteria.is_empty(), "--criteria"),
        (!args.tags.is_empty(), "--tags"),
        (!args.exclude_tags.is_empty(), "--exclude-tags"),
        (args.include_skipped, "--include-skipped"),
        (args.split.is_some(), "--split"),
        (args.sample.is_some(), "--sample"),
        (args.sample_per_stratum.is_some(), "--sample-per-stratum"),
    ]
    .into_iter()
    .filter_map(|(given, flag)| given.then_some(flag))
    .collect()
}

/// Built-in harnesses, and those a `--components` folder adds, whose CLI can be found.
fn installed_harnesses(components: Option<&std::path::Path>) -> Vec<String> {
    let added = ComponentSource {
        dir: components.map(PathBuf::from),
        ..Default::default()
    }
    .added_harnesses();
    BUILTIN_HARNESSES
        .iter()
        .filter(|h| locate::is_installed(h.program))
        .map(|h| h.name.to_string())
        .chain(
            added
                .into_iter()
                .filter(|h| h.program.as_deref().is_some_and(locate::is_installed))
                .map(|h| h.name),
        )
        .collect()
}

/// UTC now as `YYYYMMDD-HHMMSS`.
fn timestamp() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Civil from days (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}{month:02}{day:02}-{:02}{:02}{:02}",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Before a run with docker tasks: removes the containers that coder-eval runs killed
/// before they could clean up left behind (labelled with a host pid that is gone), and
/// says how many. A failure is a note: the run goes on.
async fn remove_leftover_containers() {
    use coder_eval::sandbox::docker;
    let removed = match docker::connect().await {
        Ok((client, _)) => docker::remove_leftovers(&client).await,
        Err(e) => Err(e),
    };
    match removed {
        Ok(ids) if ids.is_empty() => {}
        Ok(ids) => eprintln!(
            "note: removed {} container(s) left by earlier coder-eval runs that were killed ({})",
            ids.len(),
            ids.iter()
                .map(|id| &id[..id.len().min(12)])
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Err(e) => eprintln!("note: could not look for containers left by earlier runs: {e}"),
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
