//! The built-in criteria components, embedded in the binary (as the harnesses' are, in
//! [`super::BUILTIN_HARNESSES`]): each with the criterion types it grades and its
//! parameter checks ([`BUILTIN_CRITERIA`]), and loading a criteria component by the name
//! a task's early stop records it under ([`load_named`]: `builtin:<name>`, or a `.wasm`
//! file's path). Which criterion `type` is whose is `grading::builtin`.

use crate::embedded;
use crate::runtime::{ComponentCache, ComponentError, LoadedComponent, grader};
use serde_json::Value;
use std::sync::Mutex;

/// A built-in criteria component, embedded in the binary, and the criterion types it
/// grades (it dispatches on the `type` the host puts in its params).
pub(crate) struct BuiltinCriteria {
    /// The component's name (`criteria-files`); it loads as `builtin:<name>`.
    pub name: &'static str,
    /// The `type`s it grades.
    pub types: &'static [&'static str],
    /// Its parameter check, compiled natively from the same crate, run at task load.
    pub validate: fn(&Value) -> Result<(), String>,
    /// Which of its parameters' strings are regexes or workspace paths, as the crate
    /// itself declares them: checked as each string is read, so an error points at it.
    pub param_kind: criteria_common::ParamKindFn,
    /// The component's bytes (see [`crate::embedded`]).
    pub wasm: &'static [u8],
}

impl std::fmt::Debug for BuiltinCriteria {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.debug_struct("BuiltinCriteria")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl PartialEq for BuiltinCriteria {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}

/// The built-in criteria components embedded in this binary, each with the criterion
/// types it grades and its parameter check.
pub(crate) const BUILTIN_CRITERIA: &[BuiltinCriteria] = &[
    BuiltinCriteria {
        name: "criteria-files",
        types: criteria_files::TYPES,
        validate: criteria_files::validate,
        param_kind: criteria_files::param_kind,
        wasm: embedded::CRITERIA_FILES,
    },
    BuiltinCriteria {
        name: "criteria-json",
        types: criteria_json::TYPES,
        validate: criteria_json::validate,
        param_kind: criteria_json::param_kind,
        wasm: embedded::CRITERIA_JSON,
    },
    BuiltinCriteria {
        name: "criteria-trajectory",
        types: criteria_trajectory::TYPES,
        validate: criteria_trajectory::validate,
        param_kind: criteria_trajectory::param_kind,
        wasm: embedded::CRITERIA_TRAJECTORY,
    },
];

/// Loads (compiling at most once per machine, see [`ComponentCache`]) and checks a
/// built-in criteria component, once per process and cache: the embedded bytes never
/// change, so later calls skip hashing them (~1 ms for a 1–3 MB component).
pub(crate) fn load(
    family: &'static BuiltinCriteria,
    cache: &'static ComponentCache,
) -> Result<LoadedComponent, ComponentError> {
    type Loaded = Vec<(usize, &'static str, LoadedComponent)>;
    static LOADED: Mutex<Loaded> = Mutex::new(Vec::new());
    let cache_id = cache as *const ComponentCache as usize;
    let hit = |loaded: &Loaded| {
        loaded
            .iter()
            .find(|(c, name, _)| *c == cache_id && *name == family.name)
            .map(|(_, _, l)| l.clone())
    };
    if let Some(loaded) = hit(&LOADED.lock().unwrap()) {
        return Ok(loaded);
    }
    let loaded = cache.load_bytes(&format!("builtin:{}", family.name), family.wasm)?;
    grader::check(&loaded)?;
    let mut all = LOADED.lock().unwrap();
    if hit(&all).is_none() {
        all.push((cache_id, family.name, loaded.clone()));
    }
    Ok(loaded)
}

/// The criteria component named `component`: `builtin:<name>` (one of
/// [`BUILTIN_CRITERIA`]) or the path of a `.wasm` file, loaded and checked as a grader.
/// Errors: the sentence (no such built-in; the file could not be read, compiled or is no
/// grader).
pub(crate) fn load_named(component: &str) -> Result<LoadedComponent, String> {
    let cache = ComponentCache::global();
    let loaded = match component.strip_prefix("builtin:") {
        Some(name) => {
            let family = BUILTIN_CRITERIA
                .iter()
                .find(|f| f.name == name)
                .ok_or_else(|| format!("no built-in criteria component `{name}`"))?;
            load(family, cache).map_err(|e| e.to_string())?
        }
        None => {
            let loaded = cache
                .load_file(std::path::Path::new(component))
                .map_err(|e| e.to_string())?;
            grader::check(&loaded).map_err(|e| e.to_string())?;
            loaded
        }
    };
    Ok(loaded)
}
