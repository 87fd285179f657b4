//! `plan.json` (`coder-eval plan`): a suite's resolved work units, each with a
//! content-addressed id, so that shards on other machines (`run --plan --shard K/N`,
//! [`super::shard`]) run exactly their part and `coder-eval merge` can tell their results
//! apart and put them together.
//!
//! The shape, `plan_version: 2`: the units in groups, each group the replicates of one
//! task × variant × harness, so that what is the same for every replicate (the resolved
//! task, the digests, the versions) is written once per group, not once per replicate:
//!
//! ```json
//! {
//!   "plan_version": 2,
//!   "plan_id": "<sha256 hex of the unit ids, sorted, one per line>",
//!   "coder_eval_version": "0.1.0",
//!   "args": ["--experiment", "exp.yaml", "tasks/a/task.yaml", "--repeats", "3"],
//!   "groups": [
//!     {
//!       "kind": "agent",            // or "skipped" (skip: true), "agentless" (agent.type: none)
//!       "variant": "good",          // null outside an experiment
//!       "task_id": "write_ok",
//!       "harness": "claude-code",
//!       "task_file": "tasks/a/task.yaml",
//!       "inputs": { ... },          // UnitInputs, "replicate": null (each unit's is below)
//!       "replicates": [0, 1, 2],    // null: one unit, the task runs once
//!       "ids": ["<sha256 hex>", "<sha256 hex>", "<sha256 hex>"]  // one per replicate
//!     }
//!   ]
//! }
//! ```
//!
//! Each unit is its group's fields with its replicate index and id; its result folder is
//! [`UnitId::rel_dir`] (`good/write_ok/claude-code/r00`). `plan_version: 1` plans (every
//! unit written whole in a `units` list, with its `result_dir` and `inputs`) are still
//! read: their units and ids are the same.
//!
//! `args` are the `coder-eval run` arguments the plan was made with (task paths as given:
//! a relative path is relative to the folder a shard runs in); every shard resolves them
//! again and refuses to run when the units it gets differ from the plan's.

use super::UnitId;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

mod digest;
pub use digest::{digest_dir, digest_file, is_plan_file, task_reads};

/// A group's [`UnitInputs`] as canonical JSON, split where the replicate index goes
/// ([`UnitInputs::id_template`]).
#[derive(Debug, Clone)]
pub struct IdTemplate {
    prefix: String,
    suffix: String,
}

impl IdTemplate {
    /// The id of the group's replicate `replicate`: sha256 (hex) of the canonical JSON.
    pub fn id(&self, replicate: u32) -> String {
        let mut hasher = Sha256::new();
        hasher.update(self.prefix.as_bytes());
        hasher.update(replicate.to_string().as_bytes());
        hasher.update(self.suffix.as_bytes());
        hex(&hasher.finalize())
    }
}

/// The version of `plan.json` this build writes; it reads it and version 1.
pub(crate) const PLAN_VERSION: u32 = 2;

/// The older version this build still reads (every unit written whole).
pub(crate) const PLAN_VERSION_UNITS: u32 = 1;

mod file;

/// `plan.json`, its units expanded (in memory a unit is whole whatever the version read).
/// Written as [`PLAN_VERSION`] (see the module docs); read from either version.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// [`PLAN_VERSION`] (the version read, for a plan read from a file).
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

    /// The ids of this unit's group (the same inputs, another replicate index), made
    /// without serializing the inputs again for each: [`IdTemplate::id`] of `r` is
    /// [`UnitInputs::id`] with `replicate: r`. `None` when the canonical JSON cannot be
    /// split so (each replicate's id is then made whole).
    pub fn id_template(&self) -> Option<IdTemplate> {
        let text = |r: u32| {
            let mut inputs = self.clone();
            inputs.replicate = Some(r);
            serde_json::to_value(&inputs)
                .ok()
                .map(|v| canonical_json(&v))
        };
        let (zero, one) = (text(0)?, text(1)?);
        if zero.len() != one.len() {
            return None;
        }
        let mut differ = zero
            .bytes()
            .zip(one.bytes())
            .enumerate()
            .filter(|(_, (a, b))| a != b);
        let (at, _) = differ.next()?;
        if differ.next().is_some() {
            return None;
        }
        Some(IdTemplate {
            prefix: zero[..at].to_string(),
            suffix: zero[at + 1..].to_string(),
        })
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
    #[error(
        "{path}: plan_version {found} is not one this coder-eval reads ({PLAN_VERSION_UNITS} or \
         {PLAN_VERSION}): make the plan again with this coder-eval"
    )]
    Version { path: PathBuf, found: u32 },
    /// A version-2 group whose replicates and ids do not pair up.
    #[error("{path}: groups[{group}]: {message}")]
    Group {
        path: PathBuf,
        group: usize,
        message: String,
    },
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
    /// The absolute paths the plan keeps, each once in first-seen order: its units' task
    /// files and its stored arguments (a path, or the value of `--flag=PATH`). Paths inside
    /// the folder the plan was made in were stored relative to it already; these lie
    /// outside it, so a shard finds them only where they are on the planning machine.
    pub fn absolute_paths(&self) -> Vec<String> {
        let mut found: Vec<String> = Vec::new();
        let args = self.args.iter().map(|a| match a.split_once('=') {
            Some((flag, value)) if flag.starts_with("--") => value,
            _ => a.as_str(),
        });
        let tasks = self.units.iter().filter_map(|u| u.task_file.to_str());
        for path in tasks.chain(args) {
            if Path::new(path).is_absolute() && !found.iter().any(|f| f == path) {
                found.push(path.to_string());
            }
        }
        found
    }

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
        let read: file::PlanFile =
            serde_json::from_str(&text).map_err(|source| PlanError::Invalid {
                path: path.to_path_buf(),
                line: source.line(),
                column: source.column(),
                source,
            })?;
        if read.plan_version != PLAN_VERSION && read.plan_version != PLAN_VERSION_UNITS {
            return Err(PlanError::Version {
                path: path.to_path_buf(),
                found: read.plan_version,
            });
        }
        let plan = read
            .into_plan()
            .map_err(|(group, message)| PlanError::Group {
                path: path.to_path_buf(),
                group,
                message,
            })?;
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
pub(crate) fn canonical_json(value: &serde_json::Value) -> String {
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

#[cfg(test)]
mod tests;
