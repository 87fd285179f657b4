//! The names of a run folder's own files and folders, and which folder names a unit's
//! task id may not take (`reserved`): every unit of a run must have a result folder of
//! its own, not inside another's (`run::units::check`), since `--resume` deletes a unit's
//! folder before it runs the unit again.

use crate::components::BUILTIN_HARNESSES;

/// Why `part` (a part of a task id below the first, e.g. a dataset row id) cannot name a
/// folder: `None` when it can. Reserved: `workspace` and `home` (a unit's own folders), a
/// replicate folder (`r00`, `r01`, `r007`, `r0007`, … at any width
/// [`super::replicate_dir_of`] writes; `r1` is not one), a built-in harness, or a harness of this run.
pub(crate) fn reserved(part: &str, harnesses: &[&str]) -> Option<&'static str> {
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
pub(crate) const INVOCATION_FILE: &str = "invocation.json";
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
pub(crate) const RUN_FOLDER_FILES: [&str; 7] = [
    "run.json",
    "junit.xml",
    "report.html",
    INVOCATION_FILE,
    SHARD_FILE,
    LOCK_FILE,
    OUTPUT_MARKER,
];

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
