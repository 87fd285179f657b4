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
//!
//! The rooms: this file reads an experiment file ([`Experiment::load`]); `overrides` is
//! the command line's layer ([`Overrides`]); `resolve` merges the layers into each task ×
//! variant ([`resolve_file`]); the merge rules are in `suite::merge`.

pub(crate) use super::merge::Layer;
pub use super::merge::Lineage;
pub(crate) use super::merge::LineageEntry;
use super::merge::{LayerInput, merge, set_path};
pub(crate) use super::mutation::PromptMutation;
#[cfg(test)]
pub(crate) use position::MAX_VARIANT_ID;
use serde::Deserialize;
use serde_yaml_ng::{Mapping, Value};
use std::path::{Path, PathBuf};

pub mod every_error;
mod overrides;
mod paths;
mod position;
mod resolve;
#[cfg(test)]
mod tests;

pub use overrides::Overrides;
use paths::{PATH_FIELDS, absolutize_paths, relative_lineage};
use position::{
    VARIANT_ID_RULE, case_twin, case_twin_message, check_sections, is_variant_id, key_positions,
    section_error, shorten, variant_line, variant_lines,
};
pub use resolve::{ResolvedTask, resolve_file};

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
    /// The file's text, to place the errors [`Experiment::refusals`] finds.
    text: String,
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
    /// The task file as written is not a valid task (its own error, as `check` gives it).
    #[error(transparent)]
    Task(crate::task::TaskError),
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

/// `driver: X` → `sandbox: {driver: X}`.
fn with_driver(sandbox: Option<Mapping>, driver: Option<String>) -> Option<Value> {
    let mut sandbox = sandbox.unwrap_or_default();
    if let Some(d) = driver {
        sandbox.insert(Value::String("driver".into()), Value::String(d));
    }
    (!sandbox.is_empty()).then_some(Value::Mapping(sandbox))
}

impl Experiment {
    /// Whether every variant's task gets an `agent.type` from the experiment (its
    /// `defaults` or each variant's layer): then `run --experiment` needs no `--harness`
    /// for a task file without one.
    pub fn sets_agent_type(&self) -> bool {
        let has = |v: &Value| v.get("agent").and_then(|a| a.get("type")).is_some();
        has(&self.defaults)
            || (!self.variants.is_empty() && self.variants.iter().all(|v| has(&v.overlay)))
    }

    /// Loads and checks an experiment file ([`Experiment::parse`], then
    /// [`Experiment::refusals`]): what `run --experiment` and `check` both refuse.
    pub fn load(path: &Path) -> Result<Experiment, ExperimentError> {
        let text = std::fs::read_to_string(path).map_err(|source| ExperimentError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        let experiment = Experiment::parse(&text, path)?;
        experiment.refusals()?;
        Ok(experiment)
    }

    /// What `run` would refuse of this experiment whatever its tasks, found before any
    /// task is read (the one check `run --experiment` and `check` share): a prompt
    /// mutation that cannot apply (a bad regex or replacement), a path a layer sets
    /// (`agent.scripted_model`, `initial_prompt_file`) that is not a file. Errors name the
    /// experiment file and the layer (`defaults` or `variants[<id>]`).
    pub fn refusals(&self) -> Result<(), ExperimentError> {
        let text = self.text.as_str();
        // An error at the `nth` `key:` of the layer starting at line `start` (past line
        // `after`): file, line, column.
        let at_key = |start: Option<usize>, key: &str, after: usize, nth: usize, message| {
            let (line, column) = start
                .and_then(|s| {
                    key_positions(text, s, key)
                        .into_iter()
                        .filter(|(line, _)| *line >= after)
                        .nth(nth)
                })
                .or(start.map(|s| (s, 0)))
                .unwrap_or((0, 0));
            ExperimentError::Invalid {
                path: self.path.clone(),
                line,
                column,
                message,
            }
        };
        let layers = std::iter::once((
            "defaults".to_string(),
            &self.defaults,
            &self.defaults_mutations,
            crate::task::compat::key_line(text, &["defaults"]),
        ))
        .chain(self.variants.iter().map(|v| {
            (
                format!("variants[{}]", v.variant_id),
                &v.overlay,
                &v.mutations,
                variant_line(text, &v.variant_id),
            )
        }));
        for (at, layer, mutations, start) in layers {
            // The i-th mutation's `type:` key, past the layer's `prompt_mutations:`.
            let list = start
                .and_then(|s| key_positions(text, s, "prompt_mutations").first().copied())
                .map_or(0, |(line, _)| line);
            for (i, m) in mutations.iter().enumerate() {
                m.apply("").map_err(|message| {
                    let message = match message.strip_prefix("prompt_mutations: ") {
                        Some(rest) => format!("{at}.prompt_mutations[{i}]: {rest}"),
                        None => format!("{at}.{message}"),
                    };
                    at_key(start, "type", list, i, message)
                })?;
            }
            for field in PATH_FIELDS {
                let mut value = Some(layer);
                for key in field.split('.') {
                    value = value.and_then(|v| v.get(key));
                }
                if let Some(path) = value.and_then(Value::as_str)
                    && !Path::new(path).is_file()
                {
                    let key = field.rsplit('.').next().unwrap_or(field);
                    return Err(at_key(
                        start,
                        key,
                        0,
                        0,
                        format!(
                            "{at}.{field}: {path} is not a file (paths in an experiment are \
                             relative to the experiment file)"
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    /// Parses an experiment file's text; `path` names it in errors and anchors paths.
    pub fn parse(text: &str, path: &Path) -> Result<Experiment, ExperimentError> {
        let spec: ExperimentSpec = serde_yaml_ng::from_str(text).map_err(|err| {
            let (line, column) = err.location().map_or((0, 0), |l| (l.line(), l.column()));
            let (line, column, mut message) =
                crate::task::duplicate_key::place(text, line, column, err.to_string());
            if message.contains("unknown variant `rephrase`") {
                message = format!(
                    "prompt_mutations: coder_eval's `rephrase` mutation (an LLM rewrite of \
                     the prompt) is not supported: give the rewritten prompt as the \
                     variant's `initial_prompt`, or use prefix, suffix, replace or template \
                     ({message})"
                );
            }
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
        // An error at `key` of the layer starting at line `start`: file, line, column.
        let at_key = |start: Option<usize>, key: &str, message: String| {
            let (line, column) = start
                .and_then(|start| key_positions(text, start, key).first().copied())
                .or(start.map(|s| (s, 0)))
                .unwrap_or((0, 0));
            ExperimentError::Invalid {
                path: path.to_path_buf(),
                line,
                column,
                message,
            }
        };
        let check_repeats = |r: Option<u32>, at: &str, start: Option<usize>| match r {
            Some(0) => Err(at_key(
                start,
                "repeats",
                format!("{at}repeats: must be at least 1"),
            )),
            Some(n) if n > super::MAX_REPEATS => Err(at_key(
                start,
                "repeats",
                format!(
                    "{at}repeats: {n} is more than {} replicates",
                    super::MAX_REPEATS
                ),
            )),
            _ => Ok(()),
        };
        let defaults_line = crate::task::compat::key_line(text, &["defaults"]);
        check_repeats(defaults.repeats, "defaults.", defaults_line)?;
        let mut defaults_layer = to_mapping(vec![
            ("repeats", defaults.repeats.map(Value::from)),
            ("agent", defaults.agent.map(Value::Mapping)),
            ("run_limits", defaults.run_limits.map(Value::Mapping)),
            ("sandbox", with_driver(defaults.sandbox, defaults.driver)),
            ("pre_run", defaults.pre_run.map(Value::Sequence)),
            ("post_run", defaults.post_run.map(Value::Sequence)),
        ]);
        check_sections(&defaults_layer, "defaults", path, text, defaults_line)?;
        absolutize_paths(&mut defaults_layer, base);
        let mut variants: Vec<Variant> = Vec::new();
        for v in spec.variants {
            let at = format!("variants[{}]", shorten(&v.variant_id));
            if !is_variant_id(&v.variant_id) {
                return Err(rule(format!("{at}: variant_id {VARIANT_ID_RULE}")));
            }
            if let Some(w) = case_twin(&v.variant_id, variants.iter().map(|w| &*w.variant_id)) {
                let start = variant_lines(text, &v.variant_id).first().copied();
                return Err(at_key(start, "variant_id", case_twin_message(&at, w)));
            }
            // This variant's `variant_id:` line (the n-th of the same id).
            let earlier = variants
                .iter()
                .filter(|w| w.variant_id == v.variant_id)
                .count();
            let start = variant_lines(text, &v.variant_id).get(earlier).copied();
            if earlier > 0 {
                return Err(at_key(
                    start,
                    "variant_id",
                    format!(
                        "{at}.variant_id: given twice (variant ids name folders: make them unique)"
                    ),
                ));
            }
            check_repeats(v.repeats, &format!("{at}."), start)?;
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
            check_sections(&overlay, &at, path, text, start)?;
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
            text: text.to_string(),
        })
    }
}
