//! A plan's units as resolved on this machine: each with its inputs and content id
//! ([`plan_units`]).

use coder_eval::components::BUILTIN_HARNESSES;
use coder_eval::run::{Prepared, RunOptions};
use coder_eval::suite::UnitId;
use coder_eval::suite::plan::{
    IdTemplate, PlanUnit, UnitInputs, UnitKind, digest_dir, digest_file,
};
use coder_eval::task::Task;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The units as resolved here (run order: skipped, agentless, then on harnesses), with
/// their inputs and ids.
pub(super) async fn plan_units(
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
    let mut settings = serde_json::json!({
        "native_limits": options.native_limits,
        "pass_env": options.pass_env,
        "judge_env": options.judge_env,
    });
    // The gateway changes what is counted and held (and `--upstream` what answers), so a
    // gateway unit is never the same unit as a direct one. Only when on: the ids of
    // direct runs stay what they were.
    if options.gateway {
        settings["gateway"] = serde_json::json!({
            "upstream": options.upstream,
            "bodies": options.gateway_bodies,
        });
        // The table's prices (not its path): the same prices are the same unit. Only
        // when given: the ids of gateway runs without one stay what they were.
        if let Some(table) = &options.price_table {
            settings["gateway"]["price_table"] = serde_json::json!(table.models);
        }
    }
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
    // `id`: the unit's id when its group's template made it, else made from `inputs`.
    let make_with =
        |kind: UnitKind, unit: &UnitId, task: &Task, inputs: UnitInputs, id: Option<String>| {
            PlanUnit {
                id: id.unwrap_or_else(|| inputs.id()),
                kind,
                unit: unit.clone(),
                result_dir: unit.rel_dir().display().to_string(),
                task_file: task
                    .path
                    .strip_prefix(&cwd)
                    .map_or_else(|_| task.path.clone(), Path::to_path_buf),
                inputs,
            }
        };
    let make = |kind, unit: &UnitId, task: &Task, inputs| make_with(kind, unit, task, inputs, None);
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
    // The replicates of one task × variant × harness share all their inputs but the
    // replicate index: worked out once per group, not once per replicate (a plan of
    // 10000 replicates hashed the task's files and script 10000 times).
    type GroupKey = (PathBuf, String, Option<String>, String);
    let mut groups: HashMap<GroupKey, (UnitInputs, Option<IdTemplate>)> = HashMap::new();
    for p in prepared {
        let key = (
            p.task.path.clone(),
            p.unit.task_id.clone(),
            p.unit.variant.clone(),
            p.harness.clone(),
        );
        if let Some((shared, template)) = groups.get(&key) {
            let inputs = UnitInputs {
                replicate: p.unit.replicate,
                ..shared.clone()
            };
            let id = template
                .as_ref()
                .zip(p.unit.replicate)
                .map(|(t, r)| t.id(r));
            units.push(make_with(UnitKind::Agent, &p.unit, &p.task, inputs, id));
            continue;
        }
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
        let template = inputs.id_template();
        groups.insert(key, (inputs.clone(), template));
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
        (None, Some(program)) => coder_eval::locate::find_cli(program, None).ok()?,
        (None, None) => return None,
    };
    coder_eval::run::probe::cli_version(&path).await
}

/// Each unit's content id as a plan gives it (result folder → id), for a plain run's
/// `invocation.json` (`--resume` runs again a unit whose id changed). One that cannot be
/// computed (an unreadable file in a task folder) is a warning and no ids: resuming then
/// keeps complete units as they are.
pub(crate) fn unit_ids(
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
pub(super) fn agentless_unit(task: &Task) -> UnitId {
    UnitId {
        variant: None,
        task_id: task.task_id.clone(),
        harness: coder_eval::run::NO_AGENT.to_string(),
        replicate: None,
        replicates: None,
    }
}
