//! `coder-eval plan`, `coder-eval run --plan plan.json --shard K/N` and `coder-eval
//! merge`: one suite on many machines. Each resolves the run's arguments as `run` does
//! (the plan's stored arguments for a shard and a merge), then [`apply`] takes over right
//! after the units are prepared: it writes the plan, keeps a shard's units, or gathers
//! the shards' results.

use super::{RunArgs, StoredRun};
use coder_eval::components::BUILTIN_HARNESSES;
use coder_eval::exit_codes;
use coder_eval::run::{Prepared, RunOptions};
use coder_eval::suite::UnitId;
use coder_eval::suite::plan::{Plan, PlanUnit, UnitInputs, UnitKind, digest_dir, digest_file};
use coder_eval::suite::shard::{Shard, ShardRecord};
use coder_eval::task::Task;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

mod k8s;
mod merge;
mod outcome;
use merge::merge_into;
pub(super) use outcome::exit_code;
use outcome::unstartable;

/// Resolves a suite's units (task × variant × replicate × harness) and writes them with
/// their content ids to a plan (`plan_version: 1`), for `run --plan plan.json --shard
/// K/N` on other machines and `merge` after. Takes `run`'s arguments; `--out` names the
/// plan file. Exit code: 0 written, 2 bad invocation or task file.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  coder-eval plan tasks/hello_date/task.yaml --repeats 6 --out plan.json
  coder-eval plan --experiment examples/experiments/hello-date.yaml tasks/hello_date/task.yaml --out plan.json
  coder-eval plan tasks/hello_date/task.yaml --repeats 6 --out plan.json \\
      --emit k8s-job --image registry.example/coder-eval:0.1.0 --shards 3 > job.yaml")]
pub struct PlanArgs {
    #[command(flatten)]
    run: RunArgs,
    /// Also print a manifest for a batch system: `k8s-job` = a Kubernetes Indexed Job
    /// (batch/v1) whose pods each run one shard.
    #[arg(long, value_enum, value_name = "KIND")]
    emit: Option<Emit>,
    #[command(flatten)]
    k8s: k8s::K8sArgs,
}

/// What `plan --emit` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(super) enum Emit {
    /// A Kubernetes Indexed Job (batch/v1).
    K8sJob,
}

/// Puts the results of a plan's shard folders together into one run folder: `run.json`,
/// `junit.xml`, `report.html` and the statistics as one unsharded run writes them. Refuses
/// a shard folder of another plan; a unit found twice is kept once (the first folder
/// given), a unit found nowhere is listed as missing (and counted so in the statistics).
/// Run it where the plan's task files are. Exit code: 0 every unit passed, 1 some failed
/// or are missing, 2 bad invocation, plan or shard folder.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  coder-eval merge runs/shard-0-of-3 runs/shard-1-of-3 runs/shard-2-of-3 --plan plan.json --out runs/merged")]
pub struct MergeArgs {
    /// The shard folders (`run --plan … --shard K/N --out DIR`).
    #[arg(required = true)]
    dirs: Vec<PathBuf>,
    /// The plan the shards ran.
    #[arg(long, value_name = "PLAN.json")]
    plan: PathBuf,
    /// The merged run's folder: new, empty, or an earlier merge of this plan (its units
    /// are kept; a unit a shard folder given also holds is taken from that folder).
    #[arg(long, value_name = "RUN_DIR")]
    out: PathBuf,
    /// Merge even when a shard is still running into its folder (its unfinished units
    /// are then listed as missing); without it such a merge is refused.
    #[arg(long)]
    force: bool,
}

/// What a run resolved for beyond running its units.
pub(super) enum Mode {
    /// `coder-eval plan`: write the plan, maybe print a manifest, run nothing.
    Plan {
        out: PathBuf,
        args: Vec<String>,
        emit: Option<Emit>,
        k8s: k8s::K8sArgs,
    },
    /// `run --plan --shard`: run this shard's units only.
    Shard {
        plan: Plan,
        plan_file: PathBuf,
        shard: Shard,
    },
    /// `coder-eval merge`: gather the shards' results, run nothing.
    Merge {
        plan: Plan,
        plan_file: PathBuf,
        dirs: Vec<PathBuf>,
        out: PathBuf,
    },
}

impl Mode {
    /// Whether this mode runs no agent (no network namespace needed).
    pub(super) fn runs_nothing(mode: &Option<Mode>) -> bool {
        matches!(mode, Some(Mode::Plan { .. } | Mode::Merge { .. }))
    }
}

/// After the units are prepared: go on running (a shard, maybe resuming its folder) or
/// stop with an exit code.
pub(super) enum Next {
    /// `lock`: the shard folder's lock, held until the run ends.
    Run {
        resume: Option<PathBuf>,
        lock: Option<std::fs::File>,
    },
    Stop(i32),
}

/// The plan's flags of `run` that name no run option ( `--out` of `plan` is the plan
/// file), left out of the arguments the plan stores.
const PLAN_ONLY_FLAGS: &[&str] = &[
    "--out",
    "--emit",
    "--image",
    "--shards",
    "--parallelism",
    "--backoff-limit-per-index",
    "--results-claim",
    "--job-name",
];

/// The options of `run` that `run --plan` takes anew (they change no unit).
const SHARD_MAY_GIVE: &[&str] = &[
    "--shard",
    "--shard-from-env",
    "--shard-count",
    "--out",
    "--jobs",
    "--isolate-network",
    "--pid-namespace",
    "--no-pid-namespace",
    "--cli",
    "--infra-retries",
    "--retry-initial-delay",
    "--otlp-endpoint",
];

/// `coder-eval plan`.
pub fn plan(mut args: PlanArgs) -> Result<i32, Box<dyn std::error::Error>> {
    let refused: Vec<&str> = [
        (args.run.resume.is_some(), "--resume"),
        (args.run.plan.is_some(), "--plan"),
        (args.run.shard.is_some(), "--shard"),
        (args.run.shard_from_env, "--shard-from-env"),
    ]
    .into_iter()
    .filter_map(|(given, flag)| given.then_some(flag))
    .collect();
    if !refused.is_empty() {
        eprintln!(
            "error: plan resolves a new suite: {} cannot be given",
            refused.join(", ")
        );
        return Ok(exit_codes::USAGE);
    }
    let Some(out) = args.run.out.take() else {
        // The shards and merge read the plan file: a manifest alone is of no use.
        eprintln!("error: plan needs --out PLAN.json");
        return Ok(exit_codes::USAGE);
    };
    if let Some(problem) = not_a_plan(&out) {
        eprintln!("error: --out {}: {problem}", out.display());
        return Ok(exit_codes::USAGE);
    }
    if args.emit == Some(Emit::K8sJob) && args.k8s.image.is_none() {
        eprintln!(
            "error: --emit k8s-job needs --image (the image holding coder-eval, its CLIs and the task files)"
        );
        return Ok(exit_codes::USAGE);
    }
    let manifest_only = manifest_flags(std::env::args().skip(2));
    if args.emit.is_none() && !manifest_only.is_empty() {
        eprintln!(
            "error: {} shape(s) the manifest that --emit k8s-job prints: give --emit k8s-job \
             too, or leave them out",
            manifest_only.join(", ")
        );
        return Ok(exit_codes::USAGE);
    }
    let cwd = std::env::current_dir().unwrap_or_default();
    let stored = stored_args(std::env::args().skip(2))
        .into_iter()
        .map(|a| relative_arg(&a, &cwd))
        .collect();
    let mode = Mode::Plan {
        out,
        args: stored,
        emit: args.emit,
        k8s: args.k8s,
    };
    super::run_as(args.run, Some(mode))
}

/// Why `plan --out` must not write `out`, if it must not: `out` exists and is not a plan
/// file (a task file, a run's `run.json`, a folder). A plan file is replaced.
fn not_a_plan(out: &Path) -> Option<String> {
    let meta = std::fs::symlink_metadata(out).ok()?;
    if !meta.is_file() {
        return Some("exists and is not a file: give the plan file's path".into());
    }
    match std::fs::read(out) {
        Ok(bytes) if coder_eval::suite::plan::is_plan_file(&bytes) => None,
        Ok(_) => Some(
            "exists and is not a plan file (no plan_version, plan_id and units): not \
             overwritten; give a new path, or remove it first"
                .into(),
        ),
        Err(e) => Some(format!("exists and cannot be read ({e}): not overwritten")),
    }
}

/// The manifest's flags among `args` (the plan-only flags but `--out` and `--emit`).
fn manifest_flags(args: impl Iterator<Item = String>) -> Vec<&'static str> {
    let args: Vec<String> = args.collect();
    PLAN_ONLY_FLAGS
        .iter()
        .filter(|f| !matches!(**f, "--out" | "--emit"))
        .filter(|f| {
            args.iter()
                .any(|a| a == *f || a.starts_with(&format!("{f}=")))
        })
        .copied()
        .collect()
}

/// `arg` (a path, or `--flag=PATH`) with an absolute path inside `cwd` made relative to
/// it: a plan names no path of its checkout (`plan $PWD/tasks/a/task.yaml` runs in a
/// checkout mounted elsewhere). Anything else is kept as given.
fn relative_arg(arg: &str, cwd: &Path) -> String {
    let (flag, value) = match arg.split_once('=') {
        Some((flag, value)) if flag.starts_with("--") => (Some(flag), value),
        _ => (None, arg),
    };
    let path = Path::new(value);
    if !path.is_absolute() {
        return arg.to_string();
    }
    let real_cwd = cwd.canonicalize().unwrap_or_else(|_| cwd.to_path_buf());
    let rel = path
        .strip_prefix(cwd)
        .or_else(|_| path.strip_prefix(&real_cwd))
        .ok()
        .filter(|r| !r.as_os_str().is_empty());
    match (rel, flag) {
        (Some(rel), Some(flag)) => format!("{flag}={}", rel.display()),
        (Some(rel), None) => rel.display().to_string(),
        (None, _) => arg.to_string(),
    }
}

/// `args` without the plan-only flags and their values.
fn stored_args(args: impl Iterator<Item = String>) -> Vec<String> {
    let mut kept = Vec::new();
    let mut skip_value = false;
    for arg in args {
        if std::mem::take(&mut skip_value) {
            continue;
        }
        if PLAN_ONLY_FLAGS.contains(&arg.as_str()) {
            skip_value = true;
        } else if !PLAN_ONLY_FLAGS
            .iter()
            .any(|f| arg.starts_with(&format!("{f}=")))
        {
            kept.push(arg);
        }
    }
    kept
}

/// `coder-eval merge`.
pub fn merge(args: MergeArgs) -> Result<i32, Box<dyn std::error::Error>> {
    // A shard still running (its folder's lock held) has not finished its units yet.
    for dir in &args.dirs {
        if let Some(holder) = coder_eval::suite::lock::holder(dir) {
            if !args.force {
                eprintln!(
                    "error: {}: a shard is still running into this folder ({holder}): merge \
                     once it has ended, or give --force to merge what it has finished (its \
                     other units are listed as missing)",
                    dir.display()
                );
                return Ok(exit_codes::USAGE);
            }
            eprintln!(
                "warning: {}: a shard is still running into this folder ({holder}): merging \
                 what it has finished (--force)",
                dir.display()
            );
        }
    }
    let plan = match Plan::read(&args.plan) {
        Ok(p) => p,
        Err(err) => {
            super::super::print_error(&err);
            return Ok(exit_codes::USAGE);
        }
    };
    let run = match parse_stored(&plan) {
        Ok(run) => run,
        Err(code) => return Ok(code),
    };
    let mode = Mode::Merge {
        plan,
        plan_file: args.plan,
        dirs: args.dirs,
        out: args.out,
    };
    super::run_as(run, Some(mode))
}

/// The plan's stored `run` arguments, parsed.
fn parse_stored(plan: &Plan) -> Result<RunArgs, i32> {
    match <StoredRun as clap::Parser>::try_parse_from(
        std::iter::once("run".to_string()).chain(plan.args.iter().cloned()),
    ) {
        Ok(stored) => Ok(stored.args),
        Err(err) => {
            eprintln!("error: the plan's arguments do not parse: {err}");
            Err(exit_codes::USAGE)
        }
    }
}

/// `run --plan P --shard K/N`: the plan's arguments in place of `args`' and the shard.
/// `args` may give anew what does not change a unit ([`SHARD_MAY_GIVE`]: where results
/// go, how many run at once, isolation, the CLI binary, infrastructure retries, a trace
/// collector); anything else given is refused (it would be silently the plan's).
pub(super) fn shard_mode(args: RunArgs) -> Result<(RunArgs, Mode), i32> {
    let plan_file = args.plan.clone().unwrap_or_default();
    let given: Vec<&str> = [
        (!args.tasks.is_empty(), "task files"),
        (args.experiment.is_some(), "--experiment"),
        (args.repeats.is_some(), "--repeats"),
        (!args.harness.is_empty(), "--harness"),
        (!args.define.is_empty(), "-D"),
        (args.model.is_some(), "--model"),
        (args.scripted_model.is_some(), "--scripted-model"),
        (args.components.is_some(), "--components"),
        (!args.component.is_empty(), "--component"),
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
    .collect();
    if !given.is_empty() {
        eprintln!(
            "error: run --plan runs the plan's units as planned: {} cannot be given with it \
             (make a new plan to change them; with --plan only {} may be given)",
            given.join(", "),
            SHARD_MAY_GIVE.join(", ")
        );
        return Err(exit_codes::USAGE);
    }
    let shard = match (&args.shard, args.shard_from_env) {
        (Some(text), false) => Shard::parse(text),
        (None, true) => Shard::from_env(args.shard_count, |name| std::env::var(name).ok()),
        _ => {
            eprintln!("error: run --plan needs --shard K/N or --shard-from-env");
            return Err(exit_codes::USAGE);
        }
    };
    let shard = match shard {
        Ok(s) => s,
        Err(err) => {
            super::super::print_error(&err);
            return Err(exit_codes::USAGE);
        }
    };
    let plan = match Plan::read(&plan_file) {
        Ok(p) => p,
        Err(err) => {
            super::super::print_error(&err);
            return Err(exit_codes::USAGE);
        }
    };
    let mut run = parse_stored(&plan)?;
    run.out = Some(args.out.clone().unwrap_or_else(|| {
        PathBuf::from("runs").join(format!("shard-{}-of-{}", shard.index, shard.count))
    }));
    run.isolate_network |= args.isolate_network;
    if args.pid_namespace || args.no_pid_namespace {
        (run.pid_namespace, run.no_pid_namespace) = (args.pid_namespace, args.no_pid_namespace);
    }
    if args.jobs != 1 {
        run.jobs = args.jobs;
    }
    // A CLI binary of another version changes the units' ids: refused as a changed plan.
    run.cli = args.cli.or(run.cli);
    run.infra_retries = args.infra_retries.or(run.infra_retries);
    run.retry_initial_delay = args.retry_initial_delay.or(run.retry_initial_delay);
    run.otlp_endpoint = args.otlp_endpoint.or(run.otlp_endpoint);
    Ok((
        run,
        Mode::Shard {
            plan,
            plan_file,
            shard,
        },
    ))
}

/// The units as resolved here (run order: skipped, agentless, then on harnesses), with
/// their inputs and ids.
async fn plan_units(
    prepared: &[Prepared],
    skip: &[(Task, UnitId)],
    agentless: &[Task],
    options: &RunOptions,
) -> Result<Vec<PlanUnit>, Box<dyn std::error::Error>> {
    let mut folders: HashMap<PathBuf, String> = HashMap::new();
    let mut folder_digest = |task: &Task| -> Result<String, Box<dyn std::error::Error>> {
        let dir = task
            .path
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
            .to_path_buf();
        if let Some(d) = folders.get(&dir) {
            return Ok(d.clone());
        }
        let d = digest_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        folders.insert(dir, d.clone());
        Ok(d)
    };
    let reads = |task: &Task| -> Result<_, Box<dyn std::error::Error>> {
        coder_eval::suite::plan::task_reads(task)
            .map_err(|e| format!("{}: {e}", task.path.display()).into())
    };
    let settings = serde_json::json!({
        "native_limits": options.native_limits,
        "pass_env": options.pass_env,
        "judge_env": options.judge_env,
    });
    let resolved = |unit: &UnitId, kind: UnitKind, lineage: serde_json::Value| {
        serde_json::json!({
            "task_id": unit.task_id,
            "variant": unit.variant,
            "harness": unit.harness,
            "kind": kind,
            "lineage": lineage,
            "settings": settings,
        })
    };
    let version = env!("CARGO_PKG_VERSION").to_string();
    // Relative to the folder the plan is made in (its arguments are), so that a plan
    // names no path of this checkout.
    let cwd = std::env::current_dir().unwrap_or_default();
    let make = |kind: UnitKind, unit: &UnitId, task: &Task, inputs: UnitInputs| PlanUnit {
        id: inputs.id(),
        kind,
        unit: unit.clone(),
        result_dir: unit.rel_dir().display().to_string(),
        task_file: task
            .path
            .strip_prefix(&cwd)
            .map_or_else(|_| task.path.clone(), Path::to_path_buf),
        inputs,
    };
    let mut units = Vec::new();
    for (task, unit) in skip {
        let inputs = UnitInputs {
            resolved: resolved(unit, UnitKind::Skipped, serde_json::Value::Null),
            task_files: folder_digest(task)?,
            task_reads: reads(task)?,
            component: None,
            scripted_model: None,
            cli_version: None,
            coder_eval_version: version.clone(),
            replicate: unit.replicate,
        };
        units.push(make(UnitKind::Skipped, unit, task, inputs));
    }
    for task in agentless {
        let unit = agentless_unit(task);
        let inputs = UnitInputs {
            resolved: resolved(&unit, UnitKind::Agentless, serde_json::Value::Null),
            task_files: folder_digest(task)?,
            task_reads: reads(task)?,
            component: None,
            scripted_model: None,
            cli_version: None,
            coder_eval_version: version.clone(),
            replicate: None,
        };
        units.push(make(UnitKind::Agentless, &unit, task, inputs));
    }
    let mut components: HashMap<String, Option<String>> = HashMap::new();
    // One look-up per harness, not per unit.
    let mut versions: HashMap<String, Option<String>> = HashMap::new();
    for p in prepared {
        let component = match components.get(&p.harness) {
            Some(c) => c.clone(),
            None => {
                let c = match options.components.file_for(&p.harness) {
                    Some(path) => {
                        Some(digest_file(&path).map_err(|e| format!("{}: {e}", path.display()))?)
                    }
                    None => BUILTIN_HARNESSES
                        .iter()
                        .find(|h| h.name == p.harness)
                        .map(|h| coder_eval::suite::plan::hex(&sha2_digest(h.wasm))),
                };
                components.insert(p.harness.clone(), c.clone());
                c
            }
        };
        let script = match options
            .script_override
            .clone()
            .or(p.task.agent.scripted_model.clone())
        {
            Some(path) => Some(digest_file(&path).map_err(|e| format!("{}: {e}", path.display()))?),
            None => None,
        };
        let lineage = unit_lineage(p.lineage.as_deref());
        let inputs = UnitInputs {
            resolved: resolved(&p.unit, UnitKind::Agent, lineage),
            task_files: folder_digest(&p.task)?,
            task_reads: reads(&p.task)?,
            component,
            scripted_model: script,
            cli_version: match versions.get(&p.harness) {
                Some(v) => v.clone(),
                None => {
                    let v = cli_version(&p.harness, options).await;
                    versions.insert(p.harness.clone(), v.clone());
                    v
                }
            },
            coder_eval_version: version.clone(),
            replicate: p.unit.replicate,
        };
        units.push(make(UnitKind::Agent, &p.unit, &p.task, inputs));
    }
    Ok(units)
}

fn sha2_digest(bytes: &[u8]) -> Vec<u8> {
    use sha2::Digest;
    sha2::Sha256::digest(bytes).to_vec()
}

/// The `--version` line of the CLI `harness` runs (`--cli`, else a built-in harness's
/// program where it is installed); `None` when none is found.
async fn cli_version(harness: &str, options: &RunOptions) -> Option<String> {
    let program = BUILTIN_HARNESSES
        .iter()
        .find(|h| h.name == harness)
        .map(|h| h.program);
    let path = match (&options.cli_override, program) {
        (Some(path), _) => path.clone(),
        (None, Some(program)) => coder_eval::run::locate::find_cli(program, None).ok()?,
        (None, None) => return None,
    };
    coder_eval::run::locate::cli_version(&path).await
}

/// Each unit's content id as a plan gives it (result folder → id), for a plain run's
/// `invocation.json` (`--resume` runs again a unit whose id changed). One that cannot be
/// computed (an unreadable file in a task folder) is a warning and no ids: resuming then
/// keeps complete units as they are.
pub(super) fn unit_ids(
    prepared: &[Prepared],
    skip: &[(Task, UnitId)],
    agentless: &[Task],
    options: &RunOptions,
    runtime: &tokio::runtime::Runtime,
) -> std::collections::BTreeMap<String, String> {
    match runtime.block_on(plan_units(prepared, skip, agentless, options)) {
        Ok(units) => units.into_iter().map(|u| (u.result_dir, u.id)).collect(),
        Err(err) => {
            eprintln!(
                "warning: the units' content ids could not be computed ({err}): `run --resume` \
                 of this run will not notice a changed task"
            );
            Default::default()
        }
    }
}

/// The lineage a unit's id hashes: the resolved task's, without `repeats` (how many
/// replicates run is not what one replicate is: raising `repeats:` in an experiment
/// keeps the ids of the replicates that ran, as `--repeats` does; the replicate index
/// is hashed on its own). `null` without one.
fn unit_lineage(lineage: Option<&coder_eval::results::Lineage>) -> serde_json::Value {
    let Some(lineage) = lineage else {
        return serde_json::Value::Null;
    };
    let mut lineage = lineage.clone();
    lineage.remove("repeats");
    serde_json::to_value(&lineage).unwrap_or(serde_json::Value::Null)
}

/// The unit of an agentless task (`agent.type: none`): it runs once, on no harness.
fn agentless_unit(task: &Task) -> UnitId {
    UnitId {
        variant: None,
        task_id: task.task_id.clone(),
        harness: coder_eval::run::NO_AGENT.to_string(),
        replicate: None,
    }
}

/// Takes over after the units are prepared (see the module docs).
#[allow(clippy::too_many_arguments)]
pub(super) fn apply(
    mode: &Mode,
    prepared: &mut Vec<Prepared>,
    skip: &mut Vec<(Task, UnitId)>,
    agentless: &mut Vec<Task>,
    options: &RunOptions,
    criteria: &coder_eval::run::thresholds::CriteriaByTask,
    runtime: &tokio::runtime::Runtime,
) -> Result<Next, Box<dyn std::error::Error>> {
    match mode {
        Mode::Plan {
            out,
            args,
            emit,
            k8s,
        } => {
            let units = runtime.block_on(plan_units(prepared, skip, agentless, options))?;
            let plan = Plan::new(args.clone(), units);
            if *emit == Some(Emit::K8sJob) {
                let bytes = serde_json::to_vec_pretty(&plan)?.len() + 1;
                if let Some(problem) = k8s::too_big_for_configmap(bytes) {
                    eprintln!("error: --emit k8s-job: {problem}; nothing written");
                    return Ok(Next::Stop(exit_codes::USAGE));
                }
            }
            let folder = out
                .parent()
                .filter(|d| !d.as_os_str().is_empty())
                .unwrap_or(Path::new("."));
            if !folder.is_dir() {
                eprintln!(
                    "error: --out {}: the folder {} does not exist (create it, or give another --out)",
                    out.display(),
                    folder.display()
                );
                return Ok(Next::Stop(exit_codes::USAGE));
            }
            plan.write(out)
                .map_err(|e| format!("{}: {e}", out.display()))?;
            eprintln!(
                "plan {}: {} unit(s) written to {}",
                plan.plan_id,
                plan.units.len(),
                out.display()
            );
            if *emit == Some(Emit::K8sJob) {
                if let Some(n) = k8s.shards.filter(|n| *n as usize > plan.units.len()) {
                    eprintln!(
                        "warning: --shards {n} is more than the plan's {} unit(s): {} pod(s) \
                         will run no unit",
                        plan.units.len(),
                        n as usize - plan.units.len()
                    );
                }
                let manifest = k8s::job(&plan, k8s)?;
                super::super::print_stdout(&manifest);
            }
            Ok(Next::Stop(exit_codes::OK))
        }
        Mode::Shard {
            plan,
            plan_file,
            shard,
        } => {
            let here = runtime.block_on(plan_units(prepared, skip, agentless, options))?;
            if let Some(problem) = changed(plan, plan_file, &here) {
                eprintln!("error: {problem}");
                return Ok(Next::Stop(exit_codes::USAGE));
            }
            let mine: Vec<&PlanUnit> = plan.units.iter().filter(|u| shard.owns(&u.id)).collect();
            let owned = |unit: &UnitId| mine.iter().any(|u| u.unit == *unit);
            prepared.retain(|p| owned(&p.unit));
            skip.retain(|(_, u)| owned(u));
            agentless.retain(|t| owned(&agentless_unit(t)));
            let dir = &options.out_dir;
            let record = ShardRecord {
                plan_id: plan.plan_id.clone(),
                shard: *shard,
                units: mine.iter().map(|u| u.id.clone()).collect(),
            };
            if let Some(problem) = unstartable(prepared, options) {
                eprintln!(
                    "error: shard {}: {problem}; a configuration error (every retry would fail \
                     the same way): exit {}",
                    shard.label(),
                    exit_codes::USAGE
                );
                return Ok(Next::Stop(exit_codes::USAGE));
            }
            // One process at a time per shard folder: a second one is refused, not
            // interleaved. The lock is the kernel's (flock): it goes with the process, so a
            // shard retried after a crash or a SIGKILL takes it again.
            let lock = match coder_eval::suite::shard::lock_folder(dir) {
                Ok(lock) => lock,
                Err(err) => {
                    super::super::print_error(&err);
                    return Ok(Next::Stop(exit_codes::USAGE));
                }
            };
            // A shard run again into its own folder (a retried pod) keeps what it finished.
            let mut resume = None;
            if !dir.join(coder_eval::suite::shard::SHARD_FILE).exists()
                && let Some(marker) = coder_eval::suite::shard::run_folder_marker(dir)
            {
                eprintln!(
                    "error: {} holds a run that is not a shard (it has {marker}, no shard.json): \
                     give a new or empty folder as --out",
                    dir.display()
                );
                return Ok(Next::Stop(exit_codes::USAGE));
            }
            if dir.join(coder_eval::suite::shard::SHARD_FILE).exists() {
                match ShardRecord::read(dir) {
                    Ok(old) if old == record => resume = Some(std::path::absolute(dir)?),
                    // Same plan and shard label, other units: `merge` wrote it (as 0/1).
                    Ok(old) if old.plan_id == record.plan_id && old.shard == record.shard => {
                        eprintln!(
                            "error: {} is a merged folder of plan {} ({} unit(s) merged), not \
                             shard {}'s folder: run the shard into another --out and merge that \
                             into it",
                            dir.display(),
                            old.plan_id,
                            old.units.len(),
                            shard.label()
                        );
                        return Ok(Next::Stop(exit_codes::USAGE));
                    }
                    Ok(old) => {
                        eprintln!(
                            "error: {} holds shard {} of plan {}, not shard {} of plan {}: give \
                             another --out",
                            dir.display(),
                            old.shard.label(),
                            old.plan_id,
                            shard.label(),
                            plan.plan_id
                        );
                        return Ok(Next::Stop(exit_codes::USAGE));
                    }
                    Err(err) => {
                        super::super::print_error(&err);
                        return Ok(Next::Stop(exit_codes::USAGE));
                    }
                }
            }
            std::fs::create_dir_all(dir)
                .and_then(|()| record.write(dir))
                .map_err(|e| format!("{}: {e}", dir.display()))?;
            eprintln!(
                "shard {} of plan {}: {} of {} unit(s); results in {}",
                shard.label(),
                plan.plan_id,
                mine.len(),
                plan.units.len(),
                dir.display()
            );
            if mine.is_empty() {
                return Ok(Next::Stop(exit_codes::OK));
            }
            Ok(Next::Run {
                resume,
                lock: Some(lock),
            })
        }
        Mode::Merge {
            plan,
            plan_file,
            dirs,
            out,
        } => merge_into(plan, plan_file, dirs, out, criteria, options).map(Next::Stop),
    }
}

/// Why this machine's units are not the plan's, if they are not.
fn changed(plan: &Plan, plan_file: &Path, here: &[PlanUnit]) -> Option<String> {
    for u in here {
        let Some(planned) = plan.unit(&u.unit) else {
            return Some(format!(
                "unit {} resolves here but is not in the plan {} (make a new plan)",
                u.unit.label(),
                plan_file.display()
            ));
        };
        if planned.id != u.id {
            return Some(format!(
                "unit {} is not the one planned in {}: {} changed since (id {} in the plan, {} \
                 here); make a new plan or run where the plan was made",
                u.unit.label(),
                plan_file.display(),
                planned.inputs.differences(&u.inputs).join(", "),
                planned.id,
                u.id
            ));
        }
    }
    plan.units
        .iter()
        .find(|p| !here.iter().any(|u| u.unit == p.unit))
        .map(|p| {
            format!(
                "unit {} of the plan {} does not resolve here (task file {} changed or missing?)",
                p.unit.label(),
                plan_file.display(),
                p.task_file.display()
            )
        })
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_manifest_flags_are_found_in_either_spelling() {
        let args = ["t.yaml", "--image=img", "--out", "p.json", "--shards", "3"];
        assert_eq!(
            super::manifest_flags(args.iter().map(|s| s.to_string())),
            vec!["--image", "--shards"]
        );
        let plain = ["t.yaml", "--out", "p.json", "--emit", "k8s-job"];
        assert!(super::manifest_flags(plain.iter().map(|s| s.to_string())).is_empty());
    }

    #[test]
    fn absolute_paths_inside_the_plan_folder_are_stored_relative_to_it() {
        let cwd = std::path::Path::new("/w/repo");
        let rel = |a: &str| super::relative_arg(a, cwd);
        assert_eq!(rel("/w/repo/tasks/a/task.yaml"), "tasks/a/task.yaml");
        assert_eq!(
            rel("--experiment=/w/repo/examples/e.yaml"),
            "--experiment=examples/e.yaml"
        );
        // Outside the folder, or no path: as given.
        assert_eq!(rel("/other/t.yaml"), "/other/t.yaml");
        assert_eq!(rel("/w/repo2/t.yaml"), "/w/repo2/t.yaml");
        assert_eq!(rel("--repeats"), "--repeats");
        assert_eq!(rel("-Dx=/w/repo/y"), "-Dx=/w/repo/y");
    }

    #[test]
    fn the_stored_arguments_leave_out_the_plan_file_and_the_manifest_flags() {
        let args = [
            "--experiment",
            "e.yaml",
            "--out",
            "plan.json",
            "t.yaml",
            "--emit=k8s-job",
            "--image",
            "img",
            "--repeats",
            "3",
        ];
        assert_eq!(
            super::stored_args(args.iter().map(|s| s.to_string())),
            vec!["--experiment", "e.yaml", "t.yaml", "--repeats", "3"]
        );
    }
}
