//! Loading components, with an on-disk cache of precompiled artifacts.
//!
//! Compiling a component takes ~150 ms (Rust) to ~12 s (JS, Python); loading a
//! precompiled one takes under a millisecond. The cache key is the SHA-256 of the
//! component's bytes and of the engine's compatibility hash (wasmtime version and
//! settings) and of the engine's CPU bound, so a changed component or engine never loads
//! a stale artifact. Each `<key>.cwasm` has a `<key>.cwasm.sha256` written after it: the
//! digest of the key and the artifact together, so a corrupted or half-written artifact,
//! or one copied or renamed under another key (with its digest file), is compiled again.
//!
//! Not a defence against someone who can write the folder: an artifact is native code
//! the host runs, and whoever can write both files can make it anything. The folder is
//! therefore created readable and writable by its owner alone (0700); keep it so.
//!
//! The folder is bounded: after each new artifact the least recently used ones (by
//! modification time, refreshed on each load) are removed until the folder holds at most
//! [`DEFAULT_MAX_BYTES`] (`$CODER_EVAL_CACHE_MAX_MB` to change it). Without a bound every
//! rebuilt component left its ~6 MB artifact behind for good (132 of them, 765 MB, on a
//! development machine in two days).

use super::{ComponentError, CpuBound, LoadedComponent, engine};
use crate::results::write_atomically;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use wasmtime::component::Component;

/// The most the cache folder keeps by default: 512 MiB (the built-in harnesses' and
/// graders' artifacts take about 100 MB).
pub(crate) const DEFAULT_MAX_BYTES: u64 = 512 * 1024 * 1024;

/// The folder's bound: `$CODER_EVAL_CACHE_MAX_MB` (MiB) when it is a number, else
/// [`DEFAULT_MAX_BYTES`].
fn max_bytes() -> u64 {
    std::env::var("CODER_EVAL_CACHE_MAX_MB")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map_or(DEFAULT_MAX_BYTES, |mb| mb.saturating_mul(1024 * 1024))
}

/// Removes the least recently modified artifacts in `dir` (each `.cwasm` with its
/// `.sha256`) until what is left takes at most `max_bytes`, never `keep`. Best effort:
/// a file that cannot be read or removed is skipped. Returns the artifacts removed.
pub(crate) fn prune(dir: &Path, max_bytes: u64, keep: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    let mut artifacts: Vec<(std::time::SystemTime, u64, PathBuf)> = entries
        .filter_map(Result::ok)
        .filter(|e| e.path().extension().is_some_and(|x| x == "cwasm"))
        .filter_map(|e| {
            let meta = e.metadata().ok()?;
            let path = e.path();
            let digest = std::fs::metadata(digest_path(&path)).map_or(0, |m| m.len());
            Some((meta.modified().ok()?, meta.len() + digest, path))
        })
        .collect();
    let mut total: u64 = artifacts.iter().map(|(_, size, _)| size).sum();
    artifacts.sort();
    let mut removed = 0;
    for (_, size, path) in artifacts {
        if total <= max_bytes {
            break;
        }
        if path == keep || std::fs::remove_file(&path).is_err() {
            continue;
        }
        let _ = std::fs::remove_file(digest_path(&path));
        total = total.saturating_sub(size);
        removed += 1;
    }
    removed
}

/// Loads components, compiling each at most once per machine, for one engine: graders'
/// ([`CpuBound::Fuel`]) or harness components' ([`CpuBound::Deadline`]). Both can share
/// a folder: the key tells their artifacts apart.
pub struct ComponentCache {
    /// Where precompiled artifacts live; `None` = memory only.
    dir: Option<PathBuf>,
    /// The engine its components are compiled for and run on.
    bound: CpuBound,
    memo: Mutex<HashMap<[u8; 32], Component>>,
}

/// The largest component file read (bytes): the built-in ones are a few MiB.
const MAX_COMPONENT_BYTES: u64 = 256 << 20;

impl ComponentCache {
    /// A cache of graders in `dir` (created if missing), or memory-only when `dir` is
    /// `None`.
    pub fn new(dir: Option<PathBuf>) -> ComponentCache {
        ComponentCache::for_bound(dir, CpuBound::Fuel)
    }

    /// A cache of harness components in `dir` (see [`ComponentCache::new`]).
    pub fn for_harnesses(dir: Option<PathBuf>) -> ComponentCache {
        ComponentCache::for_bound(dir, CpuBound::Deadline)
    }

    fn for_bound(dir: Option<PathBuf>, bound: CpuBound) -> ComponentCache {
        let dir = dir.filter(|d| {
            use std::os::unix::fs::DirBuilderExt;
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(d)
                .is_ok()
        });
        ComponentCache {
            dir,
            bound,
            memo: Mutex::new(HashMap::new()),
        }
    }

    /// The default cache folder: `$CODER_EVAL_CACHE_DIR`, else
    /// `$XDG_CACHE_HOME/coder-eval/components`, else `~/.cache/coder-eval/components`.
    pub(crate) fn default_dir() -> Option<PathBuf> {
        if let Some(dir) = std::env::var_os("CODER_EVAL_CACHE_DIR") {
            return Some(PathBuf::from(dir));
        }
        let base = std::env::var_os("XDG_CACHE_HOME")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
        Some(base.join("coder-eval").join("components"))
    }

    /// The process-wide cache of graders in [`ComponentCache::default_dir`].
    pub(crate) fn global() -> &'static ComponentCache {
        static CACHE: std::sync::OnceLock<ComponentCache> = std::sync::OnceLock::new();
        CACHE.get_or_init(|| ComponentCache::new(ComponentCache::default_dir()))
    }

    /// The process-wide cache of harness components in [`ComponentCache::default_dir`].
    pub fn harnesses() -> &'static ComponentCache {
        static CACHE: std::sync::OnceLock<ComponentCache> = std::sync::OnceLock::new();
        CACHE.get_or_init(|| ComponentCache::for_harnesses(ComponentCache::default_dir()))
    }

    /// Loads a component file. Errors: unreadable file, invalid component.
    pub fn load_file(&self, path: &Path) -> Result<LoadedComponent, ComponentError> {
        let name = path.display().to_string();
        let read = |source| ComponentError::Read {
            component: name.clone(),
            path: path.to_path_buf(),
            source,
        };
        // A regular file only: a FIFO would block the read, a device never end it.
        let meta = std::fs::metadata(path).map_err(read)?;
        if !meta.is_file() {
            return Err(read(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "not a regular file (a folder, a FIFO or a device cannot be a component)",
            )));
        }
        if meta.len() > MAX_COMPONENT_BYTES {
            return Err(read(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!(
                    "{} bytes, over the {} MiB a component may be",
                    meta.len(),
                    MAX_COMPONENT_BYTES >> 20
                ),
            )));
        }
        let mut bytes = Vec::with_capacity(meta.len() as usize);
        std::fs::File::open(path)
            .and_then(|f| {
                use std::io::Read;
                f.take(MAX_COMPONENT_BYTES).read_to_end(&mut bytes)
            })
            .map_err(read)?;
        self.load_bytes(&name, &bytes)
    }

    /// Loads a component from its bytes; `name` is used in errors.
    pub fn load_bytes(&self, name: &str, bytes: &[u8]) -> Result<LoadedComponent, ComponentError> {
        let key = cache_key(bytes, self.bound);
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
        self.artifact_path(&cache_key(bytes, self.bound))
            .is_some_and(|p| p.exists())
    }

    fn artifact_path(&self, key: &[u8; 32]) -> Option<PathBuf> {
        Some(self.dir.as_ref()?.join(format!("{}.cwasm", hex(key))))
    }

    fn load_precompiled(&self, key: &[u8; 32]) -> Option<Component> {
        let path = self.artifact_path(key)?;
        let artifact = std::fs::read(&path).ok()?;
        let recorded = std::fs::read_to_string(digest_path(&path)).ok()?;
        if recorded.trim() != hex(&sealed(key, &artifact)) {
            return None;
        }
        // Used now: the last to go when the folder is pruned.
        if let Ok(file) = std::fs::File::options().append(true).open(&path) {
            let _ = file.set_modified(std::time::SystemTime::now());
        }
        // SAFETY: the artifact was written by this host (`compile` below) and its digest,
        // written after it, matches; wasmtime checks the engine compatibility header.
        unsafe { Component::deserialize(engine(self.bound), &artifact).ok() }
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
        let artifact = engine(self.bound)
            .precompile_component(bytes)
            .map_err(invalid)?;
        if let Some(path) = self.artifact_path(key) {
            // Best effort: a cache that cannot be written only costs time.
            // The results' atomic writer: a reader (another run compiling the same
            // component) sees the old file or the new one, and no temporary is left.
            let written = write_atomically(&path, &artifact).and_then(|()| {
                write_atomically(&digest_path(&path), hex(&sealed(key, &artifact)).as_bytes())
            });
            if written.is_ok()
                && let Some(dir) = &self.dir
            {
                prune(dir, max_bytes(), &path);
            }
        }
        // SAFETY: `artifact` was produced by this engine just above.
        unsafe { Component::deserialize(engine(self.bound), &artifact) }.map_err(invalid)
    }
}

/// The digest kept beside an artifact: SHA-256 of its key and its bytes, so the pair is
/// valid only under the key it was written for.
fn sealed(key: &[u8; 32], artifact: &[u8]) -> [u8; 32] {
    let mut hasher = Sha256::new();
    hasher.update(key);
    hasher.update(artifact);
    hasher.finalize().into()
}

fn digest_path(artifact: &Path) -> PathBuf {
    let mut name = artifact.as_os_str().to_owned();
    name.push(".sha256");
    PathBuf::from(name)
}

fn cache_key(bytes: &[u8], bound: CpuBound) -> [u8; 32] {
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
    engine(bound)
        .precompile_compatibility_hash()
        .hash(&mut hasher);
    bound.hash(&mut hasher);
    hasher.0.finalize().into()
}

fn hex(bytes: &[u8; 32]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, SystemTime};

    /// An artifact of `size` bytes (and its digest file) last used `age_s` seconds ago.
    fn artifact(dir: &Path, name: &str, size: usize, age_s: u64) -> PathBuf {
        let path = dir.join(format!("{name}.cwasm"));
        std::fs::write(&path, vec![0u8; size]).unwrap();
        std::fs::write(digest_path(&path), "00").unwrap();
        let when = SystemTime::now() - Duration::from_secs(age_s);
        std::fs::File::options()
            .append(true)
            .open(&path)
            .unwrap()
            .set_modified(when)
            .unwrap();
        path
    }

    #[test]
    fn pruning_removes_the_least_recently_used_until_under_the_bound() {
        let dir =
            std::env::temp_dir().join(format!("coder-eval-cache-prune-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let oldest = artifact(&dir, "a", 1000, 300);
        let older = artifact(&dir, "b", 1000, 200);
        let kept = artifact(&dir, "c", 1000, 100);
        // The one just written is never removed, even when it is (by clock skew) the oldest.
        let fresh = artifact(&dir, "d", 1000, 400);
        std::fs::write(dir.join("unrelated.txt"), vec![0u8; 5000]).unwrap();
        let removed = prune(&dir, 2100, &fresh);
        assert_eq!(removed, 2);
        assert!(!oldest.exists() && !digest_path(&oldest).exists());
        assert!(!older.exists());
        assert!(kept.exists() && digest_path(&kept).exists());
        assert!(fresh.exists());
        assert!(
            dir.join("unrelated.txt").exists(),
            "only artifacts are pruned"
        );
        // Under the bound already: nothing goes.
        assert_eq!(prune(&dir, 1 << 20, &fresh), 0);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
