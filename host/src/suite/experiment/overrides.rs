//! The command line's layer of the merge: `-D path.to.field=value`, `--model`,
//! `--harness`, `--repeats` ([`Overrides`]), in task-file shape.

use super::{ExperimentError, absolutize_paths, section_error, set_path};
use serde_yaml_ng::{Mapping, Value};
use std::collections::BTreeMap;

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
