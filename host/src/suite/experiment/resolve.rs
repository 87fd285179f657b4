//! One task file resolved under every variant of an experiment and the command line's
//! overrides ([`resolve_file`]): one [`ResolvedTask`] per task × variant, with each
//! field's lineage.

use super::{
    Experiment, ExperimentError, Layer, LayerInput, Lineage, LineageEntry, Overrides,
    PromptMutation, Variant, merge, relative_lineage,
};
use crate::task::{Task, dataset::Selection};
use serde_yaml_ng::{Mapping, Value};
use std::path::Path;
use std::sync::Arc;

/// Legacy placements of run limits (`agent.max_turns`, `agent.turn_timeout`, top-level
/// `max_turns`, `turn_timeout`, `task_timeout`), moved to `run_limits` within one layer
/// (a value already under `run_limits` stays: the task file as written is checked for
/// conflicting spellings before this). Other layers' values are then merged by their
/// order, as for any field.
fn legacy_limits_moved(layer: &Value) -> Value {
    const LEGACY: &[(&[&str], &str)] = &[
        (&["agent", "max_turns"], "max_turns"),
        (&["agent", "turn_timeout"], "turn_timeout"),
        (&["max_turns"], "max_turns"),
        (&["turn_timeout"], "turn_timeout"),
        (&["task_timeout"], "task_timeout"),
    ];
    let mut out = layer.clone();
    let Value::Mapping(top) = &mut out else {
        return out;
    };
    for (from, to) in LEGACY {
        let taken = match from {
            [key] => top.remove(*key),
            [section, key] => match top.get_mut(*section) {
                Some(Value::Mapping(m)) => m.remove(*key),
                _ => None,
            },
            _ => None,
        };
        let Some(value) = taken else { continue };
        let limits = top
            .entry(Value::String("run_limits".into()))
            .or_insert_with(|| Value::Mapping(Mapping::new()));
        if let Value::Mapping(limits) = limits {
            let key = Value::String((*to).into());
            if !limits.contains_key(&key) {
                limits.insert(key, value);
            }
        }
    }
    out
}

/// A task resolved through the layers: one unit per replicate will run it.
#[derive(Debug, Clone)]
pub struct ResolvedTask {
    pub task: Task,
    /// The variant's id; `None` outside an experiment.
    pub variant: Option<String>,
    /// Replicates (the resolved `repeats`, else 1).
    pub repeats: u32,
    /// `None` when the task file was taken as written (no experiment, no override).
    pub lineage: Option<Arc<Lineage>>,
    /// The experiment file it was resolved under (to name in an error a layer of it
    /// caused); `None` outside an experiment.
    pub experiment: Option<std::path::PathBuf>,
}

/// The tasks of one task file under every variant of `experiment` (or none) and the
/// command line's overrides. Without experiment and without field overrides the file
/// loads as written (its own `repeats`, or `--repeats`).
pub fn resolve_file(
    path: &Path,
    select: &Selection,
    experiment: Option<&Experiment>,
    overrides: &Overrides,
) -> Result<(Vec<ResolvedTask>, Vec<crate::task::LoadNote>), ExperimentError> {
    let resolve_err = |context: String, source| ExperimentError::Resolve {
        task: path.to_path_buf(),
        context,
        source,
    };
    // As written first: errors name the task file's own lines.
    let loaded = Task::load_file_with(path, select).map_err(ExperimentError::Task)?;
    let text = std::fs::read_to_string(path).map_err(|source| {
        resolve_err(
            "reading".into(),
            crate::task::TaskError::Read {
                path: path.to_path_buf(),
                source,
            },
        )
    })?;
    let task_value: Value = serde_yaml_ng::from_str(&text).unwrap_or(Value::Null);
    let own_repeats = task_value.get("repeats").and_then(Value::as_u64);
    let max = u64::from(crate::suite::MAX_REPEATS);
    if own_repeats.is_some_and(|r| r == 0 || r > max)
        || task_value
            .get("repeats")
            .is_some_and(|r| r.as_u64().is_none())
    {
        return Err(ExperimentError::Rule {
            path: path.to_path_buf(),
            message: format!("repeats: must be a whole number from 1 to {max}"),
        });
    }
    let notes = loaded.notes.clone();
    if experiment.is_none() && !overrides.sets_fields() {
        let repeats = overrides
            .repeats
            .or(own_repeats.map(|r| r as u32))
            .unwrap_or(1);
        return Ok((
            loaded
                .tasks
                .into_iter()
                .map(|task| ResolvedTask {
                    task,
                    variant: None,
                    repeats,
                    lineage: None,
                    experiment: None,
                })
                .collect(),
            notes,
        ));
    }
    let (cli, cli_detail) = overrides.layer()?;
    let none = Value::Null;
    let plain = [(None::<&Variant>, &none)];
    let variants: Vec<(Option<&Variant>, &Value)> = match experiment {
        Some(e) => e.variants.iter().map(|v| (Some(v), &e.defaults)).collect(),
        None => plain.to_vec(),
    };
    // Legacy limit keys go to `run_limits` within each layer first, so that a later
    // layer's `run_limits.max_turns` beats the task's `agent.max_turns`.
    let task_value = legacy_limits_moved(&task_value);
    let cli = legacy_limits_moved(&cli);
    let cwd = std::env::current_dir().unwrap_or_default();
    let mut out = Vec::new();
    for (variant, defaults) in variants {
        let empty = Value::Null;
        let defaults = legacy_limits_moved(defaults);
        let overlay = variant.map(|v| legacy_limits_moved(&v.overlay));
        let layers = [
            LayerInput {
                value: &defaults,
                layer: Layer::ExperimentDefaults,
                detail: experiment.map(|e| e.experiment_id.clone()),
                per_path: None,
            },
            LayerInput {
                value: &task_value,
                layer: Layer::Task,
                detail: None,
                per_path: None,
            },
            LayerInput {
                value: overlay.as_ref().unwrap_or(&empty),
                layer: Layer::Variant,
                detail: variant.map(|v| v.variant_id.clone()),
                per_path: None,
            },
            LayerInput {
                value: &cli,
                layer: Layer::Cli,
                detail: None,
                per_path: Some(&cli_detail),
            },
        ];
        let (mut merged, mut lineage) = merge(&layers);
        relative_lineage(
            &mut lineage,
            experiment.map(|e| e.path.parent().unwrap_or(Path::new(""))),
            &cwd,
        );
        let context = match variant {
            Some(v) => format!("variant `{}`", v.variant_id),
            None => "the command line".into(),
        };
        // A later layer's prompt replaces the other spelling of it.
        let prompt_from = |key: &str| lineage.get(key).map(|e| e.source);
        match (
            prompt_from("initial_prompt"),
            prompt_from("initial_prompt_file"),
        ) {
            (Some(a), Some(b)) if a > b => {
                merged.remove("initial_prompt_file");
                lineage.remove("initial_prompt_file");
            }
            (Some(a), Some(b)) if b > a => {
                merged.remove("initial_prompt");
                lineage.remove("initial_prompt");
            }
            _ => {}
        }
        let repeats = match merged.remove("repeats") {
            None => 1,
            Some(v) => match v.as_u64() {
                Some(r) if (1..=max).contains(&r) => r as u32,
                _ => {
                    return Err(ExperimentError::Rule {
                        path: path.to_path_buf(),
                        message: format!(
                            "repeats ({context}): must be a whole number from 1 to {max}"
                        ),
                    });
                }
            },
        };
        let merged_text =
            serde_yaml_ng::to_string(&Value::Mapping(merged)).expect("a YAML value serializes");
        let resolved = Task::parse_file_with(&merged_text, path, select)
            .map_err(|source| resolve_err(context.clone(), source))?;
        let mutations: Vec<&PromptMutation> = experiment
            .map(|e| e.defaults_mutations.iter())
            .into_iter()
            .flatten()
            .chain(variant.map(|v| v.mutations.iter()).into_iter().flatten())
            .collect();
        for mut task in resolved.tasks {
            // The notes of the file as written (their lines are the file's).
            task.load_notes = notes.clone();
            let mut lineage = lineage.clone();
            if !mutations.is_empty() {
                for m in &mutations {
                    task.prompt =
                        m.apply(&task.prompt)
                            .map_err(|message| ExperimentError::Mutation {
                                task: path.to_path_buf(),
                                context: context.clone(),
                                message,
                            })?;
                }
                lineage.insert(
                    "initial_prompt".into(),
                    LineageEntry {
                        value: serde_json::Value::String(task.prompt.clone()),
                        source: Layer::Mutation,
                        source_detail: Some(format!("{} mutation(s)", mutations.len())),
                    },
                );
            }
            out.push(ResolvedTask {
                task,
                variant: variant.map(|v| v.variant_id.clone()),
                repeats,
                lineage: Some(Arc::new(lineage)),
                experiment: experiment.map(|e| e.path.clone()),
            });
        }
    }
    Ok((out, notes))
}
