//! `coder-eval merge`'s work (see [`super::MergeArgs`]).

use coder_eval::exit_codes;
use coder_eval::results::TaskResult;
use coder_eval::run::RunOptions;
use coder_eval::suite::UnitId;
use coder_eval::suite::plan::Plan;
use coder_eval::suite::shard::{Shard, ShardRecord, gather};
use std::path::{Path, PathBuf};

/// `coder-eval merge`'s work: the shard folders' results gathered into `out`.
pub(super) fn merge_into(
    plan: &Plan,
    plan_file: &Path,
    dirs: &[PathBuf],
    out: &Path,
    criteria: &coder_eval::run::thresholds::CriteriaByTask,
    options: &RunOptions,
) -> Result<i32, Box<dyn std::error::Error>> {
    let same = |a: &Path, b: &Path| match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    };
    if let Some(dir) = dirs.iter().find(|d| same(d, out)) {
        eprintln!(
            "error: --out {} is one of the shard folders ({}): merge into a new folder",
            out.display(),
            dir.display()
        );
        return Ok(exit_codes::USAGE);
    }
    // A new or empty folder, or an earlier merge of this plan (merged again as more shards
    // finish): never a folder of something else, which the merge would leave half mixed.
    // Checked before the lock (which marks the folder as coder-eval's) and again under it.
    let refuse = || {
        let holds_something = std::fs::read_dir(out).is_ok_and(|d| {
            d.filter_map(Result::ok).any(|e| {
                let name = e.file_name();
                name != coder_eval::suite::lock::LOCK_FILE
                    && name != coder_eval::suite::lock::OUTPUT_MARKER
            })
        });
        let earlier_merge = ShardRecord::read(out).is_ok_and(|r| r.plan_id == plan.plan_id);
        if holds_something && !earlier_merge {
            eprintln!(
                "error: --out {} already holds files and is no earlier merge of this plan: \
                 merge into a new or empty folder",
                out.display()
            );
            return true;
        }
        false
    };
    // (A folder another merge is writing into is refused as busy by the lock below.)
    if coder_eval::suite::lock::holder(out).is_none() && refuse() {
        return Ok(exit_codes::USAGE);
    }
    // The lock creates `out`: a merge refused after it removes what it created.
    let created = created_by_lock(out);
    // One merge at a time into a folder: two would remove and copy each other's units.
    let lock = match coder_eval::suite::lock::lock_merge_folder(out) {
        Ok(lock) => lock,
        Err(err) => {
            super::super::super::print_error(&err);
            return Ok(exit_codes::USAGE);
        }
    };
    let refused = |lock: std::fs::File| {
        undo_created(out, created.as_deref(), lock);
        Ok(exit_codes::USAGE)
    };
    if refuse() {
        return refused(lock);
    }
    // A folder given twice is merged once (else its every unit would be "in it and in it").
    let mut unique: Vec<PathBuf> = Vec::new();
    for d in dirs {
        match unique.iter().find(|u| same(u, d)) {
            Some(first) if first == d => {
                eprintln!("note: {} is given twice: merged once", d.display())
            }
            Some(first) => eprintln!(
                "note: {} is given twice (also as {}): merged once",
                first.display(),
                d.display()
            ),
            None => unique.push(d.clone()),
        }
    }
    let dirs = unique.as_slice();
    // An earlier merge of this plan in `out` is an input too, after the folders given:
    // its units are kept, and a unit a folder given also holds is taken from that folder
    // (the newer run of it). A merge never drops a result it held.
    let mut inputs = dirs.to_vec();
    let earlier = ShardRecord::read(out).is_ok_and(|r| r.plan_id == plan.plan_id);
    if earlier {
        inputs.push(out.to_path_buf());
    }
    let gathered = match gather(plan, plan_file, &inputs) {
        Ok(g) => g,
        Err(err) => {
            super::super::super::print_error(&err);
            return refused(lock);
        }
    };
    let _lock = lock;
    if earlier {
        let kept = gathered.found.iter().filter(|(_, _, d)| d == out).count();
        let replaced = gathered
            .duplicates
            .iter()
            .filter(|d| d.dropped.iter().any(|p| p == out))
            .count();
        eprintln!(
            "note: {} is an earlier merge of this plan: {kept} of its unit(s) kept, {replaced} \
             replaced by the result in a folder given",
            out.display()
        );
    }
    for d in &gathered.duplicates {
        // One replacing the earlier merge's copy is counted in the note above.
        if earlier && d.dropped.iter().all(|p| p == out) {
            continue;
        }
        eprintln!(
            "note: unit {} is in {} and in {}: kept the result from {}, dropped the other(s)",
            d.unit.label(),
            d.kept.display(),
            d.dropped
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", "),
            d.kept.display()
        );
    }
    std::fs::create_dir_all(out).map_err(|e| format!("{}: {e}", out.display()))?;
    // An earlier merge's folder of a unit missing now goes: what the folder holds is what
    // run.json lists.
    for unit in &gathered.missing {
        // At whatever width its replicate folder was written (`r05`, `r005`).
        for rel in unit.unit.candidate_dirs() {
            let stale = out.join(rel);
            if stale.exists() {
                std::fs::remove_dir_all(&stale).map_err(|e| format!("{}: {e}", stale.display()))?;
            }
        }
    }
    let mut results: Vec<TaskResult> = Vec::new();
    for (unit, result, dir) in &gathered.found {
        // The plan's folder (its replicate folder as wide as the plan's count); the
        // result's `replicates` says so, for run.json's path to it.
        let rel = unit.unit.rel_dir();
        let mut result = result.clone();
        result.replicates = unit.unit.replicates;
        // Where the folder given holds it: another width when an older coder-eval ran it.
        let found = coder_eval::suite::resume::locate(dir, &unit.unit).unwrap_or(rel.clone());
        let target = out.join(&rel);
        if dir == out {
            // Kept from the earlier merge: already in place (moved to the plan's width).
            if found != rel {
                std::fs::rename(out.join(&found), &target)
                    .map_err(|e| format!("{}: {e}", target.display()))?;
            }
            results.push(result);
            continue;
        }
        if target.exists() {
            std::fs::remove_dir_all(&target).map_err(|e| format!("{}: {e}", target.display()))?;
        }
        coder_eval::suite::shard::copy_tree(&dir.join(&found), &target)?;
        results.push(result);
    }
    let expected = coder_eval::suite::expected(plan.units.iter().map(|u| &u.unit));
    let summary = coder_eval::run::write_run(
        out,
        &results,
        &expected,
        criteria,
        &options.experiment,
        gathered.missing.len(),
        plan.units
            .iter()
            .any(|u| u.unit.variant.is_some() || u.unit.replicate.is_some()),
    )?;
    if !gathered.missing.is_empty() {
        // junit.xml lists the missing units too: a CI reporter counts them.
        let missing: Vec<UnitId> = gathered.missing.iter().map(|u| u.unit.clone()).collect();
        coder_eval::run::junit::write_with_missing(
            &out.join("junit.xml"),
            &results,
            &summary.suite_thresholds,
            &missing,
            "no complete result in any shard folder given to merge (its shard did not run, \
             or not to the end)",
        )?;
    }
    ShardRecord {
        plan_id: plan.plan_id.clone(),
        shard: Shard { index: 0, count: 1 },
        units: gathered
            .found
            .iter()
            .map(|(u, _, _)| u.id.clone())
            .collect(),
    }
    .write(out)?;
    if !gathered.missing.is_empty() {
        eprintln!(
            "missing: {} of {} unit(s) have no complete result in any shard folder given:",
            gathered.missing.len(),
            plan.units.len()
        );
        for u in &gathered.missing {
            eprintln!("  {}  {}", u.unit.label(), u.id);
        }
    }
    super::super::print_statistics(out);
    let count = |f: fn(&coder_eval::results::TaskStatus) -> bool| {
        results.iter().filter(|r| f(&r.status)).count()
    };
    let passed = count(|s| matches!(s, coder_eval::results::TaskStatus::Success));
    let skipped = count(|s| matches!(s, coder_eval::results::TaskStatus::Skipped));
    let failed = results.len() - passed - skipped;
    eprintln!(
        "merged {} unit(s) of plan {} from {} folder(s): {} passed, {} failed, {} skipped, {} missing; results in {}",
        results.len(),
        plan.plan_id,
        dirs.len(),
        passed,
        failed,
        skipped,
        gathered.missing.len(),
        out.display()
    );
    Ok(if failed == 0 && gathered.missing.is_empty() {
        exit_codes::OK
    } else {
        exit_codes::FAILED
    })
}

/// The topmost folder of `out` (itself or an ancestor) that does not exist yet, which
/// taking `out`'s lock creates; `None` when `out` exists.
fn created_by_lock(out: &Path) -> Option<PathBuf> {
    let mut top = None;
    for dir in out.ancestors().filter(|d| !d.as_os_str().is_empty()) {
        if dir.exists() {
            break;
        }
        top = Some(dir.to_path_buf());
    }
    top
}

/// After a refusal: removes the lock file and marker the lock wrote into `out` and the
/// folders up to `created` (from [`created_by_lock`]), when the merge created them and
/// they are empty; releases `lock`. A folder that existed is left as it was (but for its
/// lock file).
fn undo_created(out: &Path, created: Option<&Path>, lock: std::fs::File) {
    let Some(top) = created else {
        drop(lock);
        return;
    };
    let _ = std::fs::remove_file(out.join(coder_eval::suite::lock::LOCK_FILE));
    let _ = std::fs::remove_file(out.join(coder_eval::suite::lock::OUTPUT_MARKER));
    drop(lock);
    for dir in out.ancestors() {
        if std::fs::remove_dir(dir).is_err() || dir == top {
            break;
        }
    }
}
