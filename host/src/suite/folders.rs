//! That every unit of a run has a result folder of its own, not inside another's
//! ([`check`]): `--resume` deletes a unit's folder before it runs the unit again.

use crate::components::BUILTIN_HARNESSES;
use crate::run::{PrepareError, Prepared};
use std::collections::HashMap;
use std::path::PathBuf;

/// Why `part` (a part of a task id below the first, e.g. a dataset row id) cannot name a
/// folder: `None` when it can. Reserved: `workspace` and `home` (a unit's own folders), a
/// replicate folder (`r00`, `r01`, `r007`, `r0007`, … at any width
/// [`super::replicate_dir_of`] writes; `r1` is not one), a built-in harness, or a harness of this run.
fn reserved(part: &str, harnesses: &[&str]) -> Option<&'static str> {
    match part {
        "workspace" | "home" => Some("a unit's own folder"),
        _ if part
            .strip_prefix('r')
            .filter(|n| n.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|n| n.parse::<u32>().ok())
            .is_some_and(|n| {
                let unit = super::UnitId {
                    variant: None,
                    task_id: String::new(),
                    harness: String::new(),
                    replicate: Some(n),
                    replicates: None,
                };
                unit.candidate_dirs().iter().any(|d| d.ends_with(part))
            }) =>
        {
            Some("a replicate's folder")
        }
        _ if BUILTIN_HARNESSES.iter().any(|h| h.name == part) || harnesses.contains(&part) => {
            Some("a harness's folder")
        }
        _ => None,
    }
}

/// The file in a run's folder that keeps how the run was invoked (`run --resume` reads it).
pub const INVOCATION_FILE: &str = "invocation.json";
/// The file name in a shard's folder (and a merged run's): its plan and units.
pub const SHARD_FILE: &str = "shard.json";
/// The lock file in a shard's or a run's folder (held with `flock` while a process runs
/// into it: `suite::lock`).
pub const LOCK_FILE: &str = ".shard.lock";
/// The marker coder-eval writes into every folder it runs, shards or merges into (with
/// its lock, `suite::lock`): a folder digest (`suite::plan::digest_dir`) leaves out the
/// folders that hold it, and only those.
pub const OUTPUT_MARKER: &str = ".coder-eval-results";

/// The files coder-eval writes at the top of a run's folder: no unit's first folder (its
/// variant id, else its task id's first part) may take one of these names.
pub const RUN_FOLDER_FILES: [&str; 7] = [
    "run.json",
    "junit.xml",
    "report.html",
    INVOCATION_FILE,
    SHARD_FILE,
    LOCK_FILE,
    OUTPUT_MARKER,
];

/// Refuses a run whose units' result folders collide: its first folder named as a file
/// of the run's folder ([`RUN_FOLDER_FILES`]), a task id part below the first
/// that is a reserved folder name ([`PrepareError::ReservedId`]), or one unit's folder
/// inside another's ([`PrepareError::NestedFolder`]), naming both task files. (Equal
/// folders are [`PrepareError::Duplicate`], found as the units are made.)
pub fn check(units: &[Prepared]) -> Result<(), PrepareError> {
    let harnesses: Vec<&str> = units.iter().map(|u| u.harness.as_str()).collect();
    for u in units {
        let dir = u.unit.rel_dir();
        let top = dir
            .iter()
            .next()
            .and_then(|c| c.to_str())
            .unwrap_or_default();
        if RUN_FOLDER_FILES.contains(&top) {
            return Err(PrepareError::ReservedId {
                task: u.unit.task_id.clone(),
                file: u.task.path.display().to_string(),
                part: top.to_string(),
                why: "a file of the run's folder".to_string(),
            });
        }
        for part in u.unit.task_id.split('/').skip(1) {
            if let Some(why) = reserved(part, &harnesses) {
                return Err(PrepareError::ReservedId {
                    task: u.unit.task_id.clone(),
                    file: u.task.path.display().to_string(),
                    part: part.to_string(),
                    why: why.to_string(),
                });
            }
        }
    }
    let folders: HashMap<PathBuf, &Prepared> =
        units.iter().map(|u| (u.unit.rel_dir(), u)).collect();
    for u in units {
        let dir = u.unit.rel_dir();
        for up in dir.ancestors().skip(1) {
            if let Some(outer) = folders.get(up) {
                return Err(PrepareError::NestedFolder {
                    inner: u.unit.task_id.clone(),
                    inner_file: u.task.path.display().to_string(),
                    outer: outer.unit.task_id.clone(),
                    outer_file: outer.task.path.display().to_string(),
                    outer_dir: up.display().to_string(),
                });
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::reserved;

    #[test]
    fn reserved_folder_names() {
        for name in [
            "workspace",
            "home",
            "r00",
            "r07",
            "r123",
            "r007",
            "r0007",
            "r1079",
            "claude-code",
            "codex",
            "mine",
        ] {
            assert!(reserved(name, &["mine"]).is_some(), "{name}");
        }
        for name in [
            "r", "r1", "r7", "r00007", "r+1", "rx1", "row1", "s", "claude", "r0a",
        ] {
            assert_eq!(reserved(name, &["mine"]), None, "{name}");
        }
    }
}
