//! Suites, offline: replicates of a flaky task (pass@k, flaky), an experiment's variants
//! (each with its own scripted model, lineage in task.json, `compare`), and `--resume`
//! after the host was killed mid-suite. Each test runs the `coder-eval` binary with the
//! real Claude Code CLI against the scripted model.

use crate::support::{Folder, bin, exits, run_isolated, show, summary, task_json};
use coder_eval::results::{CompareReport, TaskStatus};
use std::path::{Path, PathBuf};
use std::process::Command;

/// A task whose criterion passes on every second check (a counter file outside the
/// workspace): with `--jobs 1`, exactly half its replicates pass.
fn flaky_task(dir: &Folder, pre_run_sleep: &str) -> PathBuf {
    dir.write(
        "script.yaml",
        "name: flaky\nreplies:\n  - text: I'll write it.\n    tool_calls:\n      - write_file: {path: out.txt, content: \"hi\\n\"}\n  - text: Done.\n",
    );
    // Hidden: the grader's state, not one of the task folder's files (a unit's id
    // digests those; `--resume` would run a changed one again).
    let counter = dir.join(".count");
    dir.write(
        "task.yaml",
        &format!(
            "task_id: flaky\ninitial_prompt: Write out.txt.\nagent:\n  type: claude-code\n  scripted_model: script.yaml\nrun_limits:\n  max_turns: 5\n  turn_timeout: 120\npre_run: [\"sleep {pre_run_sleep}\"]\nsuccess_criteria:\n  - type: run_command\n    description: every second check passes\n    command: \"n=$(( $(cat {c} 2>/dev/null || echo 0) + 1 )); echo $n > {c}; [ $((n % 2)) -eq 0 ]\"\n    expected_exit_code: 0\n",
            c = counter.display()
        ),
    )
}

#[test]
fn repeats_of_a_flaky_task_give_pass_at_k_and_the_flaky_flag() {
    let dir = Folder::new("suite-repeats");
    let task = flaky_task(&dir, "0");
    let out = dir.join("out");
    let o = run_isolated(
        &["run", "--repeats", "4", "--jobs", "1", "--out"],
        &[&out, &task],
    );
    // Two replicates failed: exit code 1.
    exits(&o, 1);
    for r in 0..4 {
        let t = task_json(&out.join(format!("flaky/claude-code/r{r:02}/task.json")));
        assert_eq!(t.replicate, Some(r));
        assert!(
            out.join(format!("flaky/claude-code/r{r:02}/workspace/out.txt"))
                .exists()
        );
    }
    let s = summary(&out);
    assert_eq!(s.rows.len(), 4);
    assert_eq!(s.rows[2].result, "flaky/claude-code/r02/task.json");
    assert_eq!(s.statistics.len(), 1, "{:?}", s.statistics);
    let v = &s.statistics[0];
    assert_eq!(v.variant, "claude-code");
    let t = &v.per_task[0];
    assert_eq!(
        (t.replicates, t.graded, t.passes, t.errored, t.missing),
        (4, 4, 2, 0, 0)
    );
    assert!(t.flaky);
    assert_eq!(t.pass_rate, Some(0.5));
    // pass@2 = 1 − C(2,2)/C(4,2) = 5/6; pass^2 = C(2,2)/C(4,2) = 1/6; pass@3 = 1.
    assert!((t.pass_at_k["2"] - 5.0 / 6.0).abs() < 1e-12, "{t:?}");
    assert!((t.pass_hat_k["2"] - 1.0 / 6.0).abs() < 1e-12, "{t:?}");
    assert_eq!(t.pass_at_k["3"], 1.0);
    let w = t.wilson95.unwrap();
    assert!(
        (w.low - 0.150).abs() < 1e-3 && (w.high - 0.850).abs() < 1e-3,
        "{w:?}"
    );
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(
        html.contains("Variants") && html.contains("flaky"),
        "report lacks the variants"
    );
    // The per-task cell: the Wilson interval beside the pass rate it is of, and pass^k.
    assert!(
        html.contains("pass rate 50.0% [15.0%, 85.0%] · pass@4 100.0% · pass^4 0.0%"),
        "{html}"
    );
}

#[test]
fn experiment_variants_run_offline_with_lineage_and_compare() {
    let dir = Folder::new("suite-experiment");
    dir.write(
        "exp/scripts/good.yaml",
        "name: good\nreplies:\n  - text: Writing.\n    tool_calls:\n      - write_file: {path: ok.txt, content: \"ok\\n\"}\n  - text: Done.\n",
    );
    dir.write(
        "exp/scripts/bad.yaml",
        "name: bad\nreplies:\n  - text: I will not write anything.\n",
    );
    dir.write(
        "task/task.yaml",
        "task_id: write_ok\ninitial_prompt: Write ok.txt.\nagent:\n  type: claude-code\nrun_limits:\n  max_turns: 9\n  turn_timeout: 120\nsuccess_criteria:\n  - type: file_exists\n    path: ok.txt\n",
    );
    let exp = dir.write(
        "exp/experiment.yaml",
        "experiment_id: good-vs-bad\ndescription: two scripted models\ndefaults:\n  run_limits: {max_turns: 4, max_tool_calls: 20}\n  prompt_mutations:\n    - {type: prefix, content: \"Be brief.\"}\nvariants:\n  - variant_id: bad\n    agent: {scripted_model: scripts/bad.yaml}\n  - variant_id: good\n    agent: {scripted_model: scripts/good.yaml}\n    run_limits: {max_tool_calls: 7}\n",
    );
    let out = dir.join("out");
    let task = dir.join("task/task.yaml");
    let o = run_isolated(
        &[
            "run",
            "--experiment",
            exp.to_str().unwrap(),
            "-D",
            "run_limits.max_turns=6",
            "--out",
        ],
        &[&out, &task],
    );
    exits(&o, 1);
    let good = task_json(&out.join("good/write_ok/claude-code/task.json"));
    let bad = task_json(&out.join("bad/write_ok/claude-code/task.json"));
    assert_eq!(good.status.as_str(), "SUCCESS", "{:?}", good.error);
    assert_eq!(bad.status.as_str(), "FAILURE", "{:?}", bad.error);
    assert_eq!(good.variant.as_deref(), Some("good"));
    assert!(
        good.prompt.starts_with("Be brief.\n\nWrite ok.txt."),
        "{}",
        good.prompt
    );
    // The merged limits: the command line beats the task and the defaults; the variant
    // beats the defaults.
    assert_eq!(good.run_limits.max_turns, Some(6));
    assert_eq!(good.run_limits.max_tool_calls, Some(7));
    assert_eq!(bad.run_limits.max_tool_calls, Some(20));
    let lineage = good.lineage.as_ref().expect("lineage in task.json");
    assert_eq!(lineage["run_limits.max_turns"]["source"], "cli");
    assert_eq!(lineage["run_limits.max_tool_calls"]["source"], "variant");
    assert_eq!(lineage["agent.scripted_model"]["source"], "variant");
    assert_eq!(lineage["agent.type"]["source"], "task");
    assert_eq!(lineage["initial_prompt"]["source"], "mutation");
    assert_eq!(
        bad.lineage.as_ref().unwrap()["run_limits.max_tool_calls"]["source"],
        "experiment-defaults"
    );
    let s = summary(&out);
    assert_eq!(s.experiment.as_ref().unwrap().variants, vec!["bad", "good"]);
    let rates: Vec<(String, f64)> = s
        .statistics
        .iter()
        .map(|v| (v.variant.clone(), v.pass_rate.as_ref().unwrap().mean))
        .collect();
    assert_eq!(rates, vec![("bad".into(), 0.0), ("good".into(), 1.0)]);
    // compare: the two variants of this run, paired by task.
    let o = Command::new(bin())
        .args(["compare"])
        .args([&out, &out])
        .args([
            "--a-variant",
            "bad",
            "--b-variant",
            "good",
            "--json",
            "--html",
        ])
        .arg(dir.join("compare.html"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", show(&o));
    let html = std::fs::read_to_string(dir.join("compare.html")).unwrap();
    assert!(
        html.contains("B (good) against A (bad)") && html.contains("fail→pass"),
        "{html}"
    );
    // One paired task: no interval, no t, no p (issue 15 trial: it showed [d, d]).
    assert!(
        html.contains("100.0% [interval undefined: 1 paired task(s), needs 2]")
            && html.contains("t = undefined, p = undefined"),
        "{html}"
    );
    let c: CompareReport = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(c.paired_tasks, 1);
    // ... and says why, with the task's replicates on each side, everywhere.
    assert!(
        c.warnings
            .iter()
            .any(|w| w.contains("no between-task variance") && w.contains("Over its replicates")),
        "{:?}",
        c.warnings
    );
    assert!(html.contains("no between-task variance"), "{html}");
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("no between-task variance"),
        "{}",
        show(&o)
    );
    assert_eq!(c.difference.as_ref().unwrap().mean, 1.0);
    assert_eq!(c.tasks[0].flipped.as_deref(), Some("fail→pass"));
    // Without a choice, a run of two variants is refused with their names.
    let o = Command::new(bin())
        .args(["compare"])
        .args([&out, &out])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("`bad`, `good`"),
        "{}",
        show(&o)
    );
}

#[test]
fn resume_after_a_kill_mid_suite_reruns_only_the_unfinished_units() {
    let dir = Folder::new("suite-resume");
    let task = flaky_task(&dir, "1");
    let out = dir.join("out");
    let mut cmd = Command::new(bin());
    cmd.args(["run", "--repeats", "4", "--jobs", "1", "--out"])
        .arg(&out)
        .arg(&task)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let mut child = cmd.spawn().unwrap();
    let files = |out: &Path| -> Vec<PathBuf> {
        (0..4)
            .map(|r| out.join(format!("flaky/claude-code/r{r:02}/task.json")))
            .filter(|p| p.exists())
            .collect()
    };
    let start = std::time::Instant::now();
    while files(&out).is_empty() {
        assert!(
            start.elapsed().as_secs() < 120,
            "no unit finished in 2 minutes"
        );
        assert!(child.try_wait().unwrap().is_none(), "the run ended early");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    child.kill().unwrap(); // SIGKILL: nothing is written after this
    child.wait().unwrap();
    let done: Vec<(PathBuf, Vec<u8>)> = files(&out)
        .into_iter()
        .map(|p| {
            let bytes = std::fs::read(&p).unwrap();
            (p, bytes)
        })
        .collect();
    assert!(done.len() < 4, "the kill came after the whole suite");
    // run.json is written when the run starts and again as each unit ends: after the kill
    // it lists at most the units whose task.json was written, and counts the rest.
    let run_json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("run.json")).unwrap()).unwrap();
    let rows = run_json["rows"].as_array().unwrap().len();
    assert!(
        rows <= done.len(),
        "run.json lists {rows} rows, {} done",
        done.len()
    );
    assert_eq!(
        run_json["unfinished"].as_u64(),
        Some((4 - rows) as u64),
        "{run_json}"
    );
    // Named through `..`: the run's closing line names the folder without it.
    let roundabout = out.join("..").join(out.file_name().unwrap());
    let o = run_isolated(&["run", "--resume"], &[&roundabout]);
    let stderr = exits(&o, 1);
    assert!(
        stderr.contains(&format!(
            "{} unit(s) complete and kept, {} to run",
            done.len(),
            4 - done.len()
        )),
        "{}",
        show(&o)
    );
    assert!(
        stderr.contains(&format!(
            "results in {}",
            out.canonicalize().unwrap().display()
        )) && !stderr.contains("/../"),
        "{}",
        show(&o)
    );
    // The kept units are untouched; every unit has its result; the counts add up.
    for (path, bytes) in &done {
        assert_eq!(
            &std::fs::read(path).unwrap(),
            bytes,
            "{} was rewritten",
            path.display()
        );
    }
    assert_eq!(files(&out).len(), 4);
    let s = summary(&out);
    assert_eq!(s.rows.len(), 4);
    let t = &s.statistics[0].per_task[0];
    assert_eq!((t.graded, t.missing), (4, 0), "{t:?}");
}

#[test]
fn check_validates_experiment_files_too() {
    let root = crate::support::root();
    let o = Command::new(bin())
        .arg("check")
        .arg(root.join("examples/experiments/hello-date.yaml"))
        .output()
        .unwrap();
    exits(&o, 0);
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("experiment `hello-date`"),
        "{}",
        show(&o)
    );
    let dir = Folder::new("check-experiment");
    let bad = dir.write(
        "bad.yaml",
        "experiment_id: bad-one\nvariants:\n  - variant_id: a\n    agnet: {type: claude-code}\n",
    );
    let o = Command::new(bin()).arg("check").arg(&bad).output().unwrap();
    exits(&o, 2);
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("agnet"),
        "{}",
        show(&o)
    );
    // Counted as what it is (was "1 of 1 task files did not load").
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("1 of 1 experiment files did not load"),
        "{}",
        show(&o)
    );
}

#[test]
fn the_example_experiment_resolves() {
    use coder_eval::suite::experiment::{Experiment, Overrides, resolve_file};
    let root = crate::support::root();
    let exp = Experiment::load(&root.join("examples/experiments/hello-date.yaml")).unwrap();
    let (tasks, _) = resolve_file(
        &root.join("tasks/hello_date/task.yaml"),
        &Default::default(),
        Some(&exp),
        &Overrides::default(),
    )
    .unwrap();
    let variants: Vec<_> = tasks.iter().map(|t| t.variant.clone().unwrap()).collect();
    assert_eq!(variants, vec!["diligent", "lazy"]);
    assert!(tasks.iter().all(|t| t.repeats == 3));
    assert!(tasks[1].task.prompt.starts_with("Think step by step"));
    assert!(
        tasks[1]
            .task
            .agent
            .scripted_model
            .as_ref()
            .unwrap()
            .ends_with("examples/experiments/scripts/lazy.yaml")
    );
    // The README's harness comparison: one variant per harness, the task's own script.
    let exp = Experiment::load(&root.join("examples/experiments/harnesses.yaml")).unwrap();
    let (tasks, _) = resolve_file(
        &root.join("tasks/hello_date/task.yaml"),
        &Default::default(),
        Some(&exp),
        &Overrides::default(),
    )
    .unwrap();
    let harnesses: Vec<_> = tasks
        .iter()
        .map(|t| {
            (
                t.variant.clone().unwrap(),
                t.task.agent.harness.clone().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        harnesses,
        vec![
            ("claude".to_string(), "claude-code".to_string()),
            ("codex".to_string(), "codex".to_string())
        ]
    );
    assert!(
        tasks
            .iter()
            .all(|t| t.repeats == 2 && t.task.agent.scripted_model.is_some())
    );
}

#[test]
fn bad_suite_input_is_refused_before_anything_runs() {
    let dir = Folder::new("suite-bad-input");
    let task = flaky_task(&dir, "0");
    let exp = dir.write(
        "exp.yaml",
        "experiment_id: x\nvariants:\n  - variant_id: a\n    agent: {modle: m}\n",
    );
    let out = dir.join("out");
    for (args, expect) in [
        (
            vec!["run", "--experiment", exp.to_str().unwrap()],
            "exp.yaml:4:13: variants[a].agent: unknown field `modle`",
        ),
        (
            vec!["run", "-D", "run_limit.max_turns=3"],
            "did you mean `run_limits`",
        ),
        (vec!["run", "--repeats", "0"], "--repeats"),
        (
            vec![
                "run",
                "-D",
                "agent.model=x",
                "--harness",
                "codex",
                "--harness",
                "pi",
            ],
            "--harness names one harness",
        ),
    ] {
        let o = Command::new(bin())
            .args(&args)
            .arg("--out")
            .arg(&out)
            .arg(&task)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", show(&o));
        assert!(
            String::from_utf8_lossy(&o.stderr).contains(expect),
            "{args:?}: {}",
            show(&o)
        );
        assert!(!out.exists(), "{args:?} wrote {}", out.display());
    }
    let o = Command::new(bin())
        .args(["run", "--resume"])
        .arg(&dir)
        .output()
        .unwrap();
    exits(&o, 2);
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("invocation.json"),
        "{}",
        show(&o)
    );
}

#[test]
fn result_folders_that_would_nest_or_use_a_reserved_name_are_refused_naming_both_files() {
    let dir = Folder::new("suite-nested-folders");
    dir.write(
        "plain.yaml",
        "task_id: s\ninitial_prompt: hi\nagent: {type: claude-code}\nsuccess_criteria: []\n",
    );
    // Row `claude-code` would write to s/claude-code/claude-code/, inside task s's folder.
    for (row, word) in [
        ("claude-code", "harness"),
        ("workspace", "own folder"),
        ("r01", "replicate"),
    ] {
        dir.write(
            "rows.yaml",
            &format!(
                "task_id: s\ninitial_prompt: hi\nagent: {{type: claude-code}}\ndataset:\n  rows: [{{id: ok}}, {{id: {row}}}]\nsuccess_criteria: []\n"
            ),
        );
        let o = dir.run(&["run", "--out", "out", "plain.yaml", "rows.yaml"]);
        let err = exits(&o, 2);
        assert!(
            err.contains(&format!("s/{row}")) && err.contains("rows.yaml") && err.contains(word),
            "{row}: {err}"
        );
        assert!(!dir.join("out/s").exists(), "nothing runs");
    }
    // A task id that names a file of the run's folder: refused before anything runs
    // (the run would end unable to write its run.json).
    for name in ["run.json", "report.html"] {
        dir.write(
            "file.yaml",
            &format!(
                "task_id: {name}\ninitial_prompt: hi\nagent: {{type: claude-code}}\nsuccess_criteria: []\n"
            ),
        );
        let o = dir.run(&["run", "--out", "out", "file.yaml"]);
        let err = exits(&o, 2);
        assert!(
            err.contains(name) && err.contains("a file of the run's folder"),
            "{name}: {err}"
        );
        assert!(!dir.join("out").join(name).exists(), "nothing runs");
    }
    // The same task id in two files: the message names both.
    dir.write(
        "again.yaml",
        "task_id: s\ninitial_prompt: hello\nagent: {type: claude-code}\nsuccess_criteria: []\n",
    );
    let o = dir.run(&["run", "--out", "out", "plain.yaml", "again.yaml"]);
    let err = exits(&o, 2);
    assert!(
        err.contains("given twice") && err.contains("plain.yaml") && err.contains("again.yaml"),
        "{err}"
    );
}

#[test]
fn a_misspelt_define_names_the_command_line_and_resume_refuses_new_options() {
    let dir = Folder::new("suite-define-resume");
    dir.write(
        "task.yaml",
        "task_id: t\ninitial_prompt: hi\nagent: {type: claude-code}\nrun_limits:\n  max_turns: 3\nsuccess_criteria: []\n",
    );
    let o = dir.run(&["run", "-D", "run_limits.max_turn=2", "task.yaml"]);
    let err = exits(&o, 2);
    assert!(
        err.contains("-D run_limits.max_turn=2") && !err.contains("task.yaml:"),
        "{err}"
    );
    let o = dir.run(&[
        "run",
        "--resume",
        "runs/x",
        "--repeats",
        "2",
        "--harness",
        "codex",
        "-D",
        "repeats=2",
    ]);
    let err = exits(&o, 2);
    assert!(
        err.contains("--repeats") && err.contains("--harness") && err.contains("-D"),
        "{err}"
    );
}

#[test]
fn grade_write_of_a_replicate_updates_its_run_json_row_statistics_junit_and_report() {
    let dir = Folder::new("suite-grade-write");
    let task = flaky_task(&dir, "0");
    let out = dir.join("out");
    let o = run_isolated(
        &["run", "--repeats", "2", "--jobs", "1", "--out"],
        &[&out, &task],
    );
    // r00 fails (first check), r01 passes.
    exits(&o, 1);
    assert_eq!(summary(&out).statistics[0].passes, 1);
    // Graded again by a task file whose criterion always passes.
    let text = std::fs::read_to_string(&task).unwrap();
    let start = text.find("    command:").unwrap();
    let end = start + text[start..].find('\n').unwrap();
    let lenient = dir.write(
        "lenient.yaml",
        &format!("{}    command: \"true\"{}", &text[..start], &text[end..]),
    );
    let o = Command::new(bin())
        .arg("grade")
        .arg(out.join("flaky/claude-code/r00"))
        .arg("--task")
        .arg(&lenient)
        .arg("--write")
        .output()
        .unwrap();
    exits(&o, 0);
    let s = summary(&out);
    let rows: Vec<_> = s.rows.iter().map(|r| (r.replicate, r.status)).collect();
    assert_eq!(
        rows,
        vec![
            (Some(0), coder_eval::results::TaskStatus::Success),
            (Some(1), coder_eval::results::TaskStatus::Success)
        ]
    );
    assert_eq!(s.statistics[0].passes, 2, "{:?}", s.statistics);
    let junit = std::fs::read_to_string(out.join("junit.xml")).unwrap();
    assert!(!junit.contains("<failure"), "{junit}");
    // Each case names its own replicate's task.json, a file that exists.
    for r in ["r00", "r01"] {
        let path = format!("flaky/claude-code/{r}/task.json");
        assert!(junit.contains(&format!("result: {path}")), "{junit}");
        assert!(out.join(&path).is_file());
    }
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("2/2 passed"), "report not rewritten");
}

#[test]
fn check_warns_of_a_missing_harness_and_refuses_a_task_id_given_by_two_files() {
    let dir = Folder::new("suite-check-consistent");
    let plain = "task_id: s\ninitial_prompt: hi\nsuccess_criteria: []\n";
    dir.write("one.yaml", plain);
    dir.write("two.yaml", plain);
    let o = dir.run(&["check", "one.yaml"]);
    let err = exits(&o, 0);
    assert!(
        err.contains("warning: one.yaml") && err.contains("no harness given"),
        "{err}"
    );
    let o = dir.run(&["check", "--harness", "claude-code", "one.yaml"]);
    assert!(!String::from_utf8_lossy(&o.stderr).contains("no harness"));
    // An experiment checked with it whose variants set agent.type supplies the harness;
    // one whose variants leave it unset does not.
    dir.write(
        "exp.yaml",
        "experiment_id: ab\nvariants:\n  - variant_id: a\n    agent: {type: claude-code}\n  - variant_id: b\n    agent: {type: pi}\n",
    );
    let o = dir.run(&["check", "exp.yaml", "one.yaml"]);
    let err = exits(&o, 0);
    assert!(!err.contains("no harness"), "{err}");
    dir.write(
        "half.yaml",
        "experiment_id: half\nvariants:\n  - variant_id: a\n    agent: {type: claude-code}\n  - variant_id: b\n    run_limits: {max_turns: 3}\n",
    );
    let o = dir.run(&["check", "half.yaml", "one.yaml"]);
    let err = exits(&o, 0);
    assert!(err.contains("no harness given"), "{err}");
    let o = dir.run(&["check", "one.yaml", "two.yaml"]);
    let err = exits(&o, 2);
    assert!(
        err.contains("given twice") && err.contains("one.yaml") && err.contains("two.yaml"),
        "{err}"
    );
}

#[test]
fn resume_runs_again_a_complete_unit_whose_task_changed_since_it_ran() {
    let dir = Folder::new("suite-resume-changed");
    let write_task = |name: &str, criterion_path: &str| {
        dir.write(
            &format!("{name}/script.yaml"),
            "name: write\nreplies:\n  - text: I'll write it.\n    tool_calls:\n      - write_file: {path: out.txt, content: \"hi\\n\"}\n  - text: Done.\n",
        );
        dir.write(
            &format!("{name}/task.yaml"),
            &format!(
                "task_id: {name}\ninitial_prompt: Write out.txt.\nagent:\n  type: claude-code\n  scripted_model: script.yaml\nrun_limits:\n  max_turns: 5\n  turn_timeout: 120\nsuccess_criteria:\n  - type: file_exists\n    path: {criterion_path}\n"
            ),
        )
    };
    let a = write_task("a", "out.txt");
    let b = write_task("b", "out.txt");
    let out = dir.join("out");
    let o = run_isolated(&["run", "--out"], &[&out, &a, &b]);
    exits(&o, 0);
    let b_json = out.join("b/claude-code/task.json");
    let b_before = std::fs::read(&b_json).unwrap();
    // a's criterion changes after it ran: its result was graded against the old one.
    write_task("a", "other.txt");
    let o = run_isolated(&["run", "--resume"], &[&out]);
    let stderr = exits(&o, 1);
    assert!(
        stderr.contains("note: a/claude-code: its inputs changed since it ran"),
        "{}",
        show(&o)
    );
    assert!(
        stderr.contains("1 unit(s) complete and kept, 1 to run (1 of them changed since they ran)"),
        "{}",
        show(&o)
    );
    assert_eq!(
        task_json(&out.join("a/claude-code/task.json")).status,
        TaskStatus::Failure
    );
    assert_eq!(std::fs::read(&b_json).unwrap(), b_before, "b was rewritten");
    // Resumed again with nothing changed: both kept (the ids of now were recorded).
    let o = run_isolated(&["run", "--resume"], &[&out]);
    exits(&o, 1);
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("2 unit(s) complete and kept, 0 to run"),
        "{}",
        show(&o)
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn check_refuses_the_experiment_errors_run_refuses() {
    let dir = Folder::new("check-experiment-refusals");
    dir.write(
        "task.yaml",
        "task_id: t\ninitial_prompt: Write app.py.\nagent:\n  type: claude-code\nsuccess_criteria:\n  - type: file_exists\n    path: app.py\n",
    );
    dir.write("ok.yaml", "name: ok\nreplies:\n  - text: Done.\n");
    for (name, body, says) in [
        (
            "bad-regex",
            "experiment_id: bad-regex\nvariants:\n  - variant_id: a\n    agent: {scripted_model: ok.yaml}\n    prompt_mutations:\n      - {type: replace, pattern: \"app.(py\", replacement: x, regex: true}\n",
            ":6:10: variants[a].prompt_mutations[0]: replace: bad regex",
        ),
        (
            "missing-script",
            "experiment_id: missing-script\nvariants:\n  - variant_id: b\n    agent: {scripted_model: scripts/nope.yaml}\n",
            ":4:13: variants[b].agent.scripted_model:",
        ),
        (
            "missing-prompt",
            "experiment_id: missing-prompt\ndefaults:\n  agent: {scripted_model: ok.yaml}\nvariants:\n  - variant_id: c\n    initial_prompt_file: prompts/nope.md\n",
            ":6:5: variants[c].initial_prompt_file:",
        ),
    ] {
        let exp = dir.join(format!("{name}.yaml"));
        std::fs::write(&exp, body).unwrap();
        let check = Command::new(bin()).arg("check").arg(&exp).output().unwrap();
        let run = Command::new(bin())
            .args(["run", "--experiment"])
            .arg(&exp)
            .arg(dir.join("task.yaml"))
            .arg("--out")
            .arg(dir.join(format!("out-{name}")))
            .output()
            .unwrap();
        for o in [&check, &run] {
            assert_eq!(o.status.code(), Some(2), "{name}: {}", show(o));
            let err = String::from_utf8_lossy(&o.stderr);
            assert!(
                // File, line, column and field (issue 15 trial: they named no line).
                err.contains(&format!("{}{says}", exp.display())),
                "{name}: {}",
                show(o)
            );
        }
        assert!(!dir.join(format!("out-{name}")).exists(), "{name}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// Issue 15 trial: `--scripted-model` on the command line replaces every variant's
/// `agent.scripted_model` (the command line is the last layer); the lineage says so
/// (source `cli`, the command line's script) and the run names the variants it replaced.
#[test]
fn a_command_line_script_replaces_the_variants_scripts_and_lineage_says_cli() {
    let dir = Folder::new("suite-cli-script");
    dir.write(
        "good.yaml",
        "name: good\nreplies:\n  - text: Writing.\n    tool_calls:\n      - write_file: {path: ok.txt, content: \"ok\\n\"}\n  - text: Done.\n",
    );
    dir.write("exp/lazy.yaml", "name: lazy\nreplies:\n  - text: Done.\n");
    dir.write(
        "task/task.yaml",
        "task_id: write_ok\ninitial_prompt: Write ok.txt.\nagent:\n  type: claude-code\nretry: {max_retries: 3}\nrun_limits:\n  max_turns: 4\n  turn_timeout: 120\nsuccess_criteria:\n  - type: file_exists\n    path: ok.txt\n",
    );
    let exp = dir.write(
        "exp/experiment.yaml",
        "experiment_id: script-vs-lazy\nvariants:\n  - variant_id: base\n  - variant_id: lazy\n    agent: {scripted_model: lazy.yaml}\n",
    );
    let out = dir.join("out");
    let o = run_isolated(
        &[
            "run",
            "--experiment",
            exp.to_str().unwrap(),
            "--scripted-model",
            dir.join("good.yaml").to_str().unwrap(),
            "--infra-retries",
            "1",
            "--out",
        ],
        &[&out, &dir.join("task/task.yaml")],
    );
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains("--scripted-model replaces agent.scripted_model of variant `lazy`"),
        "{}",
        show(&o)
    );
    for variant in ["base", "lazy"] {
        let t = task_json(&out.join(format!("{variant}/write_ok/claude-code/task.json")));
        // The command line's script ran: it writes ok.txt, the lazy one does not.
        assert_eq!(t.status.as_str(), "SUCCESS", "{variant}: {:?}", t.error);
        let entry = &t.lineage.as_ref().expect("lineage")["agent.scripted_model"];
        assert_eq!(entry["source"], "cli", "{variant}: {entry}");
        assert!(
            entry["value"].as_str().unwrap().ends_with("good.yaml"),
            "{variant}: {entry}"
        );
        // The task's `retry:` says 3; the command line's 1 is what ran.
        let retry = &t.lineage.as_ref().unwrap()["retry.max_retries"];
        assert_eq!(
            (&retry["source"], &retry["value"]),
            (&"cli".into(), &1.into()),
            "{variant}: {retry}"
        );
    }
}

/// Issue 15 trial: `--resume` reads the task files from invocation.json's `cwd`. A copy
/// of the run folder elsewhere is noted as such; once that folder is gone, the error
/// names it and where it comes from (was: "No such file or directory (os error 2)").
#[test]
fn resume_of_a_moved_run_names_the_recorded_cwd() {
    let dir = Folder::new("suite-resume-moved");
    let a = dir.sub("a");
    a.write("task/script.yaml", "name: s\nreplies:\n  - text: Done.\n");
    a.write(
        "task/task.yaml",
        "task_id: t\ninitial_prompt: Say done.\nagent:\n  type: claude-code\n  scripted_model: script.yaml\nrun_limits:\n  max_turns: 3\n  turn_timeout: 120\nsuccess_criteria:\n  - type: run_command\n    command: \"true\"\n",
    );
    let o = a.run(&["run", "task/task.yaml", "--out", "runs/x"]);
    exits(&o, 0);
    // And one in the default folder, runs/<timestamp>.
    let o = a.run(&["run", "task/task.yaml"]);
    exits(&o, 0);
    let stamped = std::fs::read_dir(a.join("runs"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .find(|n| n != "x")
        .expect("the default run folder");
    let b = dir.join("b");
    let cp = Command::new("cp")
        .arg("-r")
        .arg(&a)
        .arg(&b)
        .status()
        .unwrap();
    assert!(cp.success());
    for run in ["x", stamped.as_str()] {
        let o = dir.run(&["run", "--resume", &format!("b/runs/{run}")]);
        let stderr = exits(&o, 0);
        assert!(
            stderr.contains("is not the folder the run wrote")
                && stderr.contains(&a.join("runs").join(run).display().to_string()),
            "{}",
            show(&o)
        );
    }
    // Resuming the original: no such note.
    let o = dir.run(&["run", "--resume", "a/runs/x"]);
    assert!(
        !String::from_utf8_lossy(&o.stderr).contains("is not the folder"),
        "{}",
        show(&o)
    );
    std::fs::rename(&a, dir.join("c")).unwrap();
    let o = dir.run(&["run", "--resume", "b/runs/x"]);
    let stderr = exits(&o, 2);
    assert!(
        stderr.contains("invocation.json's cwd") && stderr.contains(&a.display().to_string()),
        "{}",
        show(&o)
    );
}

/// Issue 15 trial: two runs with no task in common: `compare` says nothing was compared
/// (stderr) and exits 1, its JSON holding no pair and a null p.
#[test]
fn compare_with_no_paired_task_warns_and_exits_one() {
    let dir = Folder::new("suite-compare-unpaired");
    dir.write("script.yaml", "name: s\nreplies:\n  - text: Done.\n");
    for id in ["one", "two"] {
        dir.write(
            &format!("{id}.yaml"),
            &format!(
                "task_id: {id}\ninitial_prompt: Say done.\nagent:\n  type: claude-code\n  scripted_model: script.yaml\nrun_limits:\n  max_turns: 3\n  turn_timeout: 120\nsuccess_criteria:\n  - type: run_command\n    command: \"true\"\n"
            ),
        );
        let o = dir.run(&["run", &format!("{id}.yaml"), "--out", id]);
        exits(&o, 0);
    }
    let o = dir.run(&["compare", "one", "two", "--json"]);
    exits(&o, 1);
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("nothing compared"),
        "{}",
        show(&o)
    );
    let c: CompareReport = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!((c.paired_tasks, c.p_value), (0, None));
    assert_eq!(c.unpaired, vec!["one".to_string(), "two".to_string()]);
}

/// Issue 15 trial: a variant's unknown harness was blamed on the task file's
/// `agent.type`; it names the experiment file and the variant.
#[test]
fn a_variants_unknown_harness_names_the_experiment_and_the_variant() {
    let dir = Folder::new("variant-harness");
    let task = flaky_task(&dir, "0");
    let exp = dir.write(
        "exp.yaml",
        "experiment_id: h\nvariants:\n  - variant_id: good\n  - variant_id: bad\n    agent: {type: nosuch}\n",
    );
    let o = Command::new(bin())
        .args(["run", "--experiment"])
        .arg(&exp)
        .arg(&task)
        .arg("--out")
        .arg(dir.join("out"))
        .output()
        .unwrap();
    let err = exits(&o, 2);
    assert!(
        err.contains(&format!("{}: variants[bad].agent.type", exp.display()))
            && err.contains("unknown harness `nosuch`")
            && !err.contains("task.yaml: agent.type"),
        "{}",
        show(&o)
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// Issue 15 trial N6: task files, `--out` or `--experiment` with `--resume` are refused
/// by name, and no usage line advertises `--resume <RUN_DIR> [TASKS]...`.
#[test]
fn resume_refuses_task_files_out_and_experiment_without_advertising_them() {
    let dir = Folder::new("suite-resume-usage");
    for (extra, names) in [
        (&["t.yaml"][..], "task files"),
        (&["--out", "y"][..], "--out"),
        (&["--experiment", "e.yaml"][..], "--experiment"),
    ] {
        let o = dir.run(&[&["run", "--resume", "runs/x"][..], extra].concat());
        let err = exits(&o, 2);
        assert!(
            err.contains(&format!("{names} cannot be given with it")) && !err.contains("TASKS"),
            "{err}"
        );
    }
}

/// The files created in one folder (inotify `IN_CREATE`): `write_atomically` writes
/// `NAME` through a new temporary file `.NAME.<random>.tmp` each time, so these count the
/// writes of `NAME` (unique names: the kernel never merges two such events, as it does
/// two successive renames onto one name).
struct Writes(i32);

impl Writes {
    fn watch(dir: &Path) -> Writes {
        use std::os::unix::ffi::OsStrExt;
        let fd = unsafe { libc::inotify_init1(libc::IN_NONBLOCK | libc::IN_CLOEXEC) };
        assert!(
            fd >= 0,
            "inotify_init1: {}",
            std::io::Error::last_os_error()
        );
        let path = std::ffi::CString::new(dir.as_os_str().as_bytes()).unwrap();
        let wd = unsafe { libc::inotify_add_watch(fd, path.as_ptr(), libc::IN_CREATE) };
        assert!(
            wd >= 0,
            "inotify_add_watch: {}",
            std::io::Error::last_os_error()
        );
        Writes(fd)
    }

    /// The writes of `name` since the watch began (the queue must not have overflowed).
    fn count(&self, name: &str) -> usize {
        let prefix = format!(".{name}.");
        let mut count = 0;
        let mut buf = vec![0u8; 1 << 16];
        loop {
            let n = unsafe { libc::read(self.0, buf.as_mut_ptr().cast(), buf.len()) };
            if n <= 0 {
                return count;
            }
            let mut at = 0;
            while at < n as usize {
                let word =
                    |i: usize| u32::from_ne_bytes(buf[at + i..at + i + 4].try_into().unwrap());
                let (mask, len) = (word(4), word(12) as usize);
                assert_eq!(
                    mask & libc::IN_Q_OVERFLOW,
                    0,
                    "the inotify queue overflowed"
                );
                let raw = &buf[at + 16..at + 16 + len];
                let file = &raw[..raw.iter().position(|b| *b == 0).unwrap_or(len)];
                if file.starts_with(prefix.as_bytes()) && file.ends_with(b".tmp") {
                    count += 1;
                }
                at += 16 + len;
            }
        }
    }
}

impl Drop for Writes {
    fn drop(&mut self) {
        unsafe { libc::close(self.0) };
    }
}

/// Issue 15 trial S2: an interrupted suite recorded each unit not run with a full rewrite
/// of run.json (1200 units took 57 s to exit). Now the stop writes run.json once, at its
/// end: counted by the temporary files it is written through (inotify), not timed.
#[test]
fn an_interrupted_suite_writes_run_json_once_at_the_stop_not_once_per_unit_not_run() {
    let dir = Folder::new("suite-stop-writes");
    let out = dir.join("out");
    std::fs::create_dir_all(&out).unwrap();
    // A stand-in for `claude`: `--version` answers; a launch says so, then hangs.
    let cli = dir.write(
        "claude",
        &format!(
            "#!/bin/sh\nif [ \"$1\" = \"--version\" ]; then echo \"stand-in 1.0\"; exit 0; fi\ntouch {}/launched\nexec sleep 600\n",
            dir.display()
        ),
    );
    std::fs::set_permissions(&cli, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    dir.write("script.yaml", "name: quiet\nreplies:\n  - text: Done.\n");
    dir.write(
        "task.yaml",
        "task_id: hang\ninitial_prompt: hi\nagent:\n  type: claude-code\n  scripted_model: script.yaml\nrun_limits:\n  max_turns: 2\n  turn_timeout: 600\nsuccess_criteria: []\n",
    );
    let writes = Writes::watch(&out);
    let units = 150;
    let mut child = Command::new(bin())
        .current_dir(&dir)
        .args([
            "run",
            "task.yaml",
            "--infra-retries",
            "0",
            "--jobs",
            "1",
            "--out",
            "out",
        ])
        .args(["--repeats", &units.to_string(), "--cli"])
        .arg(&cli)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    while !dir.join("launched").exists() {
        assert!(
            start.elapsed().as_secs() < 300,
            "the first unit never launched"
        );
        assert!(child.try_wait().unwrap().is_none(), "the run ended early");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let o = child.wait_with_output().unwrap();
    exits(&o, 130);
    // Written at the start and once by the stop; not once per unit.
    let writes = writes.count("run.json");
    assert!(
        (2..=3).contains(&writes),
        "run.json written {writes} times for {units} units"
    );
    let s = summary(&out);
    assert_eq!(s.rows.len(), units);
    let results = (0..units)
        .filter(|r| {
            out.join(format!("hang/claude-code/r{r:03}/task.json"))
                .is_file()
        })
        .count();
    assert_eq!(results, units, "every unit's task.json is written");
    // The units that never started share one line, not a row each.
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(stdout.matches("nothing ran").count(), 1, "{stdout}");
    assert!(
        stdout.contains(&format!("- {} unit(s) not started", units - 1)),
        "{stdout}"
    );
}

#[test]
fn repeats_of_an_agentless_task_are_not_applied_and_a_note_says_so() {
    let dir = Folder::new("suite-agentless-repeats");
    dir.write("tpl/ok.txt", "ok\n");
    let task = dir.write(
        "task.yaml",
        "task_id: none_ok\nagent: {type: none}\nsandbox: {template_dir: tpl}\nsuccess_criteria:\n  - type: file_exists\n    path: ok.txt\n",
    );
    let out = dir.join("out");
    let o = run_isolated(&["run", "--repeats", "250", "--out"], &[&out, &task]);
    let stderr = exits(&o, 0);
    assert_eq!(
        stderr
            .matches("task none_ok is agent.type: none: it runs once")
            .count(),
        1,
        "{}",
        show(&o)
    );
    assert!(
        stderr.contains("not the 250 replicates asked for"),
        "{}",
        show(&o)
    );
    assert_eq!(summary(&out).rows.len(), 1);
    std::fs::remove_dir_all(&dir).ok();
}

/// A run folder holding only a `run.json` whose statistics are `(task, passes of 2)`
/// for variant `v`, with `missing` replicates of the first task, run under experiment
/// `experiment` (none when `None`).
fn stats_run(dir: &Path, experiment: Option<&str>, tasks: &[(&str, u32)], missing: u32) {
    let per_task: Vec<serde_json::Value> = tasks
        .iter()
        .enumerate()
        .map(|(i, (id, passes))| {
            let m = if i == 0 { missing } else { 0 };
            serde_json::json!({"task_id": id, "replicates": 2 + m, "graded": 2, "passes": passes,
                "errored": 0, "skipped": 0, "missing": m, "pass_rate": f64::from(*passes) / 2.0,
                "mean_score": null, "pass_at_k": {}, "pass_hat_k": {}, "wilson95": null,
                "flaky": *passes == 1})
        })
        .collect();
    let mut run = serde_json::json!({"result_version": 1, "rows": [], "statistics": [{
        "variant": "v", "tasks": tasks.len(), "tasks_graded": tasks.len(), "tasks_flaky": 0,
        "graded": 2 * tasks.len(), "passes": 0, "errored": 0, "skipped": 0, "missing": missing,
        "pass_rate": null, "score": null, "per_task": per_task}]});
    if let Some(id) = experiment {
        run["experiment"] = serde_json::json!({"experiment_id": id, "description": "",
            "file": format!("/x/{id}.yaml"), "variants": ["v"]});
    }
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("run.json"), run.to_string()).unwrap();
}

#[test]
fn compare_names_both_folders_and_warns_of_other_experiments_and_missing_replicates() {
    let dir = Folder::new("suite-compare-warnings");
    stats_run(&dir.join("a"), Some("exp-one"), &[("t1", 0), ("t2", 1)], 3);
    stats_run(&dir.join("b"), Some("exp-two"), &[("t1", 2), ("t2", 2)], 0);
    stats_run(&dir.join("c"), Some("exp-two"), &[("t1", 1), ("t2", 2)], 0);
    let o = dir.run(&["compare", "a", "b"]);
    exits(&o, 0);
    let (out, err) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    assert!(out.contains("(run a)") && out.contains("(run b)"), "{out}");
    assert!(
        err.contains("warning: A (a) is a run of experiment `exp-one` (/x/exp-one.yaml) and B (b) is a run of experiment `exp-two` (/x/exp-two.yaml)"),
        "{err}"
    );
    assert!(
        err.contains("warning: A (a, v) has 3 replicate(s) missing"),
        "{err}"
    );
    // JSON and HTML carry the folders and the warnings too.
    let o = dir.run(&["compare", "a", "b", "--json", "--html", "cmp.html"]);
    let c: CompareReport = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        (c.a_run.as_deref(), c.b_run.as_deref()),
        (Some("a"), Some("b"))
    );
    assert_eq!(c.warnings.len(), 2, "{:?}", c.warnings);
    let html = std::fs::read_to_string(dir.join("cmp.html")).unwrap();
    assert!(
        html.contains("<code>a</code>") && html.contains("Warning: "),
        "{html}"
    );
    // One experiment, nothing missing: no warning.
    let o = dir.run(&["compare", "b", "c"]);
    exits(&o, 0);
    assert!(
        !String::from_utf8_lossy(&o.stderr).contains("warning"),
        "{}",
        show(&o)
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn check_reports_every_type_error_of_an_experiment_file() {
    let dir = Folder::new("check-experiment-every-error");
    dir.write(
        "types.yaml",
        "experiment_id: types\ndefaults:\n  repeats: \"three\"\nvariants:\n  - variant_id: a\n    run_limits: {max_turns: \"lots\"}\n",
    );
    let o = dir.run(&["check", "types.yaml"]);
    let err = exits(&o, 2);
    let errors: Vec<&str> = err.lines().filter(|l| l.starts_with("error: ")).collect();
    assert_eq!(errors.len(), 2, "{}", show(&o));
    assert!(errors[0].contains("types.yaml:3:"), "{}", show(&o));
    assert!(errors[1].contains("types.yaml:6:"), "{}", show(&o));
    std::fs::remove_dir_all(&dir).ok();
}
