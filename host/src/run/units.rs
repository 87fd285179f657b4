//! A suite's units made ready to run: every resolved task checked on its harnesses
//! ([`prepare()`]), one unit per replicate ([`prepare_units`]), their result folders
//! checked against each other ([`check`]), and a unit's identity and lineage written
//! into its result ([`stamp`]). The suite's shapes (resolved tasks, unit ids, the
//! reserved folder names) are `suite`'s; preparing is this module's, above it.

use super::{PrepareError, Prepared, RunOptions, prepare};
use crate::results::TaskResult;
use crate::suite::experiment::ResolvedTask;
use crate::suite::folders::{RUN_FOLDER_FILES, reserved};
use std::collections::HashMap;
use std::path::PathBuf;

/// Writes a unit's identity and lineage into its result. `retry_given` is the command
/// line's `--infra-retries` / `--retry-initial-delay`: they beat the task's `retry:` block
/// at run time (and change no unit, so they are not in the merge), and the lineage says
/// so (source `cli`).
pub fn stamp(result: &mut TaskResult, p: &Prepared, retry_given: &crate::task::retry::RetrySpec) {
    result.variant = p.unit.variant.clone();
    result.replicate = p.unit.replicate;
    result.replicates = p.unit.replicates;
    let Some(lineage) = &p.lineage else {
        result.lineage = None;
        return;
    };
    let mut lineage = lineage.as_ref().clone();
    let given = [
        (
            "retry.max_retries",
            retry_given.max_retries.map(serde_json::Value::from),
            "--infra-retries",
        ),
        (
            "retry.initial_delay",
            retry_given.initial_delay.map(serde_json::Value::from),
            "--retry-initial-delay",
        ),
    ];
    for (path, value, flag) in given {
        if let Some(value) = value {
            lineage.insert(
                path.into(),
                crate::results::LineageEntry {
                    value,
                    source: crate::results::Layer::Cli,
                    source_detail: Some(flag.into()),
                },
            );
        }
    }
    result.lineage = serde_json::to_value(&lineage).ok();
}

/// Checks every resolved task on its harnesses (`run::prepare`) and makes its units:
/// one per replicate, each with its own result folder. Two units with one folder are a
/// [`PrepareError::Duplicate`]; a folder inside another's, or a reserved folder name in a
/// task id, is refused too ([`check`]).
pub fn prepare_units(
    resolved: Vec<ResolvedTask>,
    harnesses: &[String],
    options: &RunOptions,
) -> Result<Vec<Prepared>, PrepareError> {
    let mut units: Vec<Prepared> = Vec::new();
    let mut seen = std::collections::HashMap::new();
    for r in resolved {
        let source = harness_source(&r);
        let prepared = prepare(vec![r.task], harnesses, options).map_err(|e| match e {
            // The harness name came from a layer above the task file: name that layer.
            PrepareError::Harness {
                task,
                harness,
                from,
                source: why,
            } if harnesses.is_empty() => PrepareError::Harness {
                task,
                harness,
                from: source.clone().unwrap_or(from),
                source: why,
            },
            other => other,
        })?;
        for p in prepared {
            for index in 0..r.repeats {
                let mut unit = p.clone();
                unit.unit.variant = r.variant.clone();
                unit.unit.replicate = (r.repeats > 1).then_some(index);
                unit.unit.replicates = (r.repeats > 1).then_some(r.repeats);
                unit.lineage = r.lineage.clone();
                if let Some(first) = seen.insert(unit.unit.clone(), unit.task.path.clone()) {
                    return Err(PrepareError::Duplicate {
                        first: first.display().to_string(),
                        second: unit.task.path.display().to_string(),
                        task: unit.unit.task_id.clone(),
                        harness: match &unit.unit.variant {
                            Some(v) => format!("{} (variant {v})", unit.harness),
                            None => unit.harness.clone(),
                        },
                    });
                }
                units.push(unit);
            }
        }
    }
    check(&units)?;
    Ok(units)
}

/// Where a resolved task's harness name (`agent.type`) came from when a layer above its
/// task file set it: `EXPERIMENT: variants[<id>].agent.type`, `EXPERIMENT:
/// defaults.agent.type` or the `-D` argument; `None` when the task file's own.
fn harness_source(r: &ResolvedTask) -> Option<String> {
    use crate::results::Layer;
    let entry = r.lineage.as_ref()?.get("agent.type")?;
    let experiment = || {
        r.experiment
            .as_ref()
            .map_or_else(|| "the experiment".to_string(), |p| p.display().to_string())
    };
    match entry.source {
        Layer::Variant => Some(format!(
            "{}: variants[{}].agent.type",
            experiment(),
            r.variant.as_deref().unwrap_or("?")
        )),
        Layer::ExperimentDefaults => Some(format!("{}: defaults.agent.type", experiment())),
        Layer::Cli => Some(
            entry
                .source_detail
                .clone()
                .unwrap_or_else(|| "-D agent.type".into()),
        ),
        _ => None,
    }
}

/// Refuses a run whose units' result folders collide: its first folder named as a file
/// of the run's folder ([`RUN_FOLDER_FILES`]), a task id part below the first
/// that is a reserved folder name ([`PrepareError::ReservedId`]), or one unit's folder
/// inside another's ([`PrepareError::NestedFolder`]), naming both task files. (Equal
/// folders are [`PrepareError::Duplicate`], found as the units are made.)
pub fn check(units: &[Prepared]) -> Result<(), PrepareError> {
    let harnesses: Vec<&str> = units.iter().map(|u| u.harness.as_str()).collect();
    for u in units {
        let dir = u.unit.rel_dir();
        let top = dir
            .iter()
            .next()
            .and_then(|c| c.to_str())
            .unwrap_or_default();
        if RUN_FOLDER_FILES.contains(&top) {
            return Err(PrepareError::ReservedId {
                task: u.unit.task_id.clone(),
                file: u.task.path.display().to_string(),
                part: top.to_string(),
                why: "a file of the run's folder".to_string(),
            });
        }
        for part in u.unit.task_id.split('/').skip(1) {
            if let Some(why) = reserved(part, &harnesses) {
                return Err(PrepareError::ReservedId {
                    task: u.unit.task_id.clone(),
                    file: u.task.path.display().to_string(),
                    part: part.to_string(),
                    why: why.to_string(),
                });
            }
        }
    }
    let folders: HashMap<PathBuf, &Prepared> =
        units.iter().map(|u| (u.unit.rel_dir(), u)).collect();
    for u in units {
        let dir = u.unit.rel_dir();
        for up in dir.ancestors().skip(1) {
            if let Some(outer) = folders.get(up) {
                return Err(PrepareError::NestedFolder {
                    inner: u.unit.task_id.clone(),
                    inner_file: u.task.path.display().to_string(),
                    outer: outer.unit.task_id.clone(),
                    outer_file: outer.task.path.display().to_string(),
                    outer_dir: up.display().to_string(),
                });
            }
        }
    }
    Ok(())
}
