//! `coder-eval run --resume RUN_DIR`: the run's command line is kept in
//! `RUN_DIR/invocation.json` when it starts; resuming resolves the same units again,
//! keeps each one whose `task.json` is complete and runs the rest.
//!
//! A `task.json` is complete when it reads as a result and its run was not stopped by
//! a signal (`stop.reason: interrupted`, `error_kind: interrupted`, as an interrupt during
//! a retry's backoff leaves it). Resuming (and a shard run again into its folder) keeps
//! a complete unit unless it ended in an infrastructure error ([`kept`]): that one runs
//! again. A unit killed mid-run (SIGKILL, a lost machine)
//! left no `task.json` (they are written once, atomically, at the unit's end) and runs
//! again from a fresh workspace.

use super::UnitId;
use super::infra::{infra_cause, is_infra_error};
use crate::results::{StopReason, TaskResult};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// `invocation.json`: how the run was started.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Invocation {
    /// The folder it was started from (task paths are relative to it).
    pub cwd: PathBuf,
    /// The arguments after `coder-eval run`.
    pub args: Vec<String>,
    /// Each unit's content id (its result folder, relative to the run's → the id
    /// `coder-eval plan` gives it: `suite::plan::UnitInputs::id`) as of the units' last
    /// run: `--resume` runs again a complete unit whose id is not the same any more (its
    /// task file, task folder, prompt, script, component or CLI changed). Omitted when
    /// empty (runs of an older coder-eval: their units are kept as they are).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub unit_ids: BTreeMap<String, String>,
}

pub(crate) use super::folders::INVOCATION_FILE;

/// `args` (a `coder-eval run` command line, after `run`) as `invocation.json` keeps them:
/// the userinfo of `--upstream URL` / `--upstream=URL` (`http://user:password@host`)
/// replaced by `[redacted]`, since the agent's workspace lies inside the run folder and
/// can read the file. `--resume` then needs `--upstream` given again (its redacted form
/// must match).
pub fn redact_upstream_args(args: Vec<String>) -> Vec<String> {
    let mut after_flag = false;
    args.into_iter()
        .map(|arg| {
            let out = if after_flag {
                crate::gateway::redact_userinfo(&arg)
            } else if let Some(url) = arg.strip_prefix("--upstream=") {
                format!("--upstream={}", crate::gateway::redact_userinfo(url))
            } else {
                arg.clone()
            };
            after_flag = arg == "--upstream";
            out
        })
        .collect()
}

/// Why a run cannot be resumed.
#[derive(Debug, thiserror::Error)]
pub enum ResumeError {
    #[error(
        "{path}: not a run folder to resume (no invocation.json: was it started by this version of coder-eval run?)"
    )]
    NoInvocation {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A folder `coder-eval merge` wrote: it has the plan's `shard.json` but no
    /// `invocation.json`, since no run of its own wrote it.
    #[error(
        "{dir}: a merged run folder (merge wrote it: shard.json, no invocation.json), not a run to resume: run the unfinished shard again into its own folder (`coder-eval run --resume SHARD_FOLDER`), then merge every shard folder again with --out {dir}"
    )]
    Merged { dir: PathBuf },
    #[error("{path}: unreadable")]
    Invalid {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    /// `cwd` of `invocation.json` (the folder the run was started from: its task paths
    /// are relative to it) cannot be entered, e.g. the tree was moved since.
    #[error(
        "{run}: cannot resume: invocation.json's cwd {cwd} (the folder the run was started \
         from; its task paths are relative to it) cannot be entered (was the tree moved or \
         deleted? resume a run folder whose tree is still where it ran, or start a new run)"
    )]
    CwdGone {
        run: PathBuf,
        cwd: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl Invocation {
    /// Writes it into `dir` (atomically).
    pub fn write(&self, dir: &Path) -> std::io::Result<()> {
        crate::results::write_json_atomically(&dir.join(INVOCATION_FILE), self)
    }

    /// Reads `dir/invocation.json`.
    pub fn read(dir: &Path) -> Result<Invocation, ResumeError> {
        let path = dir.join(INVOCATION_FILE);
        let text = std::fs::read_to_string(&path).map_err(|source| {
            if dir.join(super::folders::SHARD_FILE).is_file() {
                ResumeError::Merged {
                    dir: dir.to_path_buf(),
                }
            } else {
                ResumeError::NoInvocation {
                    path: path.clone(),
                    source,
                }
            }
        })?;
        serde_json::from_str(&text).map_err(|source| ResumeError::Invalid { path, source })
    }

    /// Makes [`Invocation::cwd`] the current folder, so that the run's task paths resolve
    /// as when it started. `run_dir` is the run folder being resumed. Returns a note when
    /// `run_dir` is not the folder the run wrote (its `--out`, else `runs/<its name>`,
    /// from `cwd`): a copy of the run folder resumes against the original tree's task
    /// files, not the copy's.
    pub fn enter(&self, run_dir: &Path) -> Result<Option<String>, ResumeError> {
        std::env::set_current_dir(&self.cwd).map_err(|source| ResumeError::CwdGone {
            run: run_dir.to_path_buf(),
            cwd: self.cwd.clone(),
            source,
        })?;
        let out = self
            .args
            .iter()
            .enumerate()
            .find_map(|(i, a)| match a.strip_prefix("--out=") {
                Some(v) => Some(v.to_string()),
                None => (a == "--out")
                    .then(|| self.args.get(i + 1).cloned())
                    .flatten(),
            });
        // Without --out: `runs/<UTC timestamp>`, the folder's own name (a shard's default
        // folder is found by its plan, not told here).
        let plan = self
            .args
            .iter()
            .any(|a| a == "--plan" || a.starts_with("--plan="));
        let out = match (out, run_dir.file_name()) {
            (Some(out), _) => PathBuf::from(out),
            (None, Some(name)) if !plan => Path::new("runs").join(name),
            _ => return Ok(None),
        };
        let written = self.cwd.join(out);
        let same = match (written.canonicalize(), run_dir.canonicalize()) {
            (Ok(a), Ok(b)) => a == b,
            _ => false,
        };
        Ok((!same).then(|| {
            format!(
                "{} is not the folder the run wrote ({}, from invocation.json's cwd): its \
                 task files are read from {}, not from beside this folder",
                run_dir.display(),
                written.display(),
                self.cwd.display()
            )
        }))
    }
}

/// The unit's result folder in `run_dir`, relative to it: the first of
/// [`UnitId::candidate_dirs`] that holds a `task.json` (its own, else its replicate folder
/// at another width: `r05` written by an older coder-eval, or by the run before its
/// repeat count went past 100). `None`: no folder holds one.
pub fn locate(run_dir: &Path, unit: &UnitId) -> Option<PathBuf> {
    unit.candidate_dirs()
        .into_iter()
        .find(|rel| run_dir.join(rel).join("task.json").is_file())
}

/// The unit's result in `run_dir` when it is complete (see the module docs), found where
/// [`locate`] finds it (the result's own count gives that folder again).
pub(crate) fn completed(run_dir: &Path, unit: &UnitId) -> Option<TaskResult> {
    let text =
        std::fs::read_to_string(run_dir.join(locate(run_dir, unit)?).join("task.json")).ok()?;
    let result: TaskResult = serde_json::from_str(&text).ok()?;
    let same_unit = super::unit_of(&result) == *unit;
    (!interrupted(&result) && same_unit).then_some(result)
}

/// Whether a signal stopped `result` (`interrupted`, older recordings' `cancelled`),
/// whether its turn had started or not: no complete result. `--resume` runs it again,
/// `merge` lists its unit as missing, and the statistics count it `missing` (not
/// `errored`): one word for a unit without a complete result wherever it is counted.
pub fn interrupted(result: &TaskResult) -> bool {
    result
        .stop
        .as_ref()
        .is_some_and(|s| s.reason == StopReason::Interrupted)
        || result.error_kind.as_deref() == Some("interrupted")
}

/// The unit's result in `run_dir` when resuming keeps it: complete ([`completed`]) and
/// not ended in an infrastructure error ([`is_infra_error`], or one the
/// retries gave up on: [`infra_cause`]), which is run again.
pub fn kept(run_dir: &Path, unit: &UnitId) -> Option<TaskResult> {
    completed(run_dir, unit).filter(|r| !is_infra_error(r) && infra_cause(r).is_none())
}

/// What resuming does with the units of a run: [`split`].
#[derive(Debug)]
pub struct Split<T> {
    /// The complete results kept.
    pub kept: Vec<TaskResult>,
    /// The units to run.
    pub todo: Vec<T>,
    /// Per complete unit run again because its content id changed: a line saying so.
    pub changed: Vec<String>,
    /// The result folders (relative to the run's) of the units the run had when it last
    /// ran ([`Invocation::unit_ids`]) that it has no more: a variant, task, harness or
    /// replicate taken out of its experiment or task files since. Their folders stay.
    pub removed: Vec<String>,
    /// The result folders of the units it has now that it did not have then.
    /// Both are empty when the run recorded no ids (an older coder-eval).
    pub added: Vec<String>,
}

impl<T> Split<T> {
    /// A note on the units the run gained or lost since it last ran (`removed`,
    /// `added`): `None` when it has the same units. Names up to 5 folders of each.
    pub fn units_changed_note(&self) -> Option<String> {
        if self.removed.is_empty() && self.added.is_empty() {
            return None;
        }
        let list = |rels: &[String]| {
            let mut text = rels.iter().take(5).cloned().collect::<Vec<_>>().join(", ");
            if rels.len() > 5 {
                text.push_str(&format!(" and {} more", rels.len() - 5));
            }
            text
        };
        let mut parts = Vec::new();
        if !self.removed.is_empty() {
            parts.push(format!(
                "{} unit(s) it had are gone (their folders stay, out of run.json): {}",
                self.removed.len(),
                list(&self.removed)
            ));
        }
        if !self.added.is_empty() {
            parts.push(format!(
                "{} unit(s) are new: {}",
                self.added.len(),
                list(&self.added)
            ));
        }
        Some(format!(
            "the run's units are not the ones it started with (its experiment or task files \
             were edited since): {}; this resume makes it a different run (start a new run \
             with --out to keep the two apart)",
            parts.join("; ")
        ))
    }
}

/// Splits `units` of the run in `run_dir` into results kept ([`kept`]) and units to
/// run; a complete unit whose content id now (`now`, result folder → id) differs from
/// the one recorded when it ran (`recorded`: [`Invocation::unit_ids`]) is run again,
/// with a line saying why. A unit with no recorded id (a run of an older coder-eval) is
/// judged by its `task.json` alone.
pub fn split<T>(
    run_dir: &Path,
    units: Vec<T>,
    unit_of: impl Fn(&T) -> &UnitId,
    recorded: &BTreeMap<String, String>,
    now: &BTreeMap<String, String>,
) -> Split<T> {
    // The recorded ids by unit, whatever the width of their replicate folders then
    // (`r05` before the repeat count went past 100, `r005` after).
    let recorded_by_unit: BTreeMap<String, &String> = recorded
        .iter()
        .map(|(rel, id)| (same_width(rel), id))
        .collect();
    // Absent ids (an older run) say nothing about which units it had.
    let (removed, added) = if recorded.is_empty() {
        (Vec::new(), Vec::new())
    } else {
        let now_by_unit: std::collections::BTreeSet<String> =
            now.keys().map(|rel| same_width(rel)).collect();
        let removed = recorded
            .keys()
            .filter(|k| !now_by_unit.contains(&same_width(k)))
            .cloned()
            .collect();
        let added = now
            .keys()
            .filter(|k| !recorded_by_unit.contains_key(&same_width(k)))
            .cloned()
            .collect();
        (removed, added)
    };
    let mut out = Split {
        kept: Vec::new(),
        todo: Vec::new(),
        changed: Vec::new(),
        removed,
        added,
    };
    for u in units {
        let unit = unit_of(&u);
        let Some(done) = kept(run_dir, unit) else {
            out.todo.push(u);
            continue;
        };
        let rel = unit.rel_dir().display().to_string();
        match (
            recorded_by_unit.get(&same_width(&rel)).copied(),
            now.get(&rel),
        ) {
            (Some(was), Some(is)) if was != is => {
                out.changed.push(format!(
                    "{}: its inputs changed since it ran (unit id {was} then, {is} now: the \
                     task file, its folder, a file it reads, the script, the component or \
                     the CLI): running it again",
                    unit.label()
                ));
                out.todo.push(u);
            }
            _ => out.kept.push(done),
        }
    }
    out
}

/// A result folder (relative to the run's) with its replicate folder's number unpadded
/// (`v/t/codex/r005` → `v/t/codex/r5`): one key per unit whatever the width it was
/// written at.
fn same_width(rel: &str) -> String {
    let (parent, last) = rel.rsplit_once('/').unwrap_or(("", rel));
    match last
        .strip_prefix('r')
        .filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    {
        Some(n) => {
            let n = n.trim_start_matches('0');
            let n = if n.is_empty() { "0" } else { n };
            if parent.is_empty() {
                format!("r{n}")
            } else {
                format!("{parent}/r{n}")
            }
        }
        None => rel.to_string(),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn invocation_args_keep_no_upstream_password() {
        let args = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let kept = super::redact_upstream_args(args(&[
            "t.yaml",
            "--upstream",
            "http://user:pw-SECRET@127.0.0.1:1/v1",
            "--upstream=https://k:pw-SECRET2@h",
            "--out",
            "http://a:b@c",
        ]));
        let text = kept.join(" ");
        assert!(!text.contains("pw-SECRET"), "{text}");
        assert_eq!(kept[2], "http://[redacted]@127.0.0.1:1/v1");
        assert_eq!(kept[3], "--upstream=https://[redacted]@h");
        assert_eq!(kept[5], "http://a:b@c", "only --upstream's value");
    }

    use super::*;

    /// Issue 15 trial: `--resume` of a merged folder said only "no invocation.json".
    #[test]
    fn resuming_a_merged_folder_says_it_is_one_and_what_to_do() {
        let dir = tempfile::tempdir().unwrap();
        let err = Invocation::read(dir.path()).unwrap_err().to_string();
        assert!(
            err.contains("no invocation.json") && !err.contains("merged"),
            "{err}"
        );
        std::fs::write(dir.path().join(super::super::folders::SHARD_FILE), "{}").unwrap();
        let err = Invocation::read(dir.path()).unwrap_err().to_string();
        assert!(
            err.contains("a merged run folder") && err.contains("merge every shard folder again"),
            "{err}"
        );
    }

    fn unit(variant: &str) -> UnitId {
        UnitId {
            variant: Some(variant.into()),
            task_id: "t".into(),
            harness: "codex".into(),
            replicate: Some(0),
            replicates: Some(2),
        }
    }

    #[test]
    fn a_resume_names_the_units_gone_and_new_since_the_run_last_ran() {
        let dir = std::env::temp_dir().join(format!("coder-eval-split-{}", std::process::id()));
        let ids = |pairs: &[(&str, &str)]| -> BTreeMap<String, String> {
            pairs
                .iter()
                .map(|(v, id)| (unit(v).label(), id.to_string()))
                .collect()
        };
        let recorded = ids(&[("base", "1"), ("terse", "2")]);
        let now = ids(&[("base", "1"), ("newv", "3")]);
        let units = vec![unit("base"), unit("newv")];
        let edited = split(&dir, units.clone(), |u| u, &recorded, &now);
        assert_eq!(edited.removed, vec!["terse/t/codex/r00".to_string()]);
        assert_eq!(edited.added, vec!["newv/t/codex/r00".to_string()]);
        let note = edited.units_changed_note().expect("a note");
        assert!(
            note.contains("1 unit(s) it had are gone (their folders stay, out of run.json): terse/t/codex/r00; 1 unit(s) are new: newv/t/codex/r00"),
            "{note}"
        );
        // The same units: no note; no ids recorded (an older run): nothing known, no note.
        let same = split(&dir, units.clone(), |u| u, &now, &now);
        assert_eq!(same.units_changed_note(), None);
        let older = split(&dir, units, |u| u, &BTreeMap::new(), &now);
        assert_eq!(older.units_changed_note(), None);
    }

    /// Issue 15 trial (N5): replicate folders are as wide as the largest index now (`r005`
    /// of 200). A run written with two digits (`r05`: an older coder-eval, or 50 repeats
    /// before the count went to 200) is resumed: its units are found and kept there.
    #[test]
    fn a_resume_finds_replicates_written_at_the_older_width() {
        let dir = tempfile::tempdir().unwrap();
        let legacy = dir.path().join("v/t/codex/r05");
        std::fs::create_dir_all(&legacy).unwrap();
        // An older result: no `replicates`, two digits.
        std::fs::write(
            legacy.join("task.json"),
            r#"{"result_version":1,"task_id":"t","harness":"codex","status":"SUCCESS","error":null,"description":null,"task_file":"/t.yaml","prompt":"p","requested_model":null,"cli":{"path":null,"version":null,"argv":[],"pgid":null,"caveats":[]},"run_limits":{"max_turns":null,"max_tool_calls":null,"turn_timeout_ms":null,"task_timeout_ms":null,"native":[]},"stop":null,"turn":null,"criteria":[],"weighted_score":null,"post_failure_criteria_results":[],"setup_ms":0,"grading_ms":0,"host_turn_work_us":0,"stderr_tail":"","scripted_model_requests":null,"paths":{"recording":"recording.jsonl","stderr":"stderr.log","workspace":"workspace"},"variant":"v","replicate":5}"#,
        )
        .unwrap();
        let unit = |i: u32| UnitId {
            variant: Some("v".into()),
            task_id: "t".into(),
            harness: "codex".into(),
            replicate: Some(i),
            replicates: Some(200),
        };
        assert_eq!(unit(5).label(), "v/t/codex/r005");
        assert_eq!(locate(dir.path(), &unit(5)), Some("v/t/codex/r05".into()));
        let found = completed(dir.path(), &unit(5)).expect("found at r05");
        // Where it lies, as run.json will name it.
        assert_eq!(crate::suite::unit_of(&found).label(), "v/t/codex/r05");
        // Its id recorded under r05, the same now under r005: the same unit, kept, no note.
        let recorded = BTreeMap::from([("v/t/codex/r05".to_string(), "a".to_string())]);
        let now = BTreeMap::from([
            ("v/t/codex/r005".to_string(), "a".to_string()),
            ("v/t/codex/r006".to_string(), "b".to_string()),
        ]);
        let s = split(dir.path(), vec![unit(5), unit(6)], |u| u, &recorded, &now);
        assert_eq!(s.kept.len(), 1);
        assert_eq!(s.todo, vec![unit(6)]);
        assert!(s.removed.is_empty(), "{:?}", s.removed);
        assert_eq!(s.added, vec!["v/t/codex/r006".to_string()]);
        // Its id changed since: run again, said so.
        let now = BTreeMap::from([("v/t/codex/r005".to_string(), "c".to_string())]);
        let s = split(dir.path(), vec![unit(5)], |u| u, &recorded, &now);
        assert_eq!(s.todo.len(), 1);
        assert_eq!(s.changed.len(), 1, "{:?}", s.changed);
    }
}
