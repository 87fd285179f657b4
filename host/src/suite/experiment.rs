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

pub use super::merge::{Layer, Lineage, LineageEntry, MERGE_RULES, MergeRule, rule_of};
use super::merge::{LayerInput, merge, set_path};
pub use super::mutation::PromptMutation;
use serde::Deserialize;
use serde_yaml_ng::{Mapping, Value};
use std::path::{Path, PathBuf};

mod overrides;
mod resolve;
#[cfg(test)]
mod tests;

pub use overrides::Overrides;
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

/// The path fields of a layer, as dotted lineage paths: an experiment's are relative to
/// its file, the command line's to the current folder.
const PATH_FIELDS: &[&str] = &["agent.scripted_model", "initial_prompt_file"];

fn absolutize_paths(layer: &mut Value, base: &Path) {
    for field in PATH_FIELDS {
        absolutize(layer, &field.split('.').collect::<Vec<_>>(), base);
    }
}

/// `base` as [`absolutize`] joins it (an empty base is the current folder).
fn absolute_base(base: &Path) -> PathBuf {
    let base = if base.as_os_str().is_empty() {
        Path::new(".")
    } else {
        base
    };
    std::path::absolute(base).unwrap_or_else(|_| base.to_path_buf())
}

/// The path fields' lineage values as their layer wrote them: relative to the experiment
/// file's folder (`experiment_dir`, for its defaults and variants) or to `cwd` (the
/// command line's `-D`), not the absolute paths the merge reads. The lineage is part of
/// a unit's id (`suite::plan`), so a plan made in one checkout gives the same ids in a
/// checkout at another path (a pod mounting the repository elsewhere). A path outside
/// its base, or given absolute, stays as it is.
fn relative_lineage(lineage: &mut Lineage, experiment_dir: Option<&Path>, cwd: &Path) {
    for field in PATH_FIELDS {
        let Some(entry) = lineage.get_mut(*field) else {
            continue;
        };
        let base = match entry.source {
            Layer::ExperimentDefaults | Layer::Variant => match experiment_dir {
                Some(dir) => dir,
                None => continue,
            },
            Layer::Cli => cwd,
            _ => continue,
        };
        let Some(value) = entry.value.as_str() else {
            continue;
        };
        if let Ok(rel) = Path::new(value).strip_prefix(absolute_base(base)) {
            entry.value = serde_json::Value::String(rel.display().to_string());
        }
    }
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
        let rule = |message: String| ExperimentError::Rule {
            path: self.path.clone(),
            message,
        };
        let layers = std::iter::once((
            "defaults".to_string(),
            &self.defaults,
            &self.defaults_mutations,
        ))
        .chain(self.variants.iter().map(|v| {
            (
                format!("variants[{}]", v.variant_id),
                &v.overlay,
                &v.mutations,
            )
        }));
        for (at, layer, mutations) in layers {
            for m in mutations {
                m.apply("")
                    .map_err(|message| rule(format!("{at}.{message}")))?;
            }
            for field in PATH_FIELDS {
                let mut value = Some(layer);
                for key in field.split('.') {
                    value = value.and_then(|v| v.get(key));
                }
                if let Some(path) = value.and_then(Value::as_str)
                    && !Path::new(path).is_file()
                {
                    return Err(rule(format!(
                        "{at}.{field}: {path} is not a file (paths in an experiment are \
                         relative to the experiment file)"
                    )));
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
        let check_repeats = |r: Option<u32>, at: &str| match r {
            Some(0) => Err(rule(format!("{at}repeats: must be at least 1"))),
            Some(n) if n > super::MAX_REPEATS => Err(rule(format!(
                "{at}repeats: {n} is more than {} replicates",
                super::MAX_REPEATS
            ))),
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
            text,
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
            check_sections(&overlay, &at, path, text, variant_line(text, &v.variant_id))?;
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
/// at load, naming the file, the line and column of the key (a nested unknown field's
/// own line, else the section's, else the layer's: `defaults:` or the variant's
/// `variant_id`) and the key.
fn check_sections(
    layer: &Value,
    at: &str,
    path: &Path,
    text: &str,
    line: Option<usize>,
) -> Result<(), ExperimentError> {
    match section_error(layer) {
        Some((key, message)) => {
            let (line, column) = line
                .map(|start| key_position(text, start, key, &message))
                .unwrap_or((0, 0));
            Err(ExperimentError::Invalid {
                path: path.to_path_buf(),
                line,
                column,
                message: format!("{at}.{key}: {message}"),
            })
        }
        None => Ok(()),
    }
}

/// The 1-based line and column of the key a section error names, within the layer that
/// starts at line `start`: the unknown field the message names (`unknown field
/// `max_turnz``), else the section `key`; `(start, 0)` when neither is found before the
/// layer ends (the next variant, or the next top-level key).
fn key_position(text: &str, start: usize, key: &str, message: &str) -> (usize, usize) {
    let unknown = message
        .split_once("unknown field `")
        .and_then(|(_, rest)| rest.split_once('`'))
        .map(|(name, _)| name);
    let lines: Vec<&str> = text.lines().collect();
    let first = lines.get(start.saturating_sub(1)).copied().unwrap_or("");
    let layer_indent = first.len() - first.trim_start_matches([' ', '-']).len();
    // A variant is a list entry: its keys sit at its own indent.
    let entry = first.trim_start().starts_with('-');
    let find = |name: &str| -> Option<(usize, usize)> {
        for (i, l) in lines.iter().enumerate().skip(start.saturating_sub(1)) {
            let body = l.trim_start_matches([' ', '-']);
            let indent = l.len() - body.len();
            if i + 1 > start && !body.is_empty() && !body.starts_with('#') {
                // The layer ends at the next entry of its list or a key left of it.
                let ends = if entry {
                    indent < layer_indent
                        || (indent == layer_indent && l.trim_start().starts_with('-'))
                } else {
                    indent <= layer_indent
                };
                if ends {
                    break;
                }
            }
            let mut from = 0;
            while let Some(pos) = l[from..].find(name) {
                let at = from + pos;
                let before = l[..at].chars().last();
                let after = &l[at + name.len()..];
                if before.is_none_or(|c| " {,-\"'".contains(c))
                    && after.trim_start_matches(['"', '\'']).starts_with(':')
                {
                    return Some((i + 1, at + 1));
                }
                from = at + name.len();
            }
        }
        None
    };
    unknown
        .and_then(find)
        .or_else(|| find(key))
        .unwrap_or((start, 0))
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
