//! `plan.json` (`coder-eval plan`): a suite's resolved work units, each with a
//! content-addressed id, so that shards on other machines (`run --plan --shard K/N`,
//! [`super::shard`]) run exactly their part and `coder-eval merge` can tell their results
//! apart and put them together.
//!
//! The shape, `plan_version: 1`:
//!
//! ```json
//! {
//!   "plan_version": 1,
//!   "plan_id": "<sha256 hex of the unit ids, sorted, one per line>",
//!   "coder_eval_version": "0.1.0",
//!   "args": ["--experiment", "exp.yaml", "tasks/a/task.yaml", "--repeats", "3"],
//!   "units": [
//!     {
//!       "id": "<sha256 hex of the unit's inputs, as canonical JSON>",
//!       "kind": "agent",            // or "skipped" (skip: true), "agentless" (agent.type: none)
//!       "variant": "good",          // null outside an experiment
//!       "task_id": "write_ok",
//!       "harness": "claude-code",
//!       "replicate": 0,             // null when the task runs once
//!       "result_dir": "good/write_ok/claude-code/r00",
//!       "task_file": "tasks/a/task.yaml",
//!       "inputs": { ... }           // UnitInputs: what the id hashes
//!     }
//!   ]
//! }
//! ```
//!
//! `args` are the `coder-eval run` arguments the plan was made with (task paths as given:
//! a relative path is relative to the folder a shard runs in); every shard resolves them
//! again and refuses to run when the units it gets differ from the plan's.

use super::UnitId;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The version of `plan.json` this build writes and reads.
pub const PLAN_VERSION: u32 = 1;

/// `plan.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    /// [`PLAN_VERSION`].
    pub plan_version: u32,
    /// [`plan_id`] of the units' ids.
    pub plan_id: String,
    /// The coder-eval that made the plan (`CARGO_PKG_VERSION`).
    pub coder_eval_version: String,
    /// The `coder-eval run` arguments the units were resolved from.
    pub args: Vec<String>,
    /// The units, in the order one unsharded run lists them.
    pub units: Vec<PlanUnit>,
}

/// What a unit is: which path of `coder-eval run` it takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UnitKind {
    /// Runs an agent CLI on a harness.
    Agent,
    /// `skip: true`: recorded SKIPPED, nothing starts.
    Skipped,
    /// `agent.type: none`: criteria on a prepared sandbox.
    Agentless,
}

/// One unit of a plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanUnit {
    /// [`UnitInputs::id`]: sha256, lowercase hex (64 characters).
    pub id: String,
    pub kind: UnitKind,
    #[serde(flatten)]
    pub unit: UnitId,
    /// The unit's result folder, relative to a run's folder ([`UnitId::rel_dir`]).
    pub result_dir: String,
    /// The task file it comes from: relative to the folder the plan was made in when it
    /// lies inside it (a plan names no path of its checkout), else as loaded.
    pub task_file: PathBuf,
    pub inputs: UnitInputs,
}

/// Everything a unit's id hashes. Digests are sha256, lowercase hex.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UnitInputs {
    /// The resolved task and variant: task id, variant, harness, kind, the lineage of every
    /// field a layer set (experiment defaults, variant, `-D`, prompt mutations) and the
    /// run settings that change what runs (native limits, passed variables; not how it is
    /// contained: `--pid-namespace` and `--isolate-network` may differ per shard).
    pub resolved: serde_json::Value,
    /// [`digest_dir`] of the folder holding the task file.
    pub task_files: String,
    /// What the resolved task reads beyond its folder's files ([`task_reads`]): name →
    /// sha256 (hex). Omitted when empty.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub task_reads: BTreeMap<String, String>,
    /// The harness component's bytes (the file given by `--component`/`--components`, else
    /// the built-in one); `null` for units that run no harness.
    pub component: Option<String>,
    /// The scripted model's script file, when the unit plays one.
    pub scripted_model: Option<String>,
    /// The agent CLI's `--version` line; `null` when no CLI is found (or none runs).
    pub cli_version: Option<String>,
    /// This coder-eval's version.
    pub coder_eval_version: String,
    /// The replicate index (`null`: the task runs once).
    pub replicate: Option<u32>,
}

impl UnitInputs {
    /// The unit's id: sha256 (hex) of these inputs as [`canonical_json`].
    pub fn id(&self) -> String {
        let value = serde_json::to_value(self).unwrap_or(serde_json::Value::Null);
        hex(&Sha256::digest(canonical_json(&value).as_bytes()))
    }

    /// The names of the inputs that differ from `other`'s (for a shard that refuses to
    /// run a plan whose inputs changed).
    pub fn differences(&self, other: &UnitInputs) -> Vec<&'static str> {
        [
            (self.resolved != other.resolved, "the resolved task"),
            (
                self.task_files != other.task_files,
                "the task folder's files",
            ),
            (
                self.task_reads != other.task_reads,
                "the files the task reads outside its folder",
            ),
            (self.component != other.component, "the harness component"),
            (
                self.scripted_model != other.scripted_model,
                "the scripted model's script",
            ),
            (self.cli_version != other.cli_version, "the CLI version"),
            (
                self.coder_eval_version != other.coder_eval_version,
                "the coder-eval version",
            ),
            (self.replicate != other.replicate, "the replicate index"),
        ]
        .into_iter()
        .filter_map(|(differs, what)| differs.then_some(what))
        .collect()
    }
}

/// Why a plan cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    #[error("{path}: cannot read the plan")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: not a plan.json (line {line}, column {column})")]
    Invalid {
        path: PathBuf,
        line: usize,
        column: usize,
        #[source]
        source: serde_json::Error,
    },
    #[error("{path}: plan_version {found} is not one this coder-eval reads ({PLAN_VERSION})")]
    Version { path: PathBuf, found: u32 },
    #[error(
        "{path}: plan_id {found} does not match its units (they hash to {computed}): the file was edited"
    )]
    Tampered {
        path: PathBuf,
        found: String,
        computed: String,
    },
}

impl Plan {
    /// A plan of `units` (in run order) made from `args`.
    pub fn new(args: Vec<String>, units: Vec<PlanUnit>) -> Plan {
        Plan {
            plan_version: PLAN_VERSION,
            plan_id: plan_id(units.iter().map(|u| u.id.as_str())),
            coder_eval_version: env!("CARGO_PKG_VERSION").to_string(),
            args,
            units,
        }
    }

    /// Reads and checks `path`: its version, and that its `plan_id` is its units'.
    pub fn read(path: &Path) -> Result<Plan, PlanError> {
        let text = std::fs::read_to_string(path).map_err(|source| PlanError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        let plan: Plan = serde_json::from_str(&text).map_err(|source| PlanError::Invalid {
            path: path.to_path_buf(),
            line: source.line(),
            column: source.column(),
            source,
        })?;
        if plan.plan_version != PLAN_VERSION {
            return Err(PlanError::Version {
                path: path.to_path_buf(),
                found: plan.plan_version,
            });
        }
        let computed = plan_id(plan.units.iter().map(|u| u.id.as_str()));
        if computed != plan.plan_id {
            return Err(PlanError::Tampered {
                path: path.to_path_buf(),
                found: plan.plan_id,
                computed,
            });
        }
        Ok(plan)
    }

    /// Writes it to `path` (atomically).
    pub fn write(&self, path: &Path) -> std::io::Result<()> {
        crate::results::write_json_atomically(path, self)
    }

    /// The unit `unit`, if the plan has it.
    pub fn unit(&self, unit: &UnitId) -> Option<&PlanUnit> {
        self.units.iter().find(|u| u.unit == *unit)
    }
}

/// A plan's id: sha256 (hex) of its unit ids, sorted, each followed by a newline. The same
/// units give the same id whatever their order.
pub fn plan_id<'a>(ids: impl IntoIterator<Item = &'a str>) -> String {
    let mut ids: Vec<&str> = ids.into_iter().collect();
    ids.sort_unstable();
    let mut hasher = Sha256::new();
    for id in ids {
        hasher.update(id.as_bytes());
        hasher.update(b"\n");
    }
    hex(&hasher.finalize())
}

/// `value` as canonical JSON: no whitespace, object keys sorted by their UTF-16 code
/// units (RFC 8785's order), strings and numbers as serde_json writes them. The same
/// value gives the same text whatever order its maps were built in.
pub fn canonical_json(value: &serde_json::Value) -> String {
    use serde_json::Value;
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.encode_utf16().cmp(b.0.encode_utf16()));
            let body: Vec<String> = entries
                .into_iter()
                .map(|(k, v)| format!("{}:{}", Value::String(k.clone()), canonical_json(v)))
                .collect();
            format!("{{{}}}", body.join(","))
        }
        Value::Array(items) => {
            let body: Vec<String> = items.iter().map(canonical_json).collect();
            format!("[{}]", body.join(","))
        }
        other => other.to_string(),
    }
}

/// Lowercase hex.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

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
pub const DIGEST_SKIPS: &[&str] = &["runs", "node_modules", "target", "__pycache__"];

/// sha256 (hex) of a folder's files: for each file, in order of its path relative to
/// `dir` (`/`-separated), the path, a NUL, the file's sha256, a newline. Hidden entries
/// (`.git`, …) and [`DIGEST_SKIPS`] folders are left out, and so are coder-eval's own
/// outputs wherever they are written: a plan file (a JSON object with `plan_version`,
/// `plan_id` and `units`) and a run, shard or merged folder (one holding coder-eval's
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
/// [`digest_dir`]): it holds coder-eval's marker ([`super::folders::OUTPUT_MARKER`]). A
/// task's own `run.json`, `shard.json` or `invocation.json` (a fixture, data) marks
/// nothing: its folder is the task's and is digested.
fn is_output_folder(dir: &Path) -> bool {
    dir.join(super::folders::OUTPUT_MARKER).is_file()
}

/// Whether `bytes` are a plan file's (see [`digest_dir`]): a JSON object with
/// `plan_version`, `plan_id` and `units` (of any version).
pub fn is_plan_file(bytes: &[u8]) -> bool {
    let head = &bytes[..bytes.len().min(64)];
    if !head.trim_ascii_start().starts_with(b"{") || !bytes.windows(9).any(|w| w == b"\"plan_id\"")
    {
        return false;
    }
    serde_json::from_slice::<serde_json::Map<String, serde_json::Value>>(bytes).is_ok_and(|m| {
        ["plan_version", "plan_id", "units"]
            .iter()
            .all(|k| m.contains_key(*k))
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

#[cfg(test)]
mod tests {
    use super::*;

    fn inputs(replicate: Option<u32>) -> UnitInputs {
        UnitInputs {
            resolved: serde_json::json!({"task_id": "t", "b": 1, "a": [1, {"y": 2, "x": 1}]}),
            task_files: "f".into(),
            task_reads: BTreeMap::new(),
            component: Some("c".into()),
            scripted_model: None,
            cli_version: Some("2.0.1 (Claude Code)".into()),
            coder_eval_version: "0.1.0".into(),
            replicate,
        }
    }

    #[test]
    fn a_plan_or_a_shard_written_inside_a_task_folder_leaves_its_digest_as_it_was() {
        let dir = std::env::temp_dir().join(format!("coder-eval-digest-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("task.yaml"), "task_id: t\n").unwrap();
        let before = digest_dir(&dir).unwrap();
        Plan::new(vec!["t.yaml".into()], Vec::new())
            .write(&dir.join("my-plan.json"))
            .unwrap();
        std::fs::create_dir_all(dir.join("shard-0/t/claude-code")).unwrap();
        std::fs::write(
            dir.join("shard-0/shard.json"),
            r#"{"plan_id": "p", "shard": {"index": 0, "count": 1}, "units": []}"#,
        )
        .unwrap();
        std::fs::write(dir.join("shard-0/t/claude-code/task.json"), "{}").unwrap();
        std::fs::create_dir_all(dir.join("out")).unwrap();
        std::fs::write(
            dir.join("out/invocation.json"),
            r#"{"cwd": "/w", "args": ["t.yaml"]}"#,
        )
        .unwrap();
        std::fs::create_dir_all(dir.join("runs2/x")).unwrap();
        std::fs::write(
            dir.join("runs2/run.json"),
            r#"{"result_version": 1, "rows": []}"#,
        )
        .unwrap();
        std::fs::write(dir.join("runs2/x/task.json"), "{}").unwrap();
        for out in ["shard-0", "out", "runs2"] {
            super::super::lock::mark(&dir.join(out)).unwrap();
        }
        assert_eq!(digest_dir(&dir).unwrap(), before);
        // The task's own files still count, a JSON file that is no plan among them.
        std::fs::write(dir.join("data.json"), r#"{"plan_id": 1}"#).unwrap();
        assert_ne!(digest_dir(&dir).unwrap(), before);
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn a_task_fixture_folder_holding_a_user_file_named_like_ours_is_digested() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("task.yaml"), "task_id: t\n").unwrap();
        for name in ["run.json", "shard.json", "invocation.json"] {
            let fixture = dir.path().join(format!("fixtures-{name}"));
            std::fs::create_dir_all(&fixture).unwrap();
            std::fs::write(fixture.join(name), r#"{"name": "mine", "steps": [1, 2]}"#).unwrap();
            std::fs::write(fixture.join("input.txt"), "a\n").unwrap();
            let before = digest_dir(dir.path()).unwrap();
            // Its files count: an edit of either changes the digest.
            std::fs::write(fixture.join("input.txt"), "b\n").unwrap();
            let edited = digest_dir(dir.path()).unwrap();
            assert_ne!(edited, before, "{name}");
            std::fs::write(fixture.join(name), r#"{"name": "yours"}"#).unwrap();
            assert_ne!(digest_dir(dir.path()).unwrap(), edited, "{name}");
        }
    }

    #[test]
    fn every_file_a_task_names_outside_its_folder_is_in_its_reads() {
        let root = tempfile::tempdir().unwrap();
        let root = root.path();
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::create_dir_all(root.join("shared/plug/skills/s1")).unwrap();
        std::fs::create_dir_all(root.join("t")).unwrap();
        std::fs::write(root.join("shared/crit.wasm"), b"v1").unwrap();
        std::fs::write(root.join("shared/check.sh"), "exit 0\n").unwrap();
        std::fs::write(
            root.join("shared/settings.json"),
            r#"{"env": {"FOO": "1"}}"#,
        )
        .unwrap();
        std::fs::write(root.join("shared/plug/skills/s1/SKILL.md"), "one\n").unwrap();
        std::fs::write(
            root.join("shared/rows.jsonl"),
            "{\"id\": \"a\", \"word\": \"x\"}\n{\"id\": \"b\", \"word\": \"y\"}\n",
        )
        .unwrap();
        std::fs::write(
            root.join("t/task.yaml"),
            "task_id: t\ninitial_prompt: hi\nagent:\n  type: claude-code\n  claude_settings: ../shared/settings.json\n  plugins: [{type: local, path: ../shared/plug}]\ndataset: {paths: [../shared/rows.jsonl]}\nsuccess_criteria:\n  - type: component\n    component: ../shared/crit.wasm\n  - type: run_command\n    command: sh ../shared/check.sh\n  - type: file_contains\n    path: out.txt\n    includes: [\"${row.word}\"]\n",
        )
        .unwrap();
        let reads = || -> Vec<BTreeMap<String, String>> {
            crate::task::Task::load_file(&root.join("t/task.yaml"))
                .unwrap()
                .tasks
                .iter()
                .map(|t| task_reads(t).unwrap())
                .collect()
        };
        let first = reads();
        assert!(
            first[0].contains_key("success_criteria[0] ../shared/crit.wasm"),
            "{first:?}"
        );
        let edits: [(&str, &str); 4] = [
            ("shared/crit.wasm", "v2"),
            ("shared/settings.json", r#"{"env": {"FOO": "2"}}"#),
            ("shared/plug/skills/s1/SKILL.md", "two\n"),
            ("shared/check.sh", "exit 1\n"),
        ];
        let mut before = first;
        for (file, text) in edits {
            std::fs::write(root.join(file), text).unwrap();
            let after = reads();
            assert_ne!(after[0], before[0], "{file}");
            before = after;
        }
        // A dataset row's values: row b's reads change, row a's do not.
        std::fs::write(
            root.join("shared/rows.jsonl"),
            "{\"id\": \"a\", \"word\": \"x\"}\n{\"id\": \"b\", \"word\": \"NOPE\"}\n",
        )
        .unwrap();
        let after = reads();
        assert_eq!(after[0], before[0]);
        assert_ne!(after[1], before[1]);
    }

    #[test]
    fn a_fixture_shaped_like_our_outputs_is_digested_without_our_marker() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(d.join("task.yaml"), "task_id: t\n").unwrap();
        std::fs::create_dir_all(d.join("fixtures")).unwrap();
        std::fs::create_dir_all(d.join("data")).unwrap();
        // What coder-eval's invocation.json and run.json look like (the attack's f/t3, DG/t6).
        std::fs::write(
            d.join("fixtures/invocation.json"),
            r#"{"cwd": "/srv/app", "args": ["serve", "--port", "8080"]}"#,
        )
        .unwrap();
        std::fs::write(
            d.join("data/run.json"),
            r#"{"result_version": 1, "rows": [], "note": "fixture"}"#,
        )
        .unwrap();
        std::fs::write(
            d.join("data.json"),
            r#"{"plan_version": 1, "plan_id": "x"}"#,
        )
        .unwrap();
        let mut last = digest_dir(d).unwrap();
        for (file, text) in [
            ("fixtures/expected.txt", "expected: 9090\n"),
            ("data/other.txt", "b\n"),
            ("data.json", r#"{"plan_version": 1, "plan_id": "y"}"#),
        ] {
            std::fs::write(d.join(file), text).unwrap();
            let now = digest_dir(d).unwrap();
            assert_ne!(now, last, "{file}");
            last = now;
        }
    }

    #[test]
    fn canonical_json_sorts_keys_at_every_depth() {
        let a: serde_json::Value =
            serde_json::from_str(r#"{"b":1,"a":{"z":[{"d":1,"c":2}],"é":"x","y":null}}"#).unwrap();
        let b: serde_json::Value =
            serde_json::from_str(r#"{"a":{"y":null,"é":"x","z":[{"c":2,"d":1}]},"b":1}"#).unwrap();
        assert_eq!(canonical_json(&a), canonical_json(&b));
        assert_eq!(
            canonical_json(&a),
            r#"{"a":{"y":null,"z":[{"c":2,"d":1}],"é":"x"},"b":1}"#
        );
    }

    #[test]
    fn unit_ids_hash_every_input_and_plan_ids_ignore_order() {
        let a = inputs(Some(0));
        assert_eq!(a.id().len(), 64);
        assert_eq!(a.id(), inputs(Some(0)).id());
        let mut b = inputs(Some(1));
        assert_ne!(a.id(), b.id());
        assert_eq!(a.differences(&b), vec!["the replicate index"]);
        b.replicate = Some(0);
        b.cli_version = Some("2.0.2 (Claude Code)".into());
        assert_ne!(a.id(), b.id());
        assert_eq!(a.differences(&b), vec!["the CLI version"]);
        let (x, y) = (a.id(), b.id());
        assert_eq!(
            plan_id([x.as_str(), y.as_str()]),
            plan_id([y.as_str(), x.as_str()])
        );
        assert_ne!(plan_id([x.as_str()]), plan_id([x.as_str(), y.as_str()]));
    }

    #[test]
    fn a_folder_digest_follows_content_and_names_not_time() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("task.yaml"), "task_id: t\n").unwrap();
        std::fs::create_dir_all(dir.path().join("data/runs")).unwrap();
        std::fs::create_dir_all(dir.path().join("runs/x")).unwrap();
        std::fs::write(dir.path().join("data/rows.csv"), "a\n").unwrap();
        let first = digest_dir(dir.path()).unwrap();
        // Results and hidden files do not count.
        std::fs::write(dir.path().join("runs/x/task.json"), "{}").unwrap();
        std::fs::write(dir.path().join(".seen"), "1").unwrap();
        assert_eq!(digest_dir(dir.path()).unwrap(), first);
        std::fs::write(dir.path().join("data/rows.csv"), "b\n").unwrap();
        let changed = digest_dir(dir.path()).unwrap();
        assert_ne!(changed, first);
        std::fs::rename(
            dir.path().join("data/rows.csv"),
            dir.path().join("data/rows2.csv"),
        )
        .unwrap();
        assert_ne!(digest_dir(dir.path()).unwrap(), changed);
    }

    #[test]
    fn a_plan_reads_back_and_an_edited_one_is_refused() {
        let unit = |r: u32| {
            let inputs = inputs(Some(r));
            PlanUnit {
                id: inputs.id(),
                kind: UnitKind::Agent,
                unit: UnitId {
                    variant: None,
                    task_id: "t".into(),
                    harness: "claude-code".into(),
                    replicate: Some(r),
                },
                result_dir: format!("t/claude-code/r{r:02}"),
                task_file: "t/task.yaml".into(),
                inputs,
            }
        };
        let plan = Plan::new(vec!["t/task.yaml".into()], vec![unit(0), unit(1)]);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("plan.json");
        plan.write(&path).unwrap();
        assert_eq!(Plan::read(&path).unwrap(), plan);
        let mut edited = plan.clone();
        edited.units.pop();
        edited.write(&path).unwrap();
        let err = Plan::read(&path).unwrap_err().to_string();
        assert!(err.contains("does not match its units"), "{err}");
        std::fs::write(&path, "{\"plan_version\": 1,\n \"units\": 3}").unwrap();
        let err = Plan::read(&path).unwrap_err().to_string();
        assert!(err.contains("line 2"), "{err}");
    }
}
