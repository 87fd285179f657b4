//! The run's units: each task × variant × replicate × harness, prepared to run, recorded
//! as skipped, or run on no harness (`agent.type: none`).

use super::{Flow, refused};
use coder_eval::results::TaskResult;
use coder_eval::run::{Prepared, RunOptions};
use coder_eval::suite::UnitId;
use coder_eval::suite::experiment::ResolvedTask;
use coder_eval::task::Task;
use std::collections::BTreeMap;
use std::path::Path;

/// The units of a run, before a plan, a merge or a shard keeps some.
pub(super) struct Units {
    /// The units that start an agent CLI.
    pub(super) prepared: Vec<Prepared>,
    /// Skipped tasks on the harnesses they would have run on.
    pub(super) skip: Vec<(Task, UnitId)>,
    /// Agentless tasks (`agent.type: none`): run apart, before the others.
    pub(super) agentless: Vec<Task>,
}

impl Units {
    /// Each unit's content id (as a plan's) by its result folder.
    pub(super) fn content_ids(
        &self,
        options: &RunOptions,
        runtime: &tokio::runtime::Runtime,
    ) -> BTreeMap<String, String> {
        super::shard::unit_ids(
            &self.prepared,
            &self.skip,
            &self.agentless,
            options,
            runtime,
        )
    }
}

/// Why an agentless task (`agent.type: none`) asked for `repeats` replicates runs once.
fn agentless_repeats_note(task: &Task, repeats: u32) -> String {
    format!(
        "{}: task {} is agent.type: none: it runs once, on no harness (its criteria check a \
         prepared folder, with no agent: replicates would repeat one result), not the {repeats} \
         replicates asked for",
        task.path.display(),
        task.task_id
    )
}

/// Prepares `resolved` on `harnesses` (each task's own when empty); refuses (exit 2, the
/// error printed) a unit that cannot be prepared.
pub(super) fn prepare(
    resolved: Vec<ResolvedTask>,
    skip: &[ResolvedTask],
    harnesses: &[String],
    options: &RunOptions,
) -> Flow<Units> {
    // Agentless tasks (`agent.type: none`) run on no harness: apart, before the others.
    let (agentless, resolved): (Vec<_>, Vec<_>) = resolved
        .into_iter()
        .partition(|r| r.task.agent.harness.as_deref() == Some(coder_eval::run::NO_AGENT));
    // They run once: say so when replicates were asked for (once per task file).
    let mut told = std::collections::BTreeSet::new();
    for r in agentless.iter().filter(|r| r.repeats > 1) {
        if told.insert(r.task.path.clone()) {
            eprintln!("note: {}", agentless_repeats_note(&r.task, r.repeats));
        }
    }
    let agentless: Vec<Task> = agentless.into_iter().map(|r| r.task).collect();
    let prepared = if resolved.is_empty() {
        Vec::new()
    } else {
        match coder_eval::run::prepare_units(resolved, harnesses, options) {
            Ok(p) => p,
            Err(err) => return refused(&err),
        }
    };
    Ok(Units {
        prepared,
        skip: skip_units(skip, harnesses),
        agentless,
    })
}

/// A skipped task is recorded on the harnesses it would have run on; nothing starts.
fn skip_units(skip: &[ResolvedTask], harnesses: &[String]) -> Vec<(Task, UnitId)> {
    skip.iter()
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
                harnesses.to_vec()
            };
            names.into_iter().flat_map(move |h| {
                (0..r.repeats).map(move |i| {
                    (
                        r.task.clone(),
                        UnitId {
                            variant: r.variant.clone(),
                            task_id: r.task.task_id.clone(),
                            harness: h.clone(),
                            replicate: (r.repeats > 1).then_some(i),
                            replicates: (r.repeats > 1).then_some(r.repeats),
                        },
                    )
                })
            })
        })
        .collect()
}

/// The `task.json` of each skipped unit, written under `out_dir`.
pub(super) fn record_skipped(skip: &[(Task, UnitId)], out_dir: &Path) -> Vec<TaskResult> {
    skip.iter()
        .map(|(t, unit)| coder_eval::run::record_skipped(t, unit, out_dir))
        .collect()
}
