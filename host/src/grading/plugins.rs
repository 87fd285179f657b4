//! Criterion plugins: criterion **types** provided by user components, registered under a
//! name, so a vendor's types (`uipath_eval`, ...) are added without rebuilding the host.
//!
//! `--criteria DIR` (repeatable; `run`, `check`, `grade`) registers the types of `DIR`:
//! - with a registry file `DIR/criteria.yaml`, exactly what it lists:
//!
//!   ```yaml
//!   uipath_eval:                  # the criterion type, as task files write it
//!     component: uipath_eval.wasm # relative to DIR: any coder-eval:grader/grader@0.1.0 component
//!     validates_params: true      # answer the validation call at load (below); default false
//!   ```
//! - without one, every `DIR/<name>.wasm` as type `<name>`, with `validates_params: false`.
//!
//! A type name is `[a-z][a-z0-9_]*` and may not be a built-in type (a vendor type such as
//! `uipath_eval` is not built in: registering it is what a vendor plugin is for). Two
//! registrations of one name are an error. Components are checked (contract version,
//! world, imports) when registered.
//!
//! In a task file a plugin type is written like a built-in one: its keys besides `type`,
//! `description`, `weight`, `pass_threshold` and `suite_thresholds` are its params, handed
//! to the component as they are (like a `type: component` criterion's `params:`), in the
//! same sandbox as every grader (workspace read-only, no network, fuel and memory
//! bounds).
//!
//! **Validation at load.** With `validates_params: true` the host calls the component's
//! `grade` once per criterion while loading the task file, with the criterion's params,
//! an empty trajectory, an empty read-only workspace and the prompt
//! [`VALIDATE_PROMPT`]. The component answers `ok` (any verdict) or an error (its
//! message becomes the load error, at the criterion's line). grader-kit does this for
//! every criterion: it calls [`Criterion::validate`](grader_kit) instead of `grade` when it
//! sees the prompt. This rides on the released `grader@0.1.0` contract (the prompt is a
//! string), so older graders keep loading; the registry flag keeps the call away from a
//! component that does not know it.

use crate::runtime::grader::{self, GradingInput, Trajectory};
use crate::runtime::{ComponentCache, ComponentError};
use serde::Deserialize;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::RwLock;

pub(crate) use grader_kit::VALIDATE_PROMPT;

/// One registered type.
#[derive(Debug, Clone, PartialEq)]
pub struct Plugin {
    /// The criterion type.
    pub name: String,
    /// The component file.
    pub component: PathBuf,
    /// The component answers the validation call at load.
    pub validates_params: bool,
}

/// Why a plugin folder could not be registered.
#[derive(Debug, thiserror::Error)]
pub enum PluginError {
    #[error("criteria folder {}: cannot read it", dir.display())]
    Read {
        dir: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}: {message}", file.display())]
    Registry { file: PathBuf, message: String },
    #[error("criterion plugin `{name}`: {message}")]
    Name { name: String, message: String },
    #[error("criterion plugin `{name}` ({})", path.display())]
    Component {
        name: String,
        path: PathBuf,
        #[source]
        source: Box<ComponentError>,
    },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    component: PathBuf,
    #[serde(default)]
    validates_params: bool,
}

static REGISTRY: RwLock<BTreeMap<String, Plugin>> = RwLock::new(BTreeMap::new());

/// The registered plugin for `kind`.
pub(crate) fn lookup(kind: &str) -> Option<Plugin> {
    REGISTRY.read().unwrap().get(kind).cloned()
}

/// Every registered type name.
pub fn names() -> Vec<String> {
    REGISTRY.read().unwrap().keys().cloned().collect()
}

fn builtin(name: &str) -> bool {
    super::builtin::all_types().contains(&name)
        || super::builtin::HOST_TYPES.contains(&name)
        || name == "component"
}

/// The plugins `dir` declares (see the module docs), not yet registered.
pub fn read_dir(dir: &Path) -> Result<Vec<Plugin>, PluginError> {
    let registry = dir.join("criteria.yaml");
    let mut found = Vec::new();
    if registry.is_file() {
        let text = std::fs::read_to_string(&registry).map_err(|source| PluginError::Read {
            dir: dir.to_path_buf(),
            source,
        })?;
        let entries: BTreeMap<String, Entry> =
            serde_yaml_ng::from_str(&text).map_err(|e| PluginError::Registry {
                file: registry.clone(),
                message: e.to_string(),
            })?;
        for (name, e) in entries {
            found.push(Plugin {
                name,
                component: dir.join(e.component),
                validates_params: e.validates_params,
            });
        }
    } else {
        let entries = std::fs::read_dir(dir).map_err(|source| PluginError::Read {
            dir: dir.to_path_buf(),
            source,
        })?;
        for e in entries.flatten() {
            let path = e.path();
            if path.extension().and_then(|x| x.to_str()) == Some("wasm")
                && let Some(stem) = path.file_stem().and_then(|s| s.to_str())
            {
                found.push(Plugin {
                    name: stem.to_string(),
                    component: path.clone(),
                    validates_params: false,
                });
            }
        }
        found.sort_by(|a, b| a.name.cmp(&b.name));
    }
    Ok(found)
}

/// Registers the plugins of `dir`, loading and checking each component. Returns their
/// names.
pub fn register_dir(dir: &Path) -> Result<Vec<String>, PluginError> {
    let plugins = read_dir(dir)?;
    let mut names = Vec::new();
    for p in plugins {
        register(p.clone())?;
        names.push(p.name);
    }
    Ok(names)
}

/// Registers one plugin after checking its name and component.
pub fn register(p: Plugin) -> Result<(), PluginError> {
    let name_err = |message: String| PluginError::Name {
        name: p.name.clone(),
        message,
    };
    let valid = p
        .name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_lowercase())
        && p.name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if !valid {
        return Err(name_err(
            "a type name is lowercase letters, digits and `_`, starting with a letter".into(),
        ));
    }
    if builtin(&p.name) {
        return Err(name_err(
            "is a built-in criterion type; a plugin cannot replace it".into(),
        ));
    }
    let loaded = ComponentCache::global()
        .load_file(&p.component)
        .and_then(|l| grader::check(&l).map(|_| l))
        .map_err(|source| PluginError::Component {
            name: p.name.clone(),
            path: p.component.clone(),
            source: Box::new(source),
        })?;
    drop(loaded);
    let mut registry = REGISTRY.write().unwrap();
    if let Some(other) = registry.get(&p.name)
        && other.component != p.component
    {
        return Err(name_err(format!(
            "is registered twice ({} and {})",
            other.component.display(),
            p.component.display()
        )));
    }
    registry.insert(p.name.clone(), p);
    Ok(())
}

/// The params a plugin receives: the criterion's params, as written.
pub(crate) fn guest_params(params: &Map<String, Value>) -> Value {
    Value::Object(params.clone())
}

/// Validates a plugin criterion's params (the validation call, when the plugin answers
/// it).
pub fn validate(kind: &str, params: &Map<String, Value>) -> Result<(), String> {
    let Some(p) = lookup(kind) else {
        return Err(format!("no criterion plugin `{kind}` is registered"));
    };
    if !p.validates_params {
        return Ok(());
    }
    let empty = std::env::temp_dir().join(format!("coder-eval-validate-{}", std::process::id()));
    std::fs::create_dir_all(&empty).map_err(|e| format!("scratch folder: {e}"))?;
    let loaded = ComponentCache::global()
        .load_file(&p.component)
        .map_err(|e| format!("plugin `{kind}`: {e}"))?;
    let input = GradingInput {
        params_json: guest_params(params).to_string(),
        trajectory: Trajectory::new(&[]),
        prompt: VALIDATE_PROMPT.to_string(),
        workspace: empty,
    };
    match grader::grade(&loaded, &input) {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(message)) => Err(message),
        Err(e) => Err(format!("plugin `{kind}` failed its validation call: {e}")),
    }
}
