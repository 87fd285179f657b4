//! Suites, issue 15 trial findings fixed after its first round: replicate folders padded
//! to the repeat count (N5), a shard that resolves only its own units (M1), the progress
//! line after the row it counts (N7) and merge copying, never hard-linking (N10). Offline,
//! without any CLI: `skip: true` and `agent.type: none` tasks, or a stand-in CLI.

use crate::support::{bin, executable, scratch, show};
use coder_eval::results::{RunSummary, TaskResult};
use coder_eval::suite::plan::Plan;
use coder_eval::suite::shard::Shard;
use std::path::Path;
use std::process::{Command, Output};

/// `coder-eval ARGS…` in `dir`, waited for.
fn ce(dir: &Path, args: &[&str]) -> Output {
    Command::new(bin())
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap()
}

/// A `skip: true` task `id` in `dir/tasks/<id>/task.yaml` (nothing starts: quick).
fn skip_task(dir: &Path, id: &str) -> String {
    let folder = dir.join("tasks").join(id);
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(
        folder.join("task.yaml"),
        format!(
            "task_id: {id}\nskip: true\ninitial_prompt: Write ok.txt.\nagent: {{type: claude-code}}\nsuccess_criteria:\n  - type: file_exists\n    path: ok.txt\n"
        ),
    )
    .unwrap();
    format!("tasks/{id}/task.yaml")
}

/// The names of the folders in `dir`, sorted by name.
fn folder_names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Issue 15 trial (N5): past 100 replicates the folders sorted `r1079, r108, r1080`. They
/// are as wide as the largest index (`r000`…`r100` of 101), so that name order is replicate
/// order; run.json names them so, and a merge lays them out the same (reading a shard's
/// replicate written at two digits too).
#[test]
fn replicate_folders_past_100_are_padded_to_the_count_and_resume_and_merge_read_them() {
    let dir = scratch("pad-101");
    let task = skip_task(&dir, "many");
    let o = ce(&dir, &["run", &task, "--repeats", "101", "--out", "run"]);
    assert_eq!(o.status.code(), Some(0), "{}", show(&o));
    let names = folder_names(&dir.join("run/many/claude-code"));
    let expected: Vec<String> = (0..101).map(|i| format!("r{i:03}")).collect();
    assert_eq!(names, expected);
    let summary: RunSummary =
        serde_json::from_slice(&std::fs::read(dir.join("run/run.json")).unwrap()).unwrap();
    assert_eq!(summary.rows.len(), 101);
    for row in &summary.rows {
        assert!(
            dir.join("run").join(&row.result).is_file(),
            "{}",
            row.result
        );
    }
    let r7: TaskResult = serde_json::from_slice(
        &std::fs::read(dir.join("run/many/claude-code/r007/task.json")).unwrap(),
    )
    .unwrap();
    assert_eq!((r7.replicate, r7.replicates), (Some(7), Some(101)));

    // Plan, shard, merge: the same layout.
    let o = ce(
        &dir,
        &["plan", &task, "--repeats", "101", "--out", "plan.json"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", show(&o));
    let o = ce(
        &dir,
        &[
            "run",
            "--plan",
            "plan.json",
            "--shard",
            "0/1",
            "--out",
            "s0",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", show(&o));
    assert_eq!(folder_names(&dir.join("s0/many/claude-code")), expected);
    // One replicate as an older coder-eval wrote it (two digits): merge finds it, and
    // lays it out at the plan's width.
    std::fs::rename(
        dir.join("s0/many/claude-code/r007"),
        dir.join("s0/many/claude-code/r07"),
    )
    .unwrap();
    let o = ce(
        &dir,
        &["merge", "s0", "--plan", "plan.json", "--out", "merged"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", show(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("101 skipped, 0 missing"),
        "{}",
        show(&o)
    );
    assert_eq!(folder_names(&dir.join("merged/many/claude-code")), expected);
    let merged: RunSummary =
        serde_json::from_slice(&std::fs::read(dir.join("merged/run.json")).unwrap()).unwrap();
    for row in &merged.rows {
        assert!(
            dir.join("merged").join(&row.result).is_file(),
            "{}",
            row.result
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// Issue 15 trial (M1): a shard of 2 units of a 60000-unit plan resolved the whole plan.
/// It resolves only its own units: a task file of another shard's unit, deleted after
/// planning, does not stop it (the shard that owns that unit is refused, naming it).
#[test]
fn a_shard_resolves_only_its_own_units() {
    let dir = scratch("shard-own");
    let a = skip_task(&dir, "aa");
    let b = skip_task(&dir, "bb");
    let o = ce(&dir, &["plan", &a, &b, "--out", "plan.json"]);
    assert_eq!(o.status.code(), Some(0), "{}", show(&o));
    let plan = Plan::read(&dir.join("plan.json")).unwrap();
    let id = |task: &str| {
        plan.units
            .iter()
            .find(|u| u.unit.task_id == task)
            .unwrap()
            .id
            .clone()
    };
    // A shard count that puts the two units apart.
    let count = (2..64)
        .find(|n| Shard::of(&id("aa"), *n) != Shard::of(&id("bb"), *n))
        .expect("a count that parts them");
    let (shard_a, shard_b) = (Shard::of(&id("aa"), count), Shard::of(&id("bb"), count));
    std::fs::remove_dir_all(dir.join("tasks/aa")).unwrap();
    let o = ce(
        &dir,
        &[
            "run",
            "--plan",
            "plan.json",
            "--shard",
            &format!("{shard_b}/{count}"),
            "--out",
            "sb",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", show(&o));
    assert!(
        dir.join("sb/bb/claude-code/task.json").is_file(),
        "{}",
        show(&o)
    );
    // The shard owning the deleted task's unit: refused (a configuration error).
    let o = ce(
        &dir,
        &[
            "run",
            "--plan",
            "plan.json",
            "--shard",
            &format!("{shard_a}/{count}"),
            "--out",
            "sa",
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", show(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("aa"),
        "{}",
        show(&o)
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// Issue 15 trial (N7): "4/4 done" printed before the last rows. A task is counted done
/// once its row is out: each row sees the progress count only the rows before it.
#[test]
fn a_task_is_counted_done_after_its_row() {
    use coder_eval::run::progress::Progress;
    let dir = scratch("progress-after-row");
    // Every launch crashes at once (no retries): a quick suite of ERROR rows.
    let cli = dir.join("claude");
    executable(&cli, "#!/bin/sh\nexit 3\n");
    std::fs::write(
        dir.join("task.yaml"),
        "task_id: order\ninitial_prompt: Write out.txt.\nagent:\n  type: claude-code\nsuccess_criteria:\n  - type: file_exists\n    path: out.txt\n",
    )
    .unwrap();
    let overrides = coder_eval::suite::experiment::Overrides {
        repeats: Some(4),
        ..Default::default()
    };
    let (resolved, _) = coder_eval::suite::experiment::resolve_file(
        &dir.join("task.yaml"),
        &Default::default(),
        None,
        &overrides,
    )
    .unwrap();
    let mut options = coder_eval::run::RunOptions::new(dir.join("out"));
    options.cli_override = Some(cli);
    options.retry.max_retries = 0;
    let progress = std::sync::Arc::new(Progress::new(false));
    options.progress = Some(progress.clone());
    let prepared = coder_eval::run::prepare_units(resolved, &[], &options).unwrap();
    let (_tx, rx) = tokio::sync::watch::channel(false);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let mut seen = Vec::new();
    let results = runtime
        .block_on(coder_eval::run::run_all(
            prepared,
            Vec::new(),
            &options,
            2,
            rx,
            |_| seen.push(progress.snapshot().done),
        ))
        .unwrap();
    assert_eq!(results.len(), 4);
    assert_eq!(
        seen,
        [0, 1, 2, 3],
        "a row came after the progress counted it"
    );
    assert_eq!(progress.snapshot().done, 4);
    std::fs::remove_dir_all(&dir).ok();
}

/// Issue 15 trial (N10): merge hard-linked the shards' files, so editing a merged file
/// edited the shard's (and every other merge's). Each merged file is a copy of its own.
#[test]
fn a_merged_file_is_not_the_shards_file() {
    let dir = scratch("merge-copy");
    let task = skip_task(&dir, "one");
    let o = ce(
        &dir,
        &["plan", &task, "--repeats", "2", "--out", "plan.json"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", show(&o));
    let o = ce(
        &dir,
        &[
            "run",
            "--plan",
            "plan.json",
            "--shard",
            "0/1",
            "--out",
            "s0",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", show(&o));
    let o = ce(
        &dir,
        &["merge", "s0", "--plan", "plan.json", "--out", "merged"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", show(&o));
    let rel = "one/claude-code/r00/task.json";
    let before = std::fs::read(dir.join("s0").join(rel)).unwrap();
    std::fs::write(dir.join("merged").join(rel), "edited").unwrap();
    assert_eq!(std::fs::read(dir.join("s0").join(rel)).unwrap(), before);
    std::fs::remove_dir_all(&dir).ok();
}
