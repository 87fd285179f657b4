//! An agent CLI's version without paying its start-up on every run (Gemini CLI's
//! `--version` takes ~2 s, Pi's ~1.3 s, OpenCode's ~0.85 s): in order,
//!
//! 1. the installed npm package's manifest: the CLI's path followed through its symlinks
//!    (`node_modules/.bin/claude` → `@anthropic-ai/claude-code/bin/claude.exe`), the
//!    nearest `package.json` above it whose `bin` names that file, its `version`
//!    (`"2.1.197"`);
//! 2. the cache of earlier probes, `cli-versions.json` in the cache folder (beside the
//!    component cache: `$CODER_EVAL_CACHE_DIR/..`, else `$XDG_CACHE_HOME/coder-eval`, else
//!    `~/.cache/coder-eval`), keyed by the CLI file's canonical path, modification time
//!    (ns) and size, and the same of what a wrapper script launches: of each path its
//!    first 4 KiB name (absolute, or relative to the script's folder: `"$basedir/../pkg/
//!    cli.js"`, `"$(dirname "$0")/../pkg/cli.js"`), the file when it is executable (`exec
//!    /opt/agent/bin/agent "$@"`) and the nearest `package.json` above it (`node
//!    /usr/lib/node_modules/agent/cli.js`): a shim that stays as it is while the package
//!    it starts is upgraded. A CLI replaced
//!    in place, or behind its shim, is probed again. Entries whose CLI is gone, and all
//!    but the newest [`MAX_ENTRIES`], are dropped as the cache is written;
//! 3. the probe itself: `CLI --version` with the turn's minimal environment (`PATH`, a
//!    private empty `HOME`, `LANG=C.UTF-8`), the first line of its stdout; cached.
//!
//! A probe that fails or times out is not cached on disk (the next run tries again).

use crate::locate::executable;
use crate::results::write_json_atomically;
use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// The file of the probe cache, inside the cache folder.
pub(crate) const CACHE_FILE: &str = "cli-versions.json";

/// The most probes the cache keeps (the newest).
pub(crate) const MAX_ENTRIES: usize = 64;

/// One cached probe (the cache file maps the canonical path to it).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
struct Cached {
    /// The file's modification time, ns since the epoch.
    mtime_ns: i128,
    /// Its size, bytes.
    size: u64,
    /// What the file launches (a wrapper's targets and their manifests), each as
    /// `path mtime_ns size`; a target gone is `path -`.
    #[serde(default)]
    launches: Vec<String>,
    /// When it was probed, ms since the epoch (the newest are kept).
    #[serde(default)]
    probed_at_ms: u64,
    /// The first line of its `--version`.
    version: String,
}

/// The cache folder of the probes: the parent of the component cache's default folder.
pub(crate) fn default_cache_dir() -> Option<PathBuf> {
    crate::runtime::ComponentCache::default_dir().and_then(|d| d.parent().map(Path::to_path_buf))
}

/// The version of the npm package that installed `cli`, from its `package.json`, when
/// `cli` (its symlinks followed) is a `bin` of one; `None` otherwise.
pub(crate) fn from_manifest(cli: &Path) -> Option<String> {
    let target = cli.canonicalize().ok()?;
    let mut dir = target.parent();
    // A bin sits a few folders deep in its package (`bin/`, `dist/`, `bundle/`).
    for _ in 0..6 {
        let here = dir?;
        let manifest = here.join("package.json");
        if let Ok(text) = std::fs::read_to_string(&manifest) {
            let Ok(value) = serde_json::from_str::<serde_json::Value>(&text) else {
                return None;
            };
            let bins: Vec<&str> = match value.get("bin") {
                Some(serde_json::Value::String(s)) => vec![s.as_str()],
                Some(serde_json::Value::Object(map)) => {
                    map.values().filter_map(|v| v.as_str()).collect()
                }
                _ => Vec::new(),
            };
            let owns = bins
                .iter()
                .any(|b| here.join(b).canonicalize().ok().as_deref() == Some(target.as_path()));
            // The nearest package.json decides: a file it does not list as a bin is not
            // a CLI it installed.
            return owns
                .then(|| value.get("version")?.as_str().map(str::to_string))
                .flatten();
        }
        dir = here.parent();
    }
    None
}

/// The cached probe of `cli` in `cache_dir`, when the file and what it launches are
/// unchanged since.
pub(crate) fn cached(cli: &Path, cache_dir: &Path) -> Option<String> {
    let (key, mtime_ns, size) = identity(cli)?;
    let entries = read_cache(cache_dir);
    let hit = entries.get(&key)?;
    (hit.mtime_ns == mtime_ns && hit.size == size && hit.launches == launches(cli))
        .then(|| hit.version.clone())
}

/// Records `version` as the probe of `cli` in `cache_dir` (best effort: a cache that
/// cannot be written is only slower next time), pruned (module docs).
pub(crate) fn remember(cli: &Path, cache_dir: &Path, version: &str) {
    let Some((key, mtime_ns, size)) = identity(cli) else {
        return;
    };
    let mut entries = read_cache(cache_dir);
    let probed_at_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    entries.insert(
        key.clone(),
        Cached {
            mtime_ns,
            size,
            launches: launches(cli),
            probed_at_ms,
            version: version.to_string(),
        },
    );
    entries.retain(|path, _| Path::new(path).exists());
    if entries.len() > MAX_ENTRIES {
        // Newest first (this probe first of all), the rest dropped.
        let mut order: Vec<(bool, u64, String)> = entries
            .iter()
            .map(|(k, c)| (*k == key, c.probed_at_ms, k.clone()))
            .collect();
        order.sort_unstable_by(|a, b| b.cmp(a));
        for (_, _, old) in order.into_iter().skip(MAX_ENTRIES) {
            entries.remove(&old);
        }
    }
    if std::fs::create_dir_all(cache_dir).is_ok() {
        let _ = write_json_atomically(&cache_dir.join(CACHE_FILE), &entries);
    }
}

/// The canonical path, modification time (ns) and size of `cli`.
fn identity(cli: &Path) -> Option<(String, i128, u64)> {
    let path = cli.canonicalize().ok()?;
    let meta = std::fs::metadata(&path).ok()?;
    let mtime_ns = i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec());
    Some((path.display().to_string(), mtime_ns, meta.size()))
}

/// What `cli` launches, when it is a script (`#!`): of each path its first 4 KiB name
/// that exists (absolute, or relative to the script's folder: [`relative_part`]), the file itself when it is executable and the nearest
/// `package.json` above it, each as `path mtime_ns size` (sorted, without repeats).
fn launches(cli: &Path) -> Vec<String> {
    use std::io::Read;
    let mut head = Vec::new();
    let Ok(file) = std::fs::File::open(cli) else {
        return Vec::new();
    };
    if file.take(4096).read_to_end(&mut head).is_err() || !head.starts_with(b"#!") {
        return Vec::new();
    }
    let text = String::from_utf8_lossy(&head);
    let mut out = Vec::new();
    let shebang_end = text.find('\n').unwrap_or(text.len());
    // Relative paths are the shim's own folder's (npm's shims: `"$basedir/../pkg/cli.js"`,
    // `"$(dirname "$0")/../pkg/cli.js"`).
    let base = cli
        .canonicalize()
        .ok()
        .and_then(|p| p.parent().map(Path::to_path_buf));
    for token in text[shebang_end..]
        .split(|c: char| c.is_whitespace() || "\"'`;:=()<>|&".contains(c))
        .filter(|t| t.contains('/') && t.len() > 1)
    {
        let path = match relative_part(token) {
            Some(rel) => match &base {
                Some(base) => base.join(rel),
                None => continue,
            },
            None if token.starts_with('/') => PathBuf::from(token),
            None => continue,
        };
        let Some(id) = identity(&path) else {
            continue;
        };
        // A program counts itself; any other file (a script a runtime loads, or a log the
        // shim appends to) only through its package.
        if executable(Path::new(&id.0)).is_ok() {
            out.push(format!("{} {} {}", id.0, id.1, id.2));
        }
        let mut dir = Path::new(&id.0).parent();
        for _ in 0..6 {
            let Some(here) = dir else { break };
            if let Some(m) = identity(&here.join("package.json")) {
                out.push(format!("{} {} {}", m.0, m.1, m.2));
                break;
            }
            dir = here.parent();
        }
    }
    out.sort();
    out.dedup();
    out
}

/// The part of a script's word that names a path relative to the script's folder:
/// `../pkg/cli.js`, `./cli.js`, `$basedir/../pkg/cli.js` or `${basedir}/…` (a variable
/// first: npm's shims set it to their folder), `/../pkg/cli.js` (what is left of
/// `$(dirname "$0")/../pkg/cli.js` once split); `None` for an absolute path or no path.
fn relative_part(token: &str) -> Option<&str> {
    let rest = match token.strip_prefix('$') {
        Some(var) => {
            let var = var
                .strip_prefix('{')
                .map_or(var, |v| v.split_once('}').map_or(v, |x| x.1));
            let slash = var.find('/')?;
            &var[slash + 1..]
        }
        None if token.starts_with("/../") || token.starts_with("/./") => &token[1..],
        None if token.starts_with('/') => return None,
        None => token,
    };
    (!rest.is_empty()).then_some(rest)
}

fn read_cache(cache_dir: &Path) -> BTreeMap<String, Cached> {
    std::fs::read_to_string(cache_dir.join(CACHE_FILE))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default()
}

/// The environment of a probe of `cli`, as a turn's is built (`super::launch`): `PATH`
/// (the CLI's folder first: a node CLI finds `node` on it), a private `HOME` (`home`),
/// `LANG`, `TERM`, `TMPDIR` (the private home too), nothing else.
pub(crate) fn probe_env(cli: &Path, home: &Path) -> Vec<(String, String)> {
    let mut path = crate::workspace::host_path();
    if let Some(dir) = cli.parent() {
        path = format!("{}:{path}", dir.display());
    }
    vec![
        ("PATH".into(), path),
        ("HOME".into(), home.display().to_string()),
        ("LANG".into(), "C.UTF-8".into()),
        ("TERM".into(), "dumb".into()),
        // A Bun-built CLI unpacks native libraries into the temporary folder: the
        // probe's, removed with it, not the host's `/tmp`.
        ("TMPDIR".into(), home.display().to_string()),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("coder-eval-version-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn the_manifest_of_the_package_that_owns_the_bin_gives_the_version() {
        let root = scratch("manifest");
        let pkg = root.join("node_modules/@acme/agent");
        std::fs::create_dir_all(pkg.join("bin")).unwrap();
        std::fs::write(
            pkg.join("package.json"),
            r#"{"name":"@acme/agent","version":"3.4.5","bin":{"agent":"./bin/agent.js"}}"#,
        )
        .unwrap();
        std::fs::write(pkg.join("bin/agent.js"), "#!/bin/sh\n").unwrap();
        std::fs::write(pkg.join("bin/other.js"), "#!/bin/sh\n").unwrap();
        std::fs::create_dir_all(root.join("node_modules/.bin")).unwrap();
        let link = root.join("node_modules/.bin/agent");
        std::os::unix::fs::symlink("../@acme/agent/bin/agent.js", &link).unwrap();
        assert_eq!(from_manifest(&link).as_deref(), Some("3.4.5"));
        // A file of the package that is not one of its bins is not its CLI.
        assert_eq!(from_manifest(&pkg.join("bin/other.js")), None);
        // No manifest above: none.
        let lone = scratch("lone").join("cli");
        std::fs::write(&lone, "#!/bin/sh\n").unwrap();
        assert_eq!(from_manifest(&lone), None);
        std::fs::remove_dir_all(&root).ok();
    }

    #[test]
    fn the_cache_is_keyed_by_path_mtime_and_size() {
        let dir = scratch("cache");
        let cli = dir.join("cli");
        std::fs::write(&cli, "#!/bin/sh\necho 1\n").unwrap();
        let cache = dir.join("cache");
        assert_eq!(cached(&cli, &cache), None);
        remember(&cli, &cache, "cli 1.0");
        assert_eq!(cached(&cli, &cache).as_deref(), Some("cli 1.0"));
        // Replaced in place (another size): probed again.
        std::fs::write(&cli, "#!/bin/sh\necho 1.1\n").unwrap();
        assert_eq!(cached(&cli, &cache), None);
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn a_shim_whose_package_changed_behind_it_is_probed_again() {
        let dir = scratch("shim");
        let pkg = dir.join("lib/agent");
        std::fs::create_dir_all(pkg.join("dist")).unwrap();
        std::fs::write(pkg.join("package.json"), r#"{"version":"1.0.0"}"#).unwrap();
        std::fs::write(pkg.join("dist/cli.js"), "console.log('1.0.0')\n").unwrap();
        // The shim names the package's entry point; it never changes.
        let shim = dir.join("agent");
        std::fs::write(
            &shim,
            format!(
                "#!/bin/sh\necho run >> {}/shim.log\nexec node \"{}/dist/cli.js\" \"$@\"\n",
                dir.display(),
                pkg.display()
            ),
        )
        .unwrap();
        let cache = dir.join("cache");
        remember(&shim, &cache, "agent 1.0.0");
        assert_eq!(cached(&shim, &cache).as_deref(), Some("agent 1.0.0"));
        // A log the shim appends to is not what it launches.
        std::fs::write(dir.join("shim.log"), "run\nrun\n").unwrap();
        assert_eq!(cached(&shim, &cache).as_deref(), Some("agent 1.0.0"));
        let shim_meta = std::fs::metadata(&shim).unwrap();
        // The package is upgraded behind the shim (same size, so only the mtime tells).
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(pkg.join("package.json"), r#"{"version":"2.0.0"}"#).unwrap();
        std::fs::write(pkg.join("dist/cli.js"), "console.log('2.0.0')\n").unwrap();
        assert_eq!(
            std::fs::metadata(&shim).unwrap().modified().unwrap(),
            shim_meta.modified().unwrap()
        );
        assert_eq!(
            cached(&shim, &cache),
            None,
            "a stale version behind the shim"
        );
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn a_shim_naming_its_package_by_a_relative_path_is_probed_again_after_an_upgrade() {
        let dir = scratch("relative-shim");
        let pkg = dir.join("lib/node_modules/agent");
        std::fs::create_dir_all(pkg.join("dist")).unwrap();
        std::fs::create_dir_all(dir.join("bin")).unwrap();
        std::fs::write(pkg.join("package.json"), r#"{"version":"1.0.0"}"#).unwrap();
        std::fs::write(pkg.join("dist/cli.js"), "console.log('1.0.0')\n").unwrap();
        for (name, body) in [
            (
                "npm-style",
                "#!/bin/sh\nbasedir=$(dirname \"$(echo \"$0\" | sed -e 's,\\\\,/,g')\")\nexec node \"$basedir/../lib/node_modules/agent/dist/cli.js\" \"$@\"\n",
            ),
            (
                "dirname",
                "#!/bin/sh\nexec node \"$(dirname \"$0\")/../lib/node_modules/agent/dist/cli.js\" \"$@\"\n",
            ),
            (
                "plain",
                "#!/bin/sh\ncd \"$(dirname \"$0\")\" && exec node ../lib/node_modules/agent/dist/cli.js \"$@\"\n",
            ),
        ] {
            let shim = dir.join("bin").join(name);
            std::fs::write(&shim, body).unwrap();
            let cache = dir.join(format!("cache-{name}"));
            remember(&shim, &cache, "agent 1.0.0");
            assert_eq!(
                cached(&shim, &cache).as_deref(),
                Some("agent 1.0.0"),
                "{name}"
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(pkg.join("package.json"), r#"{"version":"2.0.0"}"#).unwrap();
        for name in ["npm-style", "dirname", "plain"] {
            let cache = dir.join(format!("cache-{name}"));
            assert_eq!(
                cached(&dir.join("bin").join(name), &cache),
                None,
                "{name}: a stale version behind the shim"
            );
        }
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn the_cache_drops_clis_that_are_gone_and_keeps_the_newest() {
        let dir = scratch("prune");
        let cache = dir.join("cache");
        let gone = dir.join("gone");
        std::fs::write(&gone, "x").unwrap();
        remember(&gone, &cache, "gone 1");
        std::fs::remove_file(&gone).unwrap();
        for i in 0..MAX_ENTRIES + 5 {
            let cli = dir.join(format!("cli{i}"));
            std::fs::write(&cli, "x").unwrap();
            remember(&cli, &cache, &format!("cli {i}"));
        }
        let entries = read_cache(&cache);
        assert!(entries.len() <= MAX_ENTRIES, "{}", entries.len());
        assert!(!entries.keys().any(|k| k.ends_with("/gone")));
        let newest = dir.join(format!("cli{}", MAX_ENTRIES + 4));
        assert_eq!(
            cached(&newest, &cache).as_deref(),
            Some(&*format!("cli {}", MAX_ENTRIES + 4))
        );
        std::fs::remove_dir_all(&dir).ok();
    }
}
