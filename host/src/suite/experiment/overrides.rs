//! The command line's layer of the merge: `-D path.to.field=value`, `--model`,
//! `--harness`, `--repeats`, `--scripted-model` ([`Overrides`]), in task-file shape;
//! and the notes naming the experiment's fields the command line replaces
//! ([`Overrides::replaced_in`]).

use super::{ExperimentError, absolutize_paths, section_error, set_path};
use serde_yaml_ng::{Mapping, Value};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// The command-line layer: `-D path=value` (the value read as YAML: `5`, `true`,
/// `[a, b]`, a string otherwise), `--model`, `--harness` (one, in an experiment or with
/// `-D`), `--repeats`, `--scripted-model` (`agent.scripted_model`, relative to the current
/// folder; it alone does not make a run layered: without an experiment or a field
/// override the run plays it over each task file as written).
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    pub set: Vec<String>,
    pub model: Option<String>,
    pub harness: Option<String>,
    pub repeats: Option<u32>,
    pub scripted_model: Option<PathBuf>,
}

impl Overrides {
    /// Whether any field is set here (else a run without an experiment loads its task
    /// files as written).
    pub fn sets_fields(&self) -> bool {
        !self.set.is_empty() || self.model.is_some() || self.harness.is_some()
    }

    /// The layer, in task-file shape.
    pub(crate) fn layer(&self) -> Result<(Value, BTreeMap<String, String>), ExperimentError> {
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
        if let Some(script) = &self.scripted_model {
            set_path(
                &mut layer,
                &["agent", "scripted_model"],
                Value::String(script.display().to_string()),
            )
            .expect("a mapping");
            detail.insert("agent.scripted_model".into(), "--scripted-model".into());
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

impl Overrides {
    /// One line per field that the command line sets and that some of `experiment`'s
    /// variants set too: the command line wins for every variant (the 5-layer merge), so
    /// variants meant to differ by that field run one value. E.g. ``--scripted-model
    /// replaces agent.scripted_model of variant `lazy`: ...``. Empty when none is replaced
    /// (or the layer is refused: `resolve_file` reports that).
    pub fn replaced_in(&self, experiment: &super::Experiment) -> Vec<String> {
        let Ok((_, detail)) = self.layer() else {
            return Vec::new();
        };
        let mut notes = Vec::new();
        for (path, flag) in &detail {
            let keys: Vec<&str> = path.split('.').collect();
            let variants: Vec<String> = experiment
                .variants
                .iter()
                .filter(|v| lookup(&v.overlay, &keys))
                .map(|v| format!("`{}`", v.variant_id))
                .collect();
            if variants.is_empty() {
                continue;
            }
            let noun = if variants.len() == 1 {
                "variant"
            } else {
                "variants"
            };
            notes.push(format!(
                "{flag} replaces {path} of {noun} {}: every variant runs the command line's \
                 value (lineage: source `cli`), so the variants do not differ by it",
                variants.join(", ")
            ));
        }
        notes
    }
}

/// Whether `value` holds the dotted path `keys`.
fn lookup(value: &Value, keys: &[&str]) -> bool {
    let mut at = value;
    for key in keys {
        match at.get(*key) {
            Some(next) => at = next,
            None => return false,
        }
    }
    true
}
