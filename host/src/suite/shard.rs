//! Shards of a plan ([`super::plan`]): which units shard K of N runs ([`Shard::owns`]),
//! the `shard.json` each shard folder holds ([`ShardRecord`]), and gathering shard
//! folders into one run ([`gather`], `coder-eval merge`).

use super::UnitId;
use super::plan::{Plan, PlanUnit};
use crate::results::TaskResult;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Shard `index` of `count` (0-based: Kubernetes' `JOB_COMPLETION_INDEX` runs 0 … N−1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    pub index: u32,
    pub count: u32,
}

/// The environment variable Kubernetes sets in each pod of an Indexed Job: the shard's
/// index.
pub const INDEX_ENV: &str = "JOB_COMPLETION_INDEX";
/// The environment variable `--shard-from-env` reads the number of shards from (unless
/// `--shard-count` gives it): the Job's `completions` (the emitted manifest sets it).
pub const COUNT_ENV: &str = "CODER_EVAL_SHARD_COUNT";

/// Why a shard cannot be named.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ShardError {
    #[error("--shard {given}: expected K/N with 0 <= K < N (e.g. 0/3, 1/3, 2/3)")]
    Syntax { given: String },
    #[error("--shard-from-env: {name} is not set")]
    Unset { name: String },
    #[error("--shard-from-env: {name}={value} is not a whole number")]
    NotNumber { name: String, value: String },
    #[error("shard index {index} is not below the number of shards {count}")]
    OutOfRange { index: u32, count: u32 },
}

impl Shard {
    /// `index` of `count`, checked.
    pub fn new(index: u32, count: u32) -> Result<Shard, ShardError> {
        if index >= count {
            return Err(ShardError::OutOfRange { index, count });
        }
        Ok(Shard { index, count })
    }

    /// Parses `K/N`.
    pub fn parse(text: &str) -> Result<Shard, ShardError> {
        let syntax = || ShardError::Syntax {
            given: text.to_string(),
        };
        let (k, n) = text.split_once('/').ok_or_else(syntax)?;
        let (k, n) = (
            digits(k.trim()).ok_or_else(syntax)?,
            digits(n.trim()).ok_or_else(syntax)?,
        );
        Shard::new(k, n).map_err(|_| syntax())
    }

    /// From [`INDEX_ENV`] and `count` (else [`COUNT_ENV`]); `var` reads a variable.
    pub fn from_env(
        count: Option<u32>,
        var: impl Fn(&str) -> Option<String>,
    ) -> Result<Shard, ShardError> {
        let number = |name: &str| -> Result<u32, ShardError> {
            let value = var(name).ok_or_else(|| ShardError::Unset { name: name.into() })?;
            digits(&value).ok_or(ShardError::NotNumber {
                name: name.into(),
                value: value.clone(),
            })
        };
        let index = number(INDEX_ENV)?;
        let count = match count {
            Some(n) => n,
            None => number(COUNT_ENV)?,
        };
        Shard::new(index, count)
    }

    /// The shard a unit id falls into: its first 8 bytes (16 hex digits) as a big-endian
    /// number, modulo `count`. Stable: the same id lands in the same shard on every
    /// machine and in every version.
    pub fn of(unit_id: &str, count: u32) -> u32 {
        let head = unit_id.get(..16).unwrap_or(unit_id);
        let n = u64::from_str_radix(head, 16).unwrap_or(0);
        (n % u64::from(count.max(1))) as u32
    }

    /// Whether this shard runs the unit of id `unit_id`.
    pub fn owns(&self, unit_id: &str) -> bool {
        Shard::of(unit_id, self.count) == self.index
    }

    /// `K/N`.
    pub fn label(&self) -> String {
        format!("{}/{}", self.index, self.count)
    }
}

/// A decimal number of ASCII digits only (no sign, no blank: what Kubernetes sets).
fn digits(text: &str) -> Option<u32> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

/// `shard.json`, written into a shard's folder before its units run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShardRecord {
    /// The plan's `plan_id`.
    pub plan_id: String,
    pub shard: Shard,
    /// The ids of the units this shard runs (plan order).
    pub units: Vec<String>,
}

pub use super::folders::SHARD_FILE;

impl ShardRecord {
    /// Writes it into `dir` (atomically).
    pub fn write(&self, dir: &Path) -> std::io::Result<()> {
        crate::results::write_json_atomically(&dir.join(SHARD_FILE), self)
    }

    /// Reads `dir/shard.json`.
    pub fn read(dir: &Path) -> Result<ShardRecord, MergeError> {
        let path = dir.join(SHARD_FILE);
        let text = std::fs::read_to_string(&path).map_err(|source| MergeError::NotAShard {
            dir: dir.to_path_buf(),
            source,
        })?;
        serde_json::from_str(&text).map_err(|source| MergeError::Unreadable { path, source })
    }
}

pub use super::lock::{LOCK_FILE, lock_folder};

/// The file that makes `dir` a run folder (`invocation.json` or `run.json`) when it has
/// one: a plain run's folder, which a shard must not run into.
pub fn run_folder_marker(dir: &Path) -> Option<&'static str> {
    [super::resume::INVOCATION_FILE, "run.json"]
        .into_iter()
        .find(|f| dir.join(f).exists())
}

/// Why shard folders cannot be merged.
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    #[error(
        "{dir}: not a shard folder (no shard.json: was it made by `coder-eval run --plan … --shard K/N`?)"
    )]
    NotAShard {
        dir: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: unreadable")]
    Unreadable {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    #[error(
        "{dir} is a shard of another plan: its plan_id is {found}, the plan given ({plan_file}) has {expected}"
    )]
    ForeignPlan {
        dir: PathBuf,
        found: String,
        expected: String,
        plan_file: PathBuf,
    },
    /// `shard.json` lists a unit its shard does not run ([`Shard::owns`]): edited, or
    /// copied from another shard's folder.
    #[error(
        "{path}: lists unit {unit}, which is not shard {shard}'s (a unit falls in shard \
         K/N when its id's first 16 hex digits mod N is K): was shard.json edited or \
         copied from another shard's folder? merge refuses it"
    )]
    NotItsUnit {
        path: PathBuf,
        shard: String,
        unit: String,
    },
    #[error("{path}: cannot copy into the merged run")]
    Copy {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// A unit found in more than one shard folder: the result kept and the ones dropped.
#[derive(Debug, Clone, PartialEq)]
pub struct Duplicate {
    pub unit: UnitId,
    pub kept: PathBuf,
    pub dropped: Vec<PathBuf>,
}

/// Shard folders gathered against their plan.
#[derive(Debug)]
pub struct Gathered {
    /// Per plan unit with a complete result, in plan order: the unit, its result and the
    /// shard folder it came from.
    pub found: Vec<(PlanUnit, TaskResult, PathBuf)>,
    pub duplicates: Vec<Duplicate>,
    /// The plan's units no folder holds a complete result of.
    pub missing: Vec<PlanUnit>,
}

/// Reads each shard folder's `shard.json` (refusing one of another plan, or one listing a
/// unit its shard does not run: [`MergeError::NotItsUnit`]) and finds, for
/// each of the plan's units, its complete `task.json` ([`super::resume::completed`]) in
/// the folders whose shard ran it. A unit in two folders is kept from the first given
/// and the others are listed as dropped.
pub fn gather(plan: &Plan, plan_file: &Path, dirs: &[PathBuf]) -> Result<Gathered, MergeError> {
    let mut records = Vec::new();
    for dir in dirs {
        let record = ShardRecord::read(dir)?;
        if record.plan_id != plan.plan_id {
            return Err(MergeError::ForeignPlan {
                dir: dir.clone(),
                found: record.plan_id,
                expected: plan.plan_id.clone(),
                plan_file: plan_file.to_path_buf(),
            });
        }
        if let Some(id) = record.units.iter().find(|id| !record.shard.owns(id)) {
            let unit = plan
                .units
                .iter()
                .find(|u| &u.id == id)
                .map_or_else(|| id.clone(), |u| format!("{} (id {id})", u.unit.label()));
            return Err(MergeError::NotItsUnit {
                path: dir.join(SHARD_FILE),
                shard: record.shard.label(),
                unit,
            });
        }
        records.push((dir, record));
    }
    let mut gathered = Gathered {
        found: Vec::new(),
        duplicates: Vec::new(),
        missing: Vec::new(),
    };
    // Sets, not scans: a shard folder may list 100000 units.
    let records: Vec<(&PathBuf, std::collections::HashSet<&str>)> = records
        .iter()
        .map(|(dir, r)| (*dir, r.units.iter().map(String::as_str).collect()))
        .collect();
    for unit in &plan.units {
        let mut hits: Vec<(PathBuf, TaskResult)> = records
            .iter()
            .filter(|(_, ids)| ids.contains(unit.id.as_str()))
            .filter_map(|(dir, _)| {
                super::resume::completed(dir, &unit.unit).map(|r| ((*dir).clone(), r))
            })
            .collect();
        if hits.is_empty() {
            gathered.missing.push(unit.clone());
            continue;
        }
        let (dir, result) = hits.remove(0);
        if !hits.is_empty() {
            gathered.duplicates.push(Duplicate {
                unit: unit.unit.clone(),
                kept: dir.clone(),
                dropped: hits.into_iter().map(|(d, _)| d).collect(),
            });
        }
        gathered.found.push((unit.clone(), result, dir));
    }
    Ok(gathered)
}

/// Copies the folder `from` to `to` (created): each file a copy of its own ([`copy_file`]:
/// a reflink where the file system can, so no block is written twice), never a hard
/// link (editing a merged file must not edit the shard's, nor another merge's); symbolic
/// links recreated as they are.
pub fn copy_tree(from: &Path, to: &Path) -> Result<(), MergeError> {
    let fail = |path: &Path| {
        let path = path.to_path_buf();
        move |source| MergeError::Copy { path, source }
    };
    std::fs::create_dir_all(to).map_err(fail(to))?;
    for entry in std::fs::read_dir(from).map_err(fail(from))? {
        let entry = entry.map_err(fail(from))?;
        let (src, dst) = (entry.path(), to.join(entry.file_name()));
        let kind = entry.file_type().map_err(fail(&src))?;
        if kind.is_symlink() {
            let target = std::fs::read_link(&src).map_err(fail(&src))?;
            let _ = std::fs::remove_file(&dst);
            std::os::unix::fs::symlink(target, &dst).map_err(fail(&dst))?;
        } else if kind.is_dir() {
            copy_tree(&src, &dst)?;
        } else {
            let _ = std::fs::remove_file(&dst);
            copy_file(&src, &dst).map_err(fail(&src))?;
        }
    }
    Ok(())
}

/// Copies the file `from` to `to` (created, with `from`'s permissions): a reflink
/// (`FICLONE`: btrfs, XFS, bcachefs share the blocks until either file is written) where
/// the file system can, else a byte copy (`std::fs::copy`).
pub(crate) fn copy_file(from: &Path, to: &Path) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    let src = std::fs::File::open(from)?;
    let permissions = src.metadata()?.permissions();
    let dst = std::fs::File::create(to)?;
    // SAFETY: FICLONE takes the source's file descriptor as its argument; both
    // descriptors are open files owned by this function for the whole call.
    let cloned = unsafe { libc::ioctl(dst.as_raw_fd(), libc::FICLONE, src.as_raw_fd()) } == 0;
    drop(dst);
    if cloned {
        std::fs::set_permissions(to, permissions)
    } else {
        std::fs::copy(from, to).map(|_| ())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_copied_tree_shares_no_file_with_its_source() {
        let tmp = tempfile::tempdir().unwrap();
        let (from, to) = (tmp.path().join("shard"), tmp.path().join("merged"));
        std::fs::create_dir_all(from.join("workspace")).unwrap();
        std::fs::write(from.join("task.json"), "{}").unwrap();
        std::fs::write(from.join("workspace/a.txt"), "shard").unwrap();
        copy_tree(&from, &to).unwrap();
        assert_eq!(
            std::fs::read_to_string(to.join("workspace/a.txt")).unwrap(),
            "shard"
        );
        // Editing the copy in place leaves the source as it was (a hard link would not).
        std::fs::write(to.join("workspace/a.txt"), "edited").unwrap();
        std::fs::write(to.join("task.json"), "[]").unwrap();
        assert_eq!(
            std::fs::read_to_string(from.join("workspace/a.txt")).unwrap(),
            "shard"
        );
        assert_eq!(
            std::fs::read_to_string(from.join("task.json")).unwrap(),
            "{}"
        );
        use std::os::unix::fs::MetadataExt;
        assert_eq!(std::fs::metadata(to.join("task.json")).unwrap().nlink(), 1);
    }

    #[test]
    fn shards_parse_and_come_from_the_environment() {
        assert_eq!(Shard::parse("1/3"), Ok(Shard { index: 1, count: 3 }));
        for bad in ["3/3", "1", "a/3", "1/0", "-1/3", "1/3/4", "+1/3", "1/+3"] {
            assert!(
                matches!(Shard::parse(bad), Err(ShardError::Syntax { .. })),
                "{bad}"
            );
        }
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == name)
                    .map(|(_, v)| v.to_string())
            }
        };
        assert_eq!(
            Shard::from_env(None, env(&[(INDEX_ENV, "2"), (COUNT_ENV, "4")])),
            Ok(Shard { index: 2, count: 4 })
        );
        assert_eq!(
            Shard::from_env(Some(5), env(&[(INDEX_ENV, "4")])),
            Ok(Shard { index: 4, count: 5 })
        );
        assert_eq!(
            Shard::from_env(None, env(&[(INDEX_ENV, "2")])),
            Err(ShardError::Unset {
                name: COUNT_ENV.into()
            })
        );
        assert_eq!(
            Shard::from_env(Some(2), env(&[(INDEX_ENV, "2")])),
            Err(ShardError::OutOfRange { index: 2, count: 2 })
        );
        assert!(matches!(
            Shard::from_env(Some(2), env(&[(INDEX_ENV, "x")])),
            Err(ShardError::NotNumber { .. })
        ));
        for bad in ["+1", " 1", "1 ", ""] {
            assert!(
                matches!(
                    Shard::from_env(Some(2), |_: &str| Some(bad.to_string())),
                    Err(ShardError::NotNumber { .. })
                ),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn a_shard_folder_is_locked_by_one_holder_at_a_time() {
        let dir = std::env::temp_dir().join(format!("coder-eval-lock-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let held = lock_folder(&dir).unwrap();
        let err = lock_folder(&dir).unwrap_err();
        assert!(
            err.to_string()
                .contains(&format!("pid {}", std::process::id())),
            "{err}"
        );
        drop(held);
        assert!(lock_folder(&dir).is_ok(), "the lock goes with its holder");
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn each_unit_falls_in_exactly_one_shard_by_its_first_eight_bytes() {
        // 0x0000000000000007 = 7: shard 7 mod 3 = 1; the rest of the id does not count.
        let id = format!("{:016x}{}", 7u64, "f".repeat(48));
        assert_eq!(Shard::of(&id, 3), 1);
        assert_eq!(Shard::of(&format!("{:016x}{}", 7u64, "0".repeat(48)), 3), 1);
        let ids: Vec<String> = (0..200u64)
            .map(|i| super::super::plan::hex(&sha2::Sha256::digest(i.to_le_bytes())))
            .collect();
        let shards: Vec<Shard> = (0..3).map(|k| Shard::new(k, 3).unwrap()).collect();
        let mut sizes = [0; 3];
        for id in &ids {
            let owners: Vec<u32> = shards
                .iter()
                .filter(|s| s.owns(id))
                .map(|s| s.index)
                .collect();
            assert_eq!(owners.len(), 1, "{id}");
            sizes[owners[0] as usize] += 1;
        }
        // Spread: none near empty.
        assert!(sizes.iter().all(|n| *n > 40), "{sizes:?}");
    }

    use sha2::Digest;
}
