//! Experiment files (coder_eval's `ExperimentDefinition`) and the 5-layer merge that
//! resolves each task × variant:
//!
//! built-in default → experiment `defaults` → task file → variant → command line
//! (`-D path.to.field=value`, `--model`, `--harness`, `--repeats`).
//!
//! ```yaml
//! experiment_id: model-comparison        # kebab-case
//! description: Sonnet against Opus
//! defaults:                              # every task, every variant
//!   repeats: 3                           # replicates per task × variant
//!   agent: {type: claude-code, permission_mode: bypassPermissions}
//!   run_limits: {max_turns: 20}
//!   sandbox: {...}                       # any task-file sandbox key
//!   driver: tempdir                      # = sandbox.driver
//!   pre_run: ["git init -q"]             # before the task's own
//!   post_run: ["ls"]                     # after the task's own
//!   prompt_mutations: [{type: prefix, content: "Be brief."}]
//! variants:
//!   - variant_id: sonnet
//!     description: ...
//!     agent: {model: claude-sonnet-4-5, scripted_model: scripts/sonnet.yaml}
//!     run_limits: {max_turns: 10}
//!     driver: docker
//!     repeats: 5
//!     prompt_mutations:                  # or initial_prompt / initial_prompt_file
//!       - {type: suffix, content: "Keep it under 20 lines."}
//!       - {type: replace, pattern: "app.py", replacement: "main.py", regex: false}
//!       - {type: template, variables: {lang: Python}}
//! ```
//!
//! Paths in an experiment (`agent.scripted_model`, `initial_prompt_file`) are relative to
//! the experiment file; on the command line, to the current folder. Each field's merge
//! rule is declared once, in [`MERGE_RULES`]; a field not listed there is replaced by the
//! later layer. The resolved task records per field which layer set it (`lineage` in
//! `task.json`); a field without an entry has its built-in default. coder_eval's
//! `rephrase` mutation (an LLM call) and `simulation`/`template_sources` are refused.

pub use super::merge::{Layer, Lineage, LineageEntry, MERGE_RULES, MergeRule, rule_of};
use super::merge::{LayerInput, merge, set_path};
pub use super::mutation::PromptMutation;
use crate::task::{Task, dataset::Selection};
use serde::Deserialize;
use serde_yaml_ng::{Mapping, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// `defaults:` of an experiment file.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct DefaultsSpec {
    #[serde(default)]
    repeats: Option<u32>,
    #[serde(default)]
    agent: Option<Mapping>,
    #[serde(default)]
    run_limits: Option<Mapping>,
    #[serde(default)]
    sandbox: Option<Mapping>,
    #[serde(default)]
    driver: Option<String>,
    #[serde(default)]
    pre_run: Option<Vec<Value>>,
    #[serde(default)]
    post_run: Option<Vec<Value>>,
    #[serde(default)]
    prompt_mutations: Option<Vec<PromptMutation>>,
}

/// One entry of `variants:`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct VariantSpec {
    variant_id: String,
    #[serde(default)]
    description: String,
    #[serde(default)]
    agent: Option<Mapping>,
    #[serde(default)]
    run_limits: Option<Mapping>,
    #[serde(default)]
    driver: Option<String>,
    #[serde(default)]
    repeats: Option<u32>,
    #[serde(default)]
    prompt_mutations: Option<Vec<PromptMutation>>,
    #[serde(default)]
    initial_prompt: Option<String>,
    #[serde(default)]
    initial_prompt_file: Option<PathBuf>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct ExperimentSpec {
    experiment_id: String,
    #[serde(default)]
    description: String,
    #[serde(default)]
    defaults: Option<DefaultsSpec>,
    variants: Vec<VariantSpec>,
}

/// A loaded experiment: its layers in task-file shape.
#[derive(Debug, Clone)]
pub struct Experiment {
    pub path: PathBuf,
    pub experiment_id: String,
    pub description: String,
    defaults: Value,
    defaults_mutations: Vec<PromptMutation>,
    pub variants: Vec<Variant>,
}

/// A variant: its id and its layer.
#[derive(Debug, Clone)]
pub struct Variant {
    pub variant_id: String,
    pub description: String,
    overlay: Value,
    mutations: Vec<PromptMutation>,
}

/// Why an experiment or an override could not be used. Nothing has run.
#[derive(Debug, thiserror::Error)]
pub enum ExperimentError {
    #[error("{path}: could not read the experiment file")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// YAML or schema error, with its position.
    #[error("{path}:{line}:{column}: {message}")]
    Invalid {
        path: PathBuf,
        line: usize,
        column: usize,
        message: String,
    },
    #[error("{path}: {message}")]
    Rule { path: PathBuf, message: String },
    #[error("-D {arg}: {message}")]
    Override { arg: String, message: String },
    /// The task file, merged with the layers above it, is not a valid task.
    #[error("{task} resolved for {context}")]
    Resolve {
        task: PathBuf,
        context: String,
        #[source]
        source: crate::task::TaskError,
    },
    #[error("{task}: prompt_mutations ({context}): {message}")]
    Mutation {
        task: PathBuf,
        context: String,
        message: String,
    },
}

fn to_mapping(pairs: Vec<(&str, Option<Value>)>) -> Value {
    let mut m = Mapping::new();
    for (k, v) in pairs {
        if let Some(v) = v {
            m.insert(Value::String(k.into()), v);
        }
    }
    Value::Mapping(m)
}

/// A path field of a layer made absolute against `base` (the layer's own folder).
fn absolutize(layer: &mut Value, path: &[&str], base: &Path) {
    let mut at = layer;
    for key in &path[..path.len() - 1] {
        match at.get_mut(*key) {
            Some(next) => at = next,
            None => return,
        }
    }
    if let Some(v) = at.get_mut(path[path.len() - 1])
        && let Some(s) = v.as_str()
    {
        let joined = base.join(s);
        *v = Value::String(
            std::path::absolute(&joined)
                .unwrap_or(joined)
                .display()
                .to_string(),
        );
    }
}

fn absolutize_paths(layer: &mut Value, base: &Path) {
    absolutize(layer, &["agent", "scripted_model"], base);
    absolutize(layer, &["initial_prompt_file"], base);
}

/// `driver: X` → `sandbox: {driver: X}`.
fn with_driver(sandbox: Option<Mapping>, driver: Option<String>) -> Option<Value> {
    let mut sandbox = sandbox.unwrap_or_default();
    if let Some(d) = driver {
        sandbox.insert(Value::String("driver".into()), Value::String(d));
    }
    (!sandbox.is_empty()).then_some(Value::Mapping(sandbox))
}

impl Experiment {
    /// Loads and checks an experiment file.
    pub fn load(path: &Path) -> Result<Experiment, ExperimentError> {
        let text = std::fs::read_to_string(path).map_err(|source| ExperimentError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Experiment::parse(&text, path)
    }

    /// Parses an experiment file's text; `path` names it in errors and anchors paths.
    pub fn parse(text: &str, path: &Path) -> Result<Experiment, ExperimentError> {
        let spec: ExperimentSpec = serde_yaml_ng::from_str(text).map_err(|err| {
            let (line, column) = err.location().map_or((0, 0), |l| (l.line(), l.column()));
            let (line, column, message) =
                crate::task::duplicate_key::place(text, line, column, err.to_string());
            ExperimentError::Invalid {
                path: path.to_path_buf(),
                line,
                column,
                message,
            }
        })?;
        let rule = |message: String| ExperimentError::Rule {
            path: path.to_path_buf(),
            message,
        };
        let kebab = regex::Regex::new("^[a-z0-9]+(-[a-z0-9]+)*$").expect("a valid regex");
        if !kebab.is_match(&spec.experiment_id) {
            return Err(rule(format!(
                "experiment_id `{}` must be kebab-case (e.g. `model-comparison`)",
                spec.experiment_id
            )));
        }
        if spec.variants.is_empty() {
            return Err(rule(
                "variants: an experiment needs at least one variant".into(),
            ));
        }
        let base = path.parent().unwrap_or(Path::new("."));
        let defaults = spec.defaults.unwrap_or_default();
        let check_repeats = |r: Option<u32>, at: &str| match r {
            Some(0) => Err(rule(format!("{at}repeats: must be at least 1"))),
            _ => Ok(()),
        };
        check_repeats(defaults.repeats, "defaults.")?;
        let mut defaults_layer = to_mapping(vec![
            ("repeats", defaults.repeats.map(Value::from)),
            ("agent", defaults.agent.map(Value::Mapping)),
            ("run_limits", defaults.run_limits.map(Value::Mapping)),
            ("sandbox", with_driver(defaults.sandbox, defaults.driver)),
            ("pre_run", defaults.pre_run.map(Value::Sequence)),
            ("post_run", defaults.post_run.map(Value::Sequence)),
        ]);
        check_sections(
            &defaults_layer,
            "defaults",
            path,
            crate::task::compat::key_line(text, &["defaults"]),
        )?;
        absolutize_paths(&mut defaults_layer, base);
        let mut variants: Vec<Variant> = Vec::new();
        for v in spec.variants {
            let at = format!("variants[{}]", v.variant_id);
            if !kebab.is_match(&v.variant_id) && !is_plain_name(&v.variant_id) {
                return Err(rule(format!(
                    "{at}: variant_id must be a name without slashes or spaces (it names a folder)"
                )));
            }
            if variants.iter().any(|w| w.variant_id == v.variant_id) {
                return Err(rule(format!("{at}: variant_id given twice")));
            }
            check_repeats(v.repeats, &format!("{at}."))?;
            let prompts = [
                v.prompt_mutations.is_some(),
                v.initial_prompt.is_some(),
                v.initial_prompt_file.is_some(),
            ];
            if prompts.iter().filter(|b| **b).count() > 1 {
                return Err(rule(format!(
                    "{at}: give one of prompt_mutations, initial_prompt, initial_prompt_file"
                )));
            }
            let mut overlay = to_mapping(vec![
                ("repeats", v.repeats.map(Value::from)),
                ("agent", v.agent.map(Value::Mapping)),
                ("run_limits", v.run_limits.map(Value::Mapping)),
                ("sandbox", with_driver(None, v.driver)),
                ("initial_prompt", v.initial_prompt.map(Value::String)),
                (
                    "initial_prompt_file",
                    v.initial_prompt_file
                        .map(|p| Value::String(p.display().to_string())),
                ),
            ]);
            check_sections(&overlay, &at, path, variant_line(text, &v.variant_id))?;
            absolutize_paths(&mut overlay, base);
            variants.push(Variant {
                variant_id: v.variant_id,
                description: v.description,
                overlay,
                mutations: v.prompt_mutations.unwrap_or_default(),
            });
        }
        Ok(Experiment {
            path: path.to_path_buf(),
            experiment_id: spec.experiment_id,
            description: spec.description,
            defaults: defaults_layer,
            defaults_mutations: defaults.prompt_mutations.unwrap_or_default(),
            variants,
        })
    }
}

/// Each section of a layer read as the task file reads it, so a misspelt key is refused
/// at load, naming the file, the line of the layer (`defaults:` or the variant's
/// `variant_id`) and the key.
fn check_sections(
    layer: &Value,
    at: &str,
    path: &Path,
    line: Option<usize>,
) -> Result<(), ExperimentError> {
    match section_error(layer) {
        Some((key, message)) => Err(ExperimentError::Invalid {
            path: path.to_path_buf(),
            line: line.unwrap_or(0),
            column: 0,
            message: format!("{at}.{key}: {message}"),
        }),
        None => Ok(()),
    }
}

/// The first section of `layer` (`agent`, `run_limits`, `sandbox`) that the task file's
/// reader refuses, and why (e.g. an unknown field).
fn section_error(layer: &Value) -> Option<(&'static str, String)> {
    fn section<T: serde::de::DeserializeOwned>(v: Option<&Value>) -> Result<(), String> {
        match v {
            Some(v) => serde_yaml_ng::from_value::<T>(v.clone())
                .map(|_| ())
                .map_err(|e| e.to_string()),
            None => Ok(()),
        }
    }
    let checks = [
        (
            "agent",
            section::<crate::task::AgentSpec>(layer.get("agent")),
        ),
        (
            "run_limits",
            section::<crate::limits::RunLimitsSpec>(layer.get("run_limits")),
        ),
        (
            "sandbox",
            section::<crate::task::SandboxSpec>(layer.get("sandbox")),
        ),
    ];
    checks
        .into_iter()
        .find_map(|(key, result)| result.err().map(|m| (key, m)))
}

/// The 1-based line of `variant_id: <id>` in the experiment's text.
fn variant_line(text: &str, id: &str) -> Option<usize> {
    text.lines()
        .position(|l| {
            let l = l.trim_start().trim_start_matches("- ").trim();
            l.strip_prefix("variant_id:")
                .is_some_and(|v| v.trim().trim_matches(['"', '\'']) == id)
        })
        .map(|i| i + 1)
}

fn is_plain_name(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with('.')
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// The command-line layer: `-D path=value` (the value read as YAML: `5`, `true`,
/// `[a, b]`, a string otherwise), `--model`, `--harness` (one, in an experiment or with
/// `-D`), `--repeats`.
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    pub set: Vec<String>,
    pub model: Option<String>,
    pub harness: Option<String>,
    pub repeats: Option<u32>,
}

impl Overrides {
    /// Whether any field is set here (else a run without an experiment loads its task
    /// files as written).
    pub fn sets_fields(&self) -> bool {
        !self.set.is_empty() || self.model.is_some() || self.harness.is_some()
    }

    /// The layer, in task-file shape.
    pub fn layer(&self) -> Result<(Value, BTreeMap<String, String>), ExperimentError> {
        let mut layer = Value::Mapping(Mapping::new());
        let mut detail = BTreeMap::new();
        for arg in &self.set {
            let fail = |message: &str| ExperimentError::Override {
                arg: arg.clone(),
                message: message.into(),
            };
            let (path, value) = arg
                .split_once('=')
                .ok_or_else(|| fail("expected path.to.field=value"))?;
            let keys: Vec<&str> = path.split('.').collect();
            if keys.iter().any(|k| k.is_empty()) {
                return Err(fail("an empty key in the path"));
            }
            if !crate::task::compat::KNOWN_TOP_LEVEL.contains(&keys[0]) && keys[0] != "repeats" {
                let hint = crate::task::closest(
                    keys[0],
                    crate::task::compat::KNOWN_TOP_LEVEL.iter().copied(),
                )
                .map(|b| format!(" (did you mean `{b}`?)"))
                .unwrap_or_default();
                return Err(fail(&format!(
                    "`{}` is not a task-file field{hint}",
                    keys[0]
                )));
            }
            let value: Value =
                serde_yaml_ng::from_str(value).unwrap_or_else(|_| Value::String(value.to_string()));
            // Its section alone, read as a task file reads it: a misspelt key is this
            // argument's error, not the task file's.
            let mut alone = Value::Mapping(Mapping::new());
            set_path(&mut alone, &keys, value.clone()).map_err(|m| fail(&m))?;
            if let Some((key, message)) = section_error(&alone) {
                return Err(fail(&format!("{key}: {message}")));
            }
            set_path(&mut layer, &keys, value).map_err(|m| fail(&m))?;
            detail.insert(path.to_string(), format!("-D {arg}"));
        }
        if let Some(model) = &self.model {
            set_path(
                &mut layer,
                &["agent", "model"],
                Value::String(model.clone()),
            )
            .expect("a mapping");
            detail.insert("agent.model".into(), "--model".into());
        }
        if let Some(harness) = &self.harness {
            set_path(
                &mut layer,
                &["agent", "type"],
                Value::String(harness.clone()),
            )
            .expect("a mapping");
            detail.insert("agent.type".into(), "--harness".into());
        }
        if let Some(r) = self.repeats {
            set_path(&mut layer, &["repeats"], Value::from(r)).expect("a mapping");
            detail.insert("repeats".into(), "--repeats".into());
        }
        let cwd = std::env::current_dir().unwrap_or_default();
        absolutize_paths(&mut layer, &cwd);
        Ok((layer, detail))
    }
}

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
    let loaded = Task::load_file_with(path, select)
        .map_err(|source| resolve_err("the task file as written".into(), source))?;
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
    if own_repeats == Some(0)
        || task_value
            .get("repeats")
            .is_some_and(|r| r.as_u64().is_none())
    {
        return Err(ExperimentError::Rule {
            path: path.to_path_buf(),
            message: "repeats: must be a whole number of at least 1".into(),
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
                Some(r) if r >= 1 => r as u32,
                _ => {
                    return Err(ExperimentError::Rule {
                        path: path.to_path_buf(),
                        message: format!(
                            "repeats ({context}): must be a whole number of at least 1"
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
            });
        }
    }
    Ok((out, notes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_experiment_files_are_refused_with_their_reason() {
        let p = Path::new("/x/exp.yaml");
        let e = Experiment::parse("experiment_id: Bad_Id\nvariants: [{variant_id: a}]", p);
        assert!(e.unwrap_err().to_string().contains("kebab-case"));
        let e = Experiment::parse(
            "experiment_id: a\nvariants: [{variant_id: a}, {variant_id: a}]",
            p,
        );
        assert!(e.unwrap_err().to_string().contains("twice"));
        let e = Experiment::parse("experiment_id: a\nvariants: [{variant_id: a, modle: x}]", p);
        let msg = e.unwrap_err().to_string();
        assert!(
            msg.starts_with("/x/exp.yaml:2:") && msg.contains("modle"),
            "{msg}"
        );
        let e = Experiment::parse(
            "experiment_id: a\nvariants: [{variant_id: a, initial_prompt: x, prompt_mutations: []}]",
            p,
        );
        assert!(e.unwrap_err().to_string().contains("give one of"));
        let e = Experiment::parse(
            "experiment_id: a\nvariants:\n  - variant_id: fast\n    run_limits: {max_turnz: 3}",
            p,
        );
        let msg = e.unwrap_err().to_string();
        assert!(
            msg.starts_with("/x/exp.yaml:3:0: variants[fast].run_limits:")
                && msg.contains("max_turnz"),
            "{msg}"
        );
        let e = Overrides {
            set: vec!["run_limit.max_turns=3".into()],
            ..Default::default()
        }
        .layer();
        assert!(
            e.unwrap_err()
                .to_string()
                .contains("did you mean `run_limits`")
        );
        // A misspelt field inside a section is the -D argument's error.
        let e = Overrides {
            set: vec!["run_limits.max_turn=3".into()],
            ..Default::default()
        }
        .layer();
        let msg = e.unwrap_err().to_string();
        assert!(
            msg.starts_with("-D run_limits.max_turn=3: run_limits:") && msg.contains("max_turn"),
            "{msg}"
        );
    }

    #[test]
    fn a_legacy_max_turns_beats_defaults_and_yields_to_the_command_line() {
        let dir = tempfile::tempdir().unwrap();
        let task = dir.path().join("task.yaml");
        std::fs::write(
            &task,
            "task_id: t\ninitial_prompt: hi\nagent: {type: claude-code, max_turns: 4}\nsuccess_criteria: []\n",
        )
        .unwrap();
        let max_turns = |e: Option<&Experiment>, set: &[&str]| {
            let o = Overrides {
                set: set.iter().map(|s| s.to_string()).collect(),
                ..Default::default()
            };
            let (r, _) =
                resolve_file(&task, &Selection::default(), e, &o).unwrap_or_else(|e| panic!("{e}"));
            r[0].task.run_limits.max_turns
        };
        let e = Experiment::parse(
            "experiment_id: x\ndefaults:\n  run_limits: {max_turns: 9}\nvariants: [{variant_id: a}]",
            &dir.path().join("exp.yaml"),
        )
        .unwrap();
        // Task beats defaults; -D beats task; the variant's legacy key maps too.
        assert_eq!(max_turns(Some(&e), &[]), Some(4));
        assert_eq!(max_turns(Some(&e), &["run_limits.max_turns=2"]), Some(2));
        assert_eq!(max_turns(None, &["run_limits.max_turns=2"]), Some(2));
        assert_eq!(max_turns(None, &["agent.max_turns=3"]), Some(3));
    }
}
