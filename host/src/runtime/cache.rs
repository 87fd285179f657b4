//! Loading components, with an on-disk cache of precompiled artifacts.
//!
//! Compiling a component takes ~150 ms (Rust) to ~12 s (JS, Python); loading a
//! precompiled one takes under a millisecond. The cache key is the SHA-256 of the
//! component's bytes and of the engine's compatibility hash (wasmtime version and
//! settings), so a changed component or engine never loads a stale artifact. Only
//! artifacts this host wrote are loaded: each `<key>.cwasm` has a `<key>.cwasm.sha256`
//! written after it, and a file whose digest does not match is recompiled.

use super::{ComponentError, LoadedComponent, engine};
use crate::results::write_atomically;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use wasmtime::component::Component;

/// Loads components, compiling each at most once per machine.
pub struct ComponentCache {
    /// Where precompiled artifacts live; `None` = memory only.
    dir: Option<PathBuf>,
    memo: Mutex<HashMap<[u8; 32], Component>>,
}

impl ComponentCache {
    /// A cache in `dir` (created if missing), or memory-only when `dir` is `None`.
    pub fn new(dir: Option<PathBuf>) -> ComponentCache {
        let dir = dir.filter(|d| std::fs::create_dir_all(d).is_ok());
        ComponentCache {
            dir,
            memo: Mutex::new(HashMap::new()),
        }
    }

    /// The default cache folder: `$CODER_EVAL_CACHE_DIR`, else
    /// `$XDG_CACHE_HOME/coder-eval/components`, else `~/.cache/coder-eval/components`.
    pub fn default_dir() -> Option<PathBuf> {
        if let Some(dir) = std::env::var_os("CODER_EVAL_CACHE_DIR") {
            return Some(PathBuf::from(dir));
        }
        let base = std::env::var_os("XDG_CACHE_HOME")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
        Some(base.join("coder-eval").join("components"))
    }

    /// The process-wide cache in [`ComponentCache::default_dir`].
    pub fn global() -> &'static ComponentCache {
        static CACHE: std::sync::OnceLock<ComponentCache> = std::sync::OnceLock::new();
        CACHE.get_or_init(|| ComponentCache::new(ComponentCache::default_dir()))
    }

    /// Loads a component file. Errors: unreadable file, invalid component.
    pub fn load_file(&self, path: &Path) -> Result<LoadedComponent, ComponentError> {
        let name = path.display().to_string();
        let bytes = std::fs::read(path).map_err(|source| ComponentError::Read {
            component: name.clone(),
            path: path.to_path_buf(),
            source,
        })?;
        self.load_bytes(&name, &bytes)
    }

    /// Loads a component from its bytes; `name` is used in errors.
    pub fn load_bytes(&self, name: &str, bytes: &[u8]) -> Result<LoadedComponent, ComponentError> {
        let key = cache_key(bytes);
        if let Some(component) = self.memo.lock().unwrap().get(&key) {
            return Ok(LoadedComponent {
                name: Arc::from(name),
                component: component.clone(),
            });
        }
        let component = match self.load_precompiled(&key) {
            Some(component) => component,
            None => self.compile(name, bytes, &key)?,
        };
        self.memo.lock().unwrap().insert(key, component.clone());
        Ok(LoadedComponent {
            name: Arc::from(name),
            component,
        })
    }

    /// Whether an artifact for these bytes is on disk (for the benchmark and tests).
    pub fn is_cached_on_disk(&self, bytes: &[u8]) -> bool {
        self.artifact_path(&cache_key(bytes))
            .is_some_and(|p| p.exists())
    }

    fn artifact_path(&self, key: &[u8; 32]) -> Option<PathBuf> {
        Some(self.dir.as_ref()?.join(format!("{}.cwasm", hex(key))))
    }

    fn load_precompiled(&self, key: &[u8; 32]) -> Option<Component> {
        let path = self.artifact_path(key)?;
        let artifact = std::fs::read(&path).ok()?;
        let recorded = std::fs::read_to_string(digest_path(&path)).ok()?;
        if recorded.trim() != hex(&Sha256::digest(&artifact).into()) {
            return None;
        }
        // SAFETY: the artifact was written by this host (`compile` below) and its digest,
        // written after it, matches; wasmtime checks the engine compatibility header.
        unsafe { Component::deserialize(engine(), &artifact).ok() }
    }

    fn compile(
        &self,
        name: &str,
        bytes: &[u8],
        key: &[u8; 32],
    ) -> Result<Component, ComponentError> {
        let invalid = |source| ComponentError::Invalid {
            component: name.to_string(),
            source,
        };
        let artifact = engine().precompile_component(bytes).map_err(invalid)?;
        if let Some(path) = self.artifact_path(key) {
            // Best effort: a cache that cannot be written only costs time.
            // The results' atomic writer: a reader (another run compiling the same
            // component) sees the old file or the new one, and no temporary is left.
            let _ = write_atomically(&path, &artifact).and_then(|()| {
                write_atomically(
                    &digest_path(&path),
                    hex(&Sha256::digest(&artifact).into()).as_bytes(),
                )
            });
        }
        // SAFETY: `artifact` was produced by this engine just above.
        unsafe { Component::deserialize(engine(), &artifact) }.map_err(invalid)
    }
}

fn digest_path(artifact: &Path) -> PathBuf {
    let mut name = artifact.as_os_str().to_owned();
    name.push(".sha256");
    PathBuf::from(name)
}

fn cache_key(bytes: &[u8]) -> [u8; 32] {
    struct ShaHasher(Sha256);
    impl Hasher for ShaHasher {
        fn finish(&self) -> u64 {
            0
        }
        fn write(&mut self, bytes: &[u8]) {
            self.0.update(bytes);
        }
    }
    let mut hasher = ShaHasher(Sha256::new());
    hasher.write(bytes);
    engine().precompile_compatibility_hash().hash(&mut hasher);
    hasher.0.finalize().into()
}

fn hex(bytes: &[u8; 32]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
