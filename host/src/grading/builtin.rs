//! The built-in criteria components: which one grades which `type`, and loading them.

use crate::components::BUILTIN_CRITERIA;
use crate::runtime::{ComponentCache, ComponentError, LoadedComponent, grader};
use serde_json::Value;
use std::sync::Mutex;

/// A built-in criteria component, embedded in the binary, and the criterion types it
/// grades (it dispatches on the `type` the host puts in its params).
pub struct BuiltinCriteria {
    /// The component's name (`criteria-files`); it loads as `builtin:<name>`.
    pub name: &'static str,
    /// The `type`s it grades.
    pub types: &'static [&'static str],
    /// Its parameter check, compiled natively from the same crate, run at task load.
    pub validate: fn(&Value) -> Result<(), String>,
    /// The component's bytes, built by `host/build.rs`.
    pub wasm: &'static [u8],
}

/// The component that grades `kind`, if a built-in one does.
pub fn for_type(kind: &str) -> Option<&'static BuiltinCriteria> {
    BUILTIN_CRITERIA.iter().find(|c| c.types.contains(&kind))
}

/// Every built-in WASM criterion type.
pub fn all_types() -> Vec<&'static str> {
    BUILTIN_CRITERIA
        .iter()
        .flat_map(|c| c.types.iter().copied())
        .collect()
}

/// Loads (compiling at most once per machine, see [`ComponentCache`]) and checks a
/// built-in criteria component, once per process and cache: the embedded bytes never
/// change, so later calls skip hashing them (~1 ms for a 1–3 MB component).
pub fn load(
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
