//! `coder-eval plan`, `coder-eval run --plan plan.json --shard K/N` and `coder-eval
//! merge`: one suite on many machines. Each resolves the run's arguments as `run` does
//! (the plan's stored arguments for a shard and a merge), then [`apply`] takes over right
//! after the units are prepared: it writes the plan, keeps a shard's units, or gathers
//! the shards' results.

use super::RunArgs;
use coder_eval::exit_codes;
use coder_eval::run::{Prepared, RunOptions};
use coder_eval::suite::UnitId;
use coder_eval::suite::plan::{Plan, PlanUnit};
use coder_eval::suite::shard::{Shard, ShardRecord};
use coder_eval::task::Task;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

mod invoke;
mod k8s;
mod merge;
mod outcome;
mod units;
pub(super) use invoke::shard_mode;
pub use invoke::{merge, plan};
use merge::merge_into;
pub(super) use outcome::exit_code;
use outcome::unstartable;
pub(super) use units::unit_ids;
use units::{agentless_unit, plan_units};

/// Resolves a suite's units (task × variant × replicate × harness) and writes them with
/// their content ids to a plan (`plan_version: 2`), for `run --plan plan.json --shard
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
            let absolute = plan.absolute_paths();
            if let Some(first) = absolute.first() {
                eprintln!(
                    "warning: the plan keeps {} absolute path(s) outside the folder it was \
                     made in (e.g. {first}): a shard on another machine or in a pod finds them \
                     only at that same path, else it stops with exit 2. To store them \
                     relative, run `coder-eval plan` from a folder that holds every task and \
                     experiment file (their common parent, the checkout the image has at its \
                     working directory) and name them inside it",
                    absolute.len()
                );
            }
            if *emit == Some(Emit::K8sJob) {
                if let Some(n) = k8s.shards.filter(|n| *n as usize > plan.units.len()) {
                    eprintln!(
                        "warning: --shards {n} is more than the plan's {} unit(s): {} pod(s) \
                         will run no unit",
                        plan.units.len(),
                        n as usize - plan.units.len()
                    );
                }
                let mut secret_vars: Vec<String> = Vec::new();
                for v in options.pass_env.iter().chain(&options.judge_env) {
                    if !secret_vars.contains(v) {
                        secret_vars.push(v.clone());
                    }
                }
                let manifest = k8s::job(&plan, k8s, &secret_vars)?;
                super::super::print_stdout(&manifest);
                for note in k8s::notes(&plan, k8s, out, &secret_vars) {
                    eprintln!("{note}");
                }
            }
            Ok(Next::Stop(exit_codes::OK))
        }
        Mode::Shard {
            plan,
            plan_file,
            shard,
        } => {
            let mine: Vec<&PlanUnit> = plan.units.iter().filter(|u| shard.owns(&u.id)).collect();
            // A set: a plan may hold 100000 units.
            let mine_set: std::collections::HashSet<&UnitId> =
                mine.iter().map(|u| &u.unit).collect();
            let owned = |unit: &UnitId| mine_set.contains(unit);
            // Only this shard's units are checked against the plan (their ids worked out
            // here); the others are another shard's business (the plan's id already
            // vouches for their ids).
            let resolved_here: Vec<UnitId> = prepared
                .iter()
                .map(|p| p.unit.clone())
                .chain(skip.iter().map(|(_, u)| u.clone()))
                .chain(agentless.iter().map(agentless_unit))
                .collect();
            prepared.retain(|p| owned(&p.unit));
            skip.retain(|(_, u)| owned(u));
            agentless.retain(|t| owned(&agentless_unit(t)));
            let here = runtime.block_on(plan_units(prepared, skip, agentless, options))?;
            if let Some(problem) = changed(plan, plan_file, &resolved_here, &here, &mine) {
                eprintln!("error: {problem}");
                return Ok(Next::Stop(exit_codes::USAGE));
            }
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

/// Why this machine's units are not the plan's, if they are not: a unit resolved here
/// (`resolved`: of the task files resolved, every unit) that the plan does not have, one
/// of the shard's units (`here`, with their inputs and ids as worked out here) whose id
/// is not the plan's, or one of the shard's planned units (`mine`) that does not
/// resolve here.
fn changed(
    plan: &Plan,
    plan_file: &Path,
    resolved: &[UnitId],
    here: &[PlanUnit],
    mine: &[&PlanUnit],
) -> Option<String> {
    // Maps, not scans: a plan may hold 100000 units.
    let planned_units: HashMap<&UnitId, &PlanUnit> =
        plan.units.iter().map(|u| (&u.unit, u)).collect();
    if let Some(u) = resolved.iter().find(|u| !planned_units.contains_key(u)) {
        return Some(format!(
            "unit {} resolves here but is not in the plan {} (make a new plan)",
            u.label(),
            plan_file.display()
        ));
    }
    let here_units: std::collections::HashSet<&UnitId> = here.iter().map(|u| &u.unit).collect();
    for u in here {
        let Some(planned) = planned_units.get(&u.unit) else {
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
    mine.iter()
        .find(|p| !here_units.contains(&p.unit))
        .map(|p| {
            format!(
                "unit {} of the plan {} does not resolve here (task file {} changed or missing?)",
                p.unit.label(),
                plan_file.display(),
                p.task_file.display()
            )
        })
}
