//! What a unit's id hashes of the files it reads: a task folder's digest
//! ([`digest_dir`], leaving coder-eval's own outputs out), a file's ([`digest_file`]),
//! and what a resolved task reads beyond its folder ([`task_reads`]).

use super::{canonical_json, hex};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::Path;

/// sha256 (hex) of a file's bytes.
pub fn digest_file(path: &Path) -> std::io::Result<String> {
    Ok(hex(&Sha256::digest(std::fs::read(path)?)))
}

/// What a resolved task reads that its folder's digest ([`digest_dir`]) may not hold,
/// each as name → sha256 (hex): `initial_prompt` and `agent.system_prompt` (the text as
/// read, from whichever file: `initial_prompt_file: ../shared/prompt.md`, a variant's
/// prompt file, a prompt mutation), `agent.claude_settings` (the object as read, as
/// [`canonical_json`]), `success_criteria` (as resolved, a dataset row's values in
/// them), and every file or folder the task names ([`crate::task::Task::named_paths`]:
/// template, reference, plugins, criterion components and scripts) that lies outside
/// the task's folder (named by field and path relative to it, e.g.
/// `sandbox.template_dir ../templates/py`; a folder as [`digest_dir`]). Paths are not
/// hashed, contents are: the same files at another checkout path give the same map.
pub fn task_reads(task: &crate::task::Task) -> std::io::Result<BTreeMap<String, String>> {
    let mut reads = BTreeMap::new();
    if !task.prompt.is_empty() {
        reads.insert(
            "initial_prompt".to_string(),
            hex(&Sha256::digest(task.prompt.as_bytes())),
        );
    }
    if let Some(system) = &task.agent.system_prompt {
        reads.insert(
            "agent.system_prompt".to_string(),
            hex(&Sha256::digest(system.as_bytes())),
        );
    }
    let dir = task
        .path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let dir = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    let mut outside = |what: &str, path: &Path| -> std::io::Result<()> {
        let real = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
        // Inside the folder its digest holds it; an ancestor of it is no file it reads.
        if real.starts_with(&dir) || dir.starts_with(&real) {
            return Ok(());
        }
        let digest = if real.is_dir() {
            digest_dir(&real)?
        } else {
            digest_file(&real)?
        };
        reads.insert(format!("{what} {}", relative_to(&real, &dir)), digest);
        Ok(())
    };
    for (what, path) in task.named_paths() {
        outside(&what, &path)?;
    }
    if let Some(crate::task::agent::ClaudeSettings::Object(settings)) = &task.agent.claude_settings
    {
        let text = canonical_json(&serde_json::Value::Object(settings.clone()));
        reads.insert(
            "agent.claude_settings".to_string(),
            hex(&Sha256::digest(text.as_bytes())),
        );
    }
    if !task.success_criteria.is_empty() {
        // As resolved: a dataset row's values substituted into them.
        let criteria = serde_json::to_value(&task.success_criteria).unwrap_or_default();
        reads.insert(
            "success_criteria".to_string(),
            hex(&Sha256::digest(canonical_json(&criteria).as_bytes())),
        );
    }
    Ok(reads)
}

/// `path` relative to `base` (both absolute), with `..` steps up to their common folder,
/// `/`-separated.
fn relative_to(path: &Path, base: &Path) -> String {
    let (p, b): (Vec<_>, Vec<_>) = (path.components().collect(), base.components().collect());
    let common = p.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let mut parts: Vec<String> = vec!["..".to_string(); b.len() - common];
    parts.extend(
        p[common..]
            .iter()
            .map(|c| c.as_os_str().to_string_lossy().into_owned()),
    );
    parts.join("/")
}

/// Folder names [`digest_dir`] leaves out: what runs, builds and installs put beside task
/// files (`runs/` is `coder-eval run`'s default output folder).
pub(crate) const DIGEST_SKIPS: &[&str] = &["runs", "node_modules", "target", "__pycache__"];

/// sha256 (hex) of a folder's files: for each file, in order of its path relative to
/// `dir` (`/`-separated), the path, a NUL, the file's sha256, a newline. Hidden entries
/// (`.git`, …) and [`DIGEST_SKIPS`] folders are left out, and so are coder-eval's own
/// outputs wherever they are written: a plan file (a JSON object with `plan_version`,
/// `plan_id` and `groups`, or version 1's `units`) and a run, shard or merged folder (one holding coder-eval's
/// marker: [`is_output_folder`]), so a plan or a shard written inside a task folder does
/// not change the folder's digest. A symbolic link is followed: it counts as its target
/// path and the target's content (a file's sha256, a folder's files under the link's
/// path), so editing what a link reaches changes the digest. Errors: a dangling link or a
/// link loop, naming the link's path (an `InvalidInput` error), or a file that cannot be
/// read.
pub fn digest_dir(dir: &Path) -> std::io::Result<String> {
    let mut files: Vec<(String, String)> = Vec::new();
    let mut within = vec![dir.canonicalize()?];
    walk(dir, "", &mut files, &mut within)?;
    files.sort();
    let mut hasher = Sha256::new();
    for (rel, digest) in files {
        hasher.update(rel.as_bytes());
        hasher.update(b"\0");
        hasher.update(digest.as_bytes());
        hasher.update(b"\n");
    }
    Ok(hex(&hasher.finalize()))
}

/// Whether `dir` is a folder coder-eval runs, shards or merges write (see
/// [`digest_dir`]): it holds coder-eval's marker ([`crate::suite::folders::OUTPUT_MARKER`]). A
/// task's own `run.json`, `shard.json` or `invocation.json` (a fixture, data) marks
/// nothing: its folder is the task's and is digested.
fn is_output_folder(dir: &Path) -> bool {
    dir.join(crate::suite::folders::OUTPUT_MARKER).is_file()
}

/// Whether `bytes` are a plan file's (see [`digest_dir`]): a JSON object with
/// `plan_version`, `plan_id` and `groups` (version 1: `units`).
pub fn is_plan_file(bytes: &[u8]) -> bool {
    let head = &bytes[..bytes.len().min(64)];
    if !head.trim_ascii_start().starts_with(b"{") || !bytes.windows(9).any(|w| w == b"\"plan_id\"")
    {
        return false;
    }
    serde_json::from_slice::<serde_json::Map<String, serde_json::Value>>(bytes).is_ok_and(|m| {
        ["plan_version", "plan_id"]
            .iter()
            .all(|k| m.contains_key(*k))
            && (m.contains_key("groups") || m.contains_key("units"))
    })
}

/// `within`: the real paths of the folders being walked (the root, then each one below),
/// for telling a link loop.
fn walk(
    dir: &Path,
    prefix: &str,
    out: &mut Vec<(String, String)>,
    within: &mut Vec<std::path::PathBuf>,
) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') {
            continue;
        }
        let rel = format!("{prefix}{name}");
        let mut kind = entry.file_type()?;
        if kind.is_symlink() {
            let path = entry.path();
            let target = std::fs::read_link(&path)?;
            let bad = |what: String| std::io::Error::new(std::io::ErrorKind::InvalidInput, what);
            // Followed: what the link reaches is the task's as much as a plain file is.
            let meta = std::fs::metadata(&path).map_err(|e| {
                bad(format!(
                    "{}: a symbolic link to {} that does not resolve ({e})",
                    path.display(),
                    target.display()
                ))
            })?;
            out.push((
                rel.clone(),
                format!("symlink:{}", target.to_string_lossy().into_owned()),
            ));
            kind = meta.file_type();
        }
        if kind.is_dir() {
            let path = entry.path();
            if !DIGEST_SKIPS.contains(&name.as_str()) && !is_output_folder(&path) {
                // Only a link can lead back to a folder being walked.
                let real = path.canonicalize()?;
                if within.contains(&real) {
                    return Err(std::io::Error::new(
                        std::io::ErrorKind::InvalidInput,
                        format!(
                            "{}: a symbolic link loop (it leads back to {}, a folder it is in)",
                            path.display(),
                            real.display()
                        ),
                    ));
                }
                within.push(real);
                walk(&path, &format!("{rel}/"), out, within)?;
                within.pop();
            }
        } else if kind.is_file() {
            let bytes = std::fs::read(entry.path())?;
            if !is_plan_file(&bytes) {
                out.push((rel, hex(&Sha256::digest(&bytes))));
            }
        }
    }
    Ok(())
}
