//! One suite on several machines, offline: `coder-eval plan`, three shards run as
//! separate processes (`run --plan --shard K/3`), and `merge`, which must give what one
//! unsharded run gives; a shard folder of another plan refused, missing units listed,
//! duplicates dropped, a shard refusing a plan whose task files changed; the emitted
//! Kubernetes Indexed Job validated against the Kubernetes schemas (`kubernetes-validate`,
//! installed by scripts/setup.sh). Each run drives the real Claude Code CLI against the
//! scripted model.

use crate::support::{Crash, bin, isolate, lines, scratch, show, stand_in_claude, summary};
use coder_eval::exit_codes;
use coder_eval::results::{RunSummary, TaskResult};
use coder_eval::suite::plan::Plan;
use coder_eval::suite::shard::ShardRecord;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Two variants (a scripted model that writes ok.txt, one that does not) of one task.
fn experiment(dir: &Path) -> (PathBuf, PathBuf) {
    std::fs::create_dir_all(dir.join("exp/scripts")).unwrap();
    std::fs::create_dir_all(dir.join("task")).unwrap();
    std::fs::write(
        dir.join("exp/scripts/good.yaml"),
        "name: good\nreplies:\n  - text: Writing.\n    tool_calls:\n      - write_file: {path: ok.txt, content: \"ok\\n\"}\n  - text: Done.\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("exp/scripts/bad.yaml"),
        "name: bad\nreplies:\n  - text: I will not write anything.\n",
    )
    .unwrap();
    let task = dir.join("task/task.yaml");
    std::fs::write(
        &task,
        "task_id: write_ok\ninitial_prompt: Write ok.txt.\nagent:\n  type: claude-code\nrun_limits:\n  max_turns: 4\n  turn_timeout: 120\nsuccess_criteria:\n  - type: file_exists\n    path: ok.txt\n",
    )
    .unwrap();
    let exp = dir.join("exp/experiment.yaml");
    std::fs::write(
        &exp,
        "experiment_id: good-vs-bad\nvariants:\n  - variant_id: bad\n    agent: {scripted_model: scripts/bad.yaml}\n  - variant_id: good\n    agent: {scripted_model: scripts/good.yaml}\n",
    )
    .unwrap();
    (exp, task)
}

fn plan(exp: &Path, task: &Path, repeats: &str, out: &Path) -> Plan {
    let o = Command::new(bin())
        .args(["plan", "--experiment"])
        .arg(exp)
        .arg(task)
        .args(["--repeats", repeats, "--out"])
        .arg(out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", show(&o));
    Plan::read(out).unwrap()
}

fn merge(dirs: &[&Path], plan: &Path, out: &Path) -> Output {
    Command::new(bin())
        .arg("merge")
        .args(dirs)
        .arg("--plan")
        .arg(plan)
        .arg("--out")
        .arg(out)
        .output()
        .unwrap()
}

/// What must match between a merged and an unsharded run, per row of run.json.
fn rows(s: &RunSummary) -> Vec<serde_json::Value> {
    s.rows
        .iter()
        .map(|r| {
            serde_json::json!([
                r.task_id,
                r.harness,
                r.variant,
                r.replicate,
                r.status,
                r.weighted_score,
                r.num_turns,
                r.tool_calls,
                r.result
            ])
        })
        .collect()
}

/// What must match per unit's task.json (not times, paths or pids).
fn unit(path: &Path) -> serde_json::Value {
    let t: TaskResult = serde_json::from_str(&std::fs::read_to_string(path).unwrap())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let criteria: Vec<serde_json::Value> = serde_json::to_value(&t.criteria)
        .unwrap()
        .as_array()
        .unwrap()
        .iter()
        .map(|c| serde_json::json!([c["type"], c["score"], c["passed"]]))
        .collect();
    serde_json::json!({
        "status": t.status, "score": t.weighted_score, "variant": t.variant,
        "replicate": t.replicate, "prompt": t.prompt, "criteria": criteria,
        "turns": t.turn.as_ref().map(|x| x.num_turns),
        "tools": t.turn.as_ref().map(|x| x.tool_calls.len()),
        "lineage": t.lineage, "run_limits": serde_json::to_value(&t.run_limits).unwrap(),
    })
}

#[test]
fn three_shards_merged_give_the_unsharded_run_and_merge_checks_its_folders() {
    let dir = scratch("shards");
    let (exp, task) = experiment(&dir);
    let plan_file = dir.join("plan.json");
    let p = plan(&exp, &task, "3", &plan_file);
    // 2 variants × 3 replicates, each id its own; the plan id is the ids'.
    assert_eq!(p.units.len(), 6);
    let mut ids: Vec<&str> = p.units.iter().map(|u| u.id.as_str()).collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 6);
    assert_eq!(
        p.plan_id,
        coder_eval::suite::plan::plan_id(p.units.iter().map(|u| u.id.as_str()))
    );
    assert_eq!(p.units[0].result_dir, "bad/write_ok/claude-code/r00");
    assert!(p.units.iter().all(|u| u.inputs.cli_version.is_some()));
    // The same command plans the same ids.
    assert_eq!(
        plan(&exp, &task, "3", &dir.join("again.json")).plan_id,
        p.plan_id
    );

    // One unsharded run.
    let full = dir.join("full");
    let o = isolate(
        Command::new(bin())
            .args(["run", "--experiment"])
            .arg(&exp)
            .arg(&task)
            .args(["--repeats", "3", "--jobs", "2", "--out"])
            .arg(&full),
    )
    .output()
    .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", show(&o));

    // Three shards, as three processes at once; the last one as a pod of an Indexed Job
    // finds it (JOB_COMPLETION_INDEX, CODER_EVAL_SHARD_COUNT).
    let shards: Vec<PathBuf> = (0..3).map(|k| dir.join(format!("shard{k}"))).collect();
    let children: Vec<_> = shards
        .iter()
        .enumerate()
        .map(|(k, out)| {
            let mut cmd = Command::new(bin());
            cmd.args(["run", "--plan"]).arg(&plan_file);
            if k == 2 {
                cmd.arg("--shard-from-env")
                    .env("JOB_COMPLETION_INDEX", "2")
                    .env("CODER_EVAL_SHARD_COUNT", "3");
            } else {
                cmd.args(["--shard", &format!("{k}/3")]);
            }
            isolate(cmd.arg("--out").arg(out))
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let o = child.wait_with_output().unwrap();
        // Failed units are results, not a shard failure: exit 0.
        assert_eq!(o.status.code(), Some(0), "{}", show(&o));
    }
    let records: Vec<ShardRecord> = shards
        .iter()
        .map(|s| ShardRecord::read(s).unwrap())
        .collect();
    let mut ran: Vec<&str> = records
        .iter()
        .flat_map(|r| r.units.iter().map(String::as_str))
        .collect();
    ran.sort();
    assert_eq!(ran, ids, "every unit in exactly one shard");
    assert_eq!(records[2].shard.index, 2);

    // A shard run again into its folder (a retried pod) keeps its complete units.
    let k = records.iter().position(|r| !r.units.is_empty()).unwrap();
    let kept: Vec<(PathBuf, Vec<u8>)> = records[k]
        .units
        .iter()
        .map(|id| {
            let u = p.units.iter().find(|u| &u.id == id).unwrap();
            let path = shards[k].join(&u.result_dir).join("task.json");
            let bytes = std::fs::read(&path).unwrap();
            (path, bytes)
        })
        .collect();
    let o = Command::new(bin())
        .args(["run", "--plan"])
        .arg(&plan_file)
        .args(["--shard", &format!("{k}/3"), "--out"])
        .arg(&shards[k])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", show(&o));
    // Not the note of a run replacing the folder's list (issue 15 trial: it was printed
    // before the units were kept).
    assert!(
        !String::from_utf8_lossy(&o.stderr).contains("already holds a run"),
        "{}",
        show(&o)
    );
    assert!(
        String::from_utf8_lossy(&o.stderr).contains(&format!(
            "{} unit(s) complete and kept, 0 to run",
            kept.len()
        )),
        "{}",
        show(&o)
    );
    // So does `run --resume` of a shard's folder.
    let o = Command::new(bin())
        .args(["run", "--resume"])
        .arg(&shards[k])
        .env("JOB_COMPLETION_INDEX", "2")
        .env("CODER_EVAL_SHARD_COUNT", "3")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", show(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("complete and kept, 0 to run"),
        "{}",
        show(&o)
    );
    for (path, bytes) in &kept {
        assert_eq!(&std::fs::read(path).unwrap(), bytes, "{}", path.display());
    }
    // Another shard's folder is refused as --out.
    let o = Command::new(bin())
        .args(["run", "--plan"])
        .arg(&plan_file)
        .args(["--shard", &format!("{}/3", (k + 1) % 3), "--out"])
        .arg(&shards[k])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(exit_codes::USAGE), "{}", show(&o));

    // merge = the unsharded run.
    let merged = dir.join("merged");
    let shard_refs: Vec<&Path> = shards.iter().map(PathBuf::as_path).collect();
    let o = merge(&shard_refs, &plan_file, &merged);
    assert_eq!(o.status.code(), Some(1), "{}", show(&o));
    let (a, b) = (summary(&full), summary(&merged));
    assert_eq!(rows(&b), rows(&a));
    assert_eq!(b.unfinished, 0);
    assert_eq!(
        serde_json::to_value(&b.statistics).unwrap(),
        serde_json::to_value(&a.statistics).unwrap()
    );
    assert_eq!(b.statistics.len(), 2);
    assert_eq!(b.experiment, a.experiment);
    for u in &p.units {
        let rel = Path::new(&u.result_dir).join("task.json");
        assert_eq!(
            unit(&merged.join(&rel)),
            unit(&full.join(&rel)),
            "{}",
            u.result_dir
        );
        assert!(merged.join(&u.result_dir).join("recording.jsonl").exists());
    }
    let cases = |d: &Path| {
        std::fs::read_to_string(d.join("junit.xml"))
            .unwrap()
            .matches("<testcase")
            .count()
    };
    assert_eq!(cases(&merged), cases(&full));
    assert!(
        std::fs::read_to_string(merged.join("report.html"))
            .unwrap()
            .contains("good")
    );

    // A shard folder of another plan is refused, naming it and both plan ids.
    let other_file = dir.join("other.json");
    let other = plan(&exp, &task, "2", &other_file);
    assert_ne!(other.plan_id, p.plan_id);
    let o = merge(&shard_refs, &other_file, &dir.join("foreign"));
    assert_eq!(o.status.code(), Some(exit_codes::USAGE), "{}", show(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(&shards[0].display().to_string())
            && err.contains(&p.plan_id)
            && err.contains(&other.plan_id),
        "{}",
        show(&o)
    );
    assert!(!dir.join("foreign/run.json").exists());

    // Leave out a shard that ran something: its units are listed as missing.
    let rest: Vec<&Path> = (0..3).filter(|i| *i != k).map(|i| shard_refs[i]).collect();
    let partial = dir.join("partial");
    let o = merge(&rest, &plan_file, &partial);
    assert_eq!(o.status.code(), Some(exit_codes::FAILED), "{}", show(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    let n = records[k].units.len();
    assert!(
        err.contains(&format!("missing: {n} of 6 unit(s)")),
        "{}",
        show(&o)
    );
    for id in &records[k].units {
        let u = p.units.iter().find(|u| &u.id == id).unwrap();
        assert!(
            err.contains(&format!("{}  {}", u.unit.label(), u.id)),
            "{}",
            show(&o)
        );
    }
    let s = summary(&partial);
    assert_eq!((s.rows.len(), s.unfinished), (6 - n, n));
    // junit.xml lists them too, as errors saying why.
    let xml = std::fs::read_to_string(partial.join("junit.xml")).unwrap();
    assert_eq!(xml.matches("<testcase").count(), 6, "{xml}");
    assert_eq!(xml.matches("type=\"MISSING\"").count(), n, "{xml}");
    assert!(
        xml.contains("no complete result in any shard folder"),
        "{xml}"
    );
    let missing: u32 = s.statistics.iter().map(|v| v.missing).sum();
    assert_eq!(missing as usize, n);

    // A shard given twice (a copy of its folder): kept once, from the first folder.
    let copy = dir.join(format!("shard{k}-copy"));
    assert!(
        Command::new("cp")
            .arg("-a")
            .arg(&shards[k])
            .arg(&copy)
            .status()
            .unwrap()
            .success()
    );
    let mut twice: Vec<&Path> = shard_refs.clone();
    twice.push(&copy);
    let o = merge(&twice, &plan_file, &dir.join("twice"));
    assert_eq!(o.status.code(), Some(exit_codes::FAILED), "{}", show(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(
        err.matches("kept the result from").count(),
        n,
        "{}",
        show(&o)
    );
    assert!(
        err.contains(&format!("kept the result from {}", shards[k].display())),
        "{}",
        show(&o)
    );
    assert_eq!(rows(&summary(&dir.join("twice"))), rows(&a));
    // The same folder given twice (issue 15 trial: "unit … is in runs/s2-0 and in
    // runs/s2-0"): said once, merged once.
    let mut same: Vec<&Path> = shard_refs.clone();
    same.push(&shards[k]);
    let o = merge(&same, &plan_file, &dir.join("same-twice"));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(&format!(
            "{} is given twice: merged once",
            shards[k].display()
        )) && !err.contains("kept the result from"),
        "{}",
        show(&o)
    );
    assert_eq!(rows(&summary(&dir.join("same-twice"))), rows(&a));

    // Merged again into the full merge's folder (an earlier merge of this plan): allowed,
    // and the units it held that no folder given has are kept (issue 15 trial S1: they
    // were deleted and listed as missing).
    let o = merge(&rest, &plan_file, &merged);
    assert_eq!(o.status.code(), Some(exit_codes::FAILED), "{}", show(&o));
    for id in &records[k].units {
        let u = p.units.iter().find(|u| &u.id == id).unwrap();
        assert!(
            merged.join(u.unit.rel_dir()).join("task.json").is_file(),
            "{}",
            u.unit.label()
        );
    }
    assert_eq!(summary(&merged).unfinished, 0);
    assert_eq!(rows(&summary(&merged)), rows(&a));
    // A folder holding something else (a plain run's, notes): refused, left as it was.
    let other = dir.join("other");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(other.join("notes.txt"), "mine").unwrap();
    let o = merge(&rest, &plan_file, &other);
    assert_eq!(o.status.code(), Some(exit_codes::USAGE), "{}", show(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("already holds files"),
        "{}",
        show(&o)
    );
    assert!(!other.join("run.json").exists());

    // The task file changed after planning: a shard refuses to run, nothing runs.
    std::fs::write(
        &task,
        std::fs::read_to_string(&task).unwrap() + "# edited\n",
    )
    .unwrap();
    let o = Command::new(bin())
        .args(["run", "--plan"])
        .arg(&plan_file)
        .args(["--shard", "0/3", "--out"])
        .arg(dir.join("stale"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(exit_codes::USAGE), "{}", show(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("the task folder's files changed since"),
        "{}",
        show(&o)
    );
    assert!(!dir.join("stale/shard.json").exists());
}

/// `kubernetes-validate` (scripts/setup.sh) on `file`, strict (unknown fields refused).
fn k8s_validate(file: &Path) -> Output {
    Command::new("kubernetes-validate")
        .args(["--strict", "-k", "1.33.0"])
        .arg(file)
        .output()
        .expect("kubernetes-validate is installed (scripts/setup.sh)")
}

#[test]
fn the_emitted_indexed_job_is_valid_against_the_kubernetes_schema() {
    let dir = scratch("shards-k8s");
    let (exp, task) = experiment(&dir);
    let o = Command::new(bin())
        .args(["plan", "--experiment"])
        .arg(&exp)
        .arg(&task)
        .args(["--repeats", "2", "--out"])
        .arg(dir.join("plan.json"))
        .args([
            "--emit",
            "k8s-job",
            "--image",
            "registry.example/coder-eval:0.1.0",
            "--shards",
            "3",
            "--backoff-limit-per-index",
            "4",
            "--job-name",
            "trial",
            "--pass-env",
            "ANTHROPIC_API_KEY",
        ])
        .env("ANTHROPIC_API_KEY", "sk-test")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", show(&o));
    // What to create first: the ConfigMap under the key the pods read whatever the plan
    // file is called, and the Secret the passed variable comes from.
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(&format!(
            "kubectl create configmap trial-plan --from-file=plan.json={}",
            dir.join("plan.json").display()
        )),
        "{err}"
    );
    assert!(
        err.contains("kubectl create secret generic trial-env --from-literal=ANTHROPIC_API_KEY="),
        "{err}"
    );
    assert!(!err.contains("sk-test"), "{err}");
    let plan = Plan::read(&dir.join("plan.json")).unwrap();
    // The plan's stored arguments leave the manifest's flags out.
    assert!(
        !plan.args.iter().any(|a| a == "--image" || a == "--out"),
        "{:?}",
        plan.args
    );
    let job = dir.join("job.yaml");
    std::fs::write(&job, &o.stdout).unwrap();
    let v = k8s_validate(&job);
    assert!(v.status.success(), "{}", show(&v));
    let m: serde_json::Value = serde_yaml_ng::from_slice(&o.stdout).unwrap();
    let spec = &m["spec"];
    assert_eq!(
        (m["apiVersion"].as_str(), m["kind"].as_str()),
        (Some("batch/v1"), Some("Job"))
    );
    assert_eq!(spec["completionMode"], "Indexed");
    assert_eq!(
        (spec["completions"].as_u64(), spec["parallelism"].as_u64()),
        (Some(3), Some(3))
    );
    assert_eq!(spec["backoffLimitPerIndex"], 4);
    let rules = spec["podFailurePolicy"]["rules"].as_array().unwrap();
    let codes = |action: &str| -> Vec<i64> {
        rules
            .iter()
            .filter(|r| r["action"] == action)
            .flat_map(|r| {
                r["onExitCodes"]["values"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default()
            })
            .map(|c| c.as_i64().unwrap())
            .collect()
    };
    assert_eq!(codes("FailJob"), vec![i64::from(exit_codes::USAGE)]);
    assert!(codes("Count").contains(&i64::from(exit_codes::INFRA)));
    let container = &spec["template"]["spec"]["containers"][0];
    assert_eq!(container["image"], "registry.example/coder-eval:0.1.0");
    assert!(
        container["args"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a == "--shard-from-env"),
        "{container}"
    );
    let env: Vec<&str> = container["env"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        env,
        vec![
            "JOB_COMPLETION_INDEX",
            "CODER_EVAL_SHARD_COUNT",
            "ANTHROPIC_API_KEY"
        ]
    );
    assert_eq!(
        container["env"][2]["valueFrom"]["secretKeyRef"],
        serde_json::json!({"name": "trial-env", "key": "ANTHROPIC_API_KEY"})
    );
    assert!(!String::from_utf8_lossy(&o.stdout).contains("sk-test"));
    assert_eq!(spec["template"]["spec"]["restartPolicy"], "Never");
    // The validator is not a rubber stamp: a Job it must refuse is refused.
    let mut broken = m.clone();
    broken["spec"]["completionMode"] = "Sideways".into();
    broken["spec"]["template"]["spec"]["containers"][0]["imagePullPolicy"] = 7.into();
    let bad = dir.join("broken.yaml");
    std::fs::write(&bad, serde_yaml_ng::to_string(&broken).unwrap()).unwrap();
    let v = k8s_validate(&bad);
    assert!(!v.status.success(), "{}", show(&v));
    // --emit without --image, a plan without --out, a Job name Kubernetes refuses, a plan
    // too big for the ConfigMap: refused, nothing written.
    let lone = dir.join("lone.json");
    let long = "a".repeat(59);
    let exp_arg = exp.display().to_string();
    for args in [
        &["--emit", "k8s-job", "--out"][..],
        &["--emit", "k8s-job", "--image", "i"][..],
        &[
            "--emit",
            "k8s-job",
            "--image",
            "i",
            "--job-name",
            "Hello_Job",
            "--out",
        ][..],
        &[
            "--emit",
            "k8s-job",
            "--image",
            "i",
            "--job-name",
            "x-",
            "--out",
        ][..],
        &[
            "--emit",
            "k8s-job",
            "--image",
            "i",
            "--job-name",
            &long,
            "--out",
        ][..],
        // 2 variants × 10000 replicates: some 1.8 MB even written compactly (each
        // replicate costs its id).
        &[
            "--emit",
            "k8s-job",
            "--image",
            "i",
            "--experiment",
            &exp_arg,
            "--repeats",
            "10000",
            "--out",
        ][..],
    ] {
        let o = Command::new(bin())
            .arg("plan")
            .arg(&task)
            .args(args)
            .arg(&lone)
            .output()
            .unwrap();
        assert_eq!(
            o.status.code(),
            Some(exit_codes::USAGE),
            "{args:?}: {}",
            show(&o)
        );
        assert!(!lone.exists());
        let err = String::from_utf8_lossy(&o.stderr);
        if args.contains(&"10000") {
            assert!(err.contains("1 MiB") && err.contains("ConfigMap"), "{err}");
        }
        if args.contains(&"--job-name") {
            assert!(err.contains("DNS-1123") || err.contains("1 to 58"), "{err}");
        }
    }
}

/// [`stand_in_claude`] at `<dir>/claude`, every launch of which crashes after `sleep`
/// seconds.
fn crashing_cli(dir: &Path, sleep: u32) -> PathBuf {
    let cli = dir.join("claude");
    stand_in_claude(&cli, dir, Crash::Every, sleep);
    cli
}

fn launches(dir: &Path) -> usize {
    lines(&dir.join("launches"))
}

/// Waits (up to 60 s) until the stand-in CLI in `dir` has been launched once; `who` (the
/// process that launches it) is named when it never is.
fn wait_for_first_launch(dir: &Path, who: &str) {
    let start = std::time::Instant::now();
    while launches(dir) == 0 {
        assert!(
            start.elapsed().as_secs() < 60,
            "{who} never started its CLI"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// `plan` of the experiment (2 units) with `extra` arguments, into `plan_file`.
fn plan_with(exp: &Path, task: &Path, extra: &[&std::ffi::OsStr], plan_file: &Path) {
    let o = Command::new(bin())
        .args(["plan", "--experiment"])
        .arg(exp)
        .arg(task)
        .args(extra)
        .arg("--out")
        .arg(plan_file)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", show(&o));
}

fn shard(plan_file: &Path, extra: &[&str], out: &Path) -> Output {
    Command::new(bin())
        .args(["run", "--plan"])
        .arg(plan_file)
        .args(["--shard", "0/1"])
        .args(extra)
        .arg("--out")
        .arg(out)
        .output()
        .unwrap()
}

#[test]
fn a_shard_whose_cli_cannot_start_is_a_configuration_error_and_one_out_of_retries_is_retryable() {
    let dir = scratch("shards-infra");
    let (exp, task) = experiment(&dir);
    let os = |s: &'static str| std::ffi::OsStr::new(s);
    // A CLI that is not there, or not executable: the same on every retry (exit 2), and
    // said so; nothing runs.
    let not_exec = dir.join("not-exec-claude");
    std::fs::write(&not_exec, "#!/bin/sh\necho stand-in 1.0\n").unwrap();
    for (cli, says) in [
        (Path::new("/nonexistent/claude"), "no such executable"),
        (not_exec.as_path(), "not executable"),
    ] {
        let plan_file = dir.join("plan-bad-cli.json");
        plan_with(&exp, &task, &[os("--cli"), cli.as_os_str()], &plan_file);
        let out = dir.join("bad-cli");
        let o = shard(&plan_file, &[], &out);
        assert_eq!(o.status.code(), Some(exit_codes::USAGE), "{}", show(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains(says) && err.contains(&cli.display().to_string()),
            "{}",
            show(&o)
        );
        assert!(!out.join("shard.json").exists(), "{}", show(&o));
    }

    // A CLI that crashes before its first model call on every launch: once its retries
    // ran out (none stored in the plan) the shard exits 3, and a retry of the shard runs
    // those units again instead of keeping them.
    let cli = crashing_cli(&dir, 0);
    let plan_file = dir.join("plan.json");
    plan_with(
        &exp,
        &task,
        &[os("--cli"), cli.as_os_str(), os("--infra-retries"), os("0")],
        &plan_file,
    );
    let out = dir.join("shard");
    let o = shard(&plan_file, &[], &out);
    assert_eq!(o.status.code(), Some(exit_codes::INFRA), "{}", show(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("2 unit(s) ended in an infrastructure error"),
        "{}",
        show(&o)
    );
    assert_eq!(launches(&dir), 2);
    let o = shard(&plan_file, &[], &out);
    assert_eq!(o.status.code(), Some(exit_codes::INFRA), "{}", show(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("0 unit(s) complete and kept, 2 to run"),
        "{}",
        show(&o)
    );
    assert_eq!(launches(&dir), 4);
    // What does not change a unit may be given anew, and is honoured: one retry each.
    let o = shard(
        &plan_file,
        &["--infra-retries", "1", "--retry-initial-delay", "0.1"],
        &out,
    );
    assert_eq!(o.status.code(), Some(exit_codes::INFRA), "{}", show(&o));
    assert_eq!(launches(&dir), 8, "{}", show(&o));
    // What would change the units is refused, not ignored.
    for extra in [
        &["--tags", "x"][..],
        &["--no-native-limits"][..],
        &["--pass-env", "HOME"][..],
    ] {
        let o = shard(&plan_file, extra, &out);
        assert_eq!(
            o.status.code(),
            Some(exit_codes::USAGE),
            "{extra:?}: {}",
            show(&o)
        );
        assert!(
            String::from_utf8_lossy(&o.stderr).contains("cannot be given with it"),
            "{extra:?}: {}",
            show(&o)
        );
    }
    assert_eq!(launches(&dir), 8);

    // Bad shard arguments are configuration errors; --shard without --plan too.
    for args in [&["--shard", "1/1"][..], &["--shard-from-env"][..]] {
        let o = Command::new(bin())
            .args(["run", "--plan"])
            .arg(&plan_file)
            .args(args)
            .env_remove("JOB_COMPLETION_INDEX")
            .output()
            .unwrap();
        assert_eq!(
            o.status.code(),
            Some(exit_codes::USAGE),
            "{args:?}: {}",
            show(&o)
        );
    }
    for args in [&["--shard", "0/3"][..], &["--shard-from-env"][..]] {
        let o = Command::new(bin())
            .arg("run")
            .arg(&task)
            .args(args)
            .arg("--out")
            .arg(dir.join("no-plan"))
            .env("JOB_COMPLETION_INDEX", "0")
            .env("CODER_EVAL_SHARD_COUNT", "3")
            .output()
            .unwrap();
        assert_eq!(
            o.status.code(),
            Some(exit_codes::USAGE),
            "{args:?}: {}",
            show(&o)
        );
        assert!(
            String::from_utf8_lossy(&o.stderr).contains("give --plan"),
            "{args:?}: {}",
            show(&o)
        );
        assert!(!dir.join("no-plan").exists());
    }
    // plan --help does not offer what plan refuses.
    let o = Command::new(bin())
        .args(["plan", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&o.stdout);
    let options: Vec<&str> = help
        .lines()
        .map(str::trim_start)
        .filter(|l| l.starts_with("--"))
        .collect();
    for flag in [
        "--resume ",
        "--plan ",
        "--shard ",
        "--shard-from-env",
        "--shard-count ",
    ] {
        assert!(
            !options.iter().any(|l| l.starts_with(flag)),
            "{flag}: {help}"
        );
    }
    assert!(help.contains("--infra-retries"), "{help}");
}

#[test]
fn two_shard_processes_into_one_folder_are_refused_not_interleaved() {
    let dir = scratch("shards-lock");
    let (exp, task) = experiment(&dir);
    let cli = crashing_cli(&dir, 4);
    // The plan and the shard folder inside the task's folder: coder-eval's own outputs
    // are not the task's files, so they change no unit (the shards below would refuse
    // a changed plan otherwise).
    let plan_file = dir.join("task/plan.json");
    let os = std::ffi::OsStr::new;
    plan_with(
        &exp,
        &task,
        &[os("--cli"), cli.as_os_str(), os("--infra-retries"), os("0")],
        &plan_file,
    );
    let out = dir.join("task/shard");
    let first = Command::new(bin())
        .args(["run", "--plan"])
        .arg(&plan_file)
        .args(["--shard", "0/1", "--out"])
        .arg(&out)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The first one's CLI is running (it sleeps 4 s per launch).
    wait_for_first_launch(&dir, "the first shard");
    let o = shard(&plan_file, &[], &out);
    assert_eq!(o.status.code(), Some(exit_codes::USAGE), "{}", show(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("another coder-eval process is running a shard into this folder")
            && err.contains(&format!("pid {}", first.id())),
        "{}",
        show(&o)
    );
    // Merging a shard that is still running: refused, naming it; with --force, a warning.
    let o = merge(&[&out], &plan_file, &dir.join("merged-early"));
    assert_eq!(o.status.code(), Some(exit_codes::USAGE), "{}", show(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("a shard is still running into this folder")
            && err.contains(&format!("pid {}", first.id()))
            && err.contains(&out.display().to_string()),
        "{}",
        show(&o)
    );
    assert!(!dir.join("merged-early").exists());
    let o = Command::new(bin())
        .arg("merge")
        .arg(&out)
        .arg("--plan")
        .arg(&plan_file)
        .arg("--out")
        .arg(dir.join("merged-early"))
        .arg("--force")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(exit_codes::FAILED), "{}", show(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("warning: ")
            && String::from_utf8_lossy(&o.stderr).contains("merging what it has finished"),
        "{}",
        show(&o)
    );
    let first = first.wait_with_output().unwrap();
    assert_eq!(
        first.status.code(),
        Some(exit_codes::INFRA),
        "{}",
        show(&first)
    );
    // Each unit launched once: by the first process alone.
    assert_eq!(launches(&dir), 2);

    // A plain run's folder is not a shard's: refused, left as it was.
    let plain = dir.join("plain");
    let o = Command::new(bin())
        .arg("run")
        .arg(&task)
        .args(["--scripted-model"])
        .arg(dir.join("exp/scripts/bad.yaml"))
        .args(["--infra-retries", "0", "--cli"])
        .arg(dir.join("not-there"))
        .arg("--out")
        .arg(&plain)
        .output()
        .unwrap();
    assert!(plain.join("run.json").exists(), "{}", show(&o));
    let o = shard(&plan_file, &[], &plain);
    assert_eq!(o.status.code(), Some(exit_codes::USAGE), "{}", show(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("holds a run that is not a shard"),
        "{}",
        show(&o)
    );
    assert!(!plain.join("shard.json").exists());
}

#[test]
fn a_plan_made_in_one_checkout_runs_in_a_checkout_at_another_path() {
    // The repository as checked out here: an experiment whose variant sets a script (a
    // path relative to the experiment file) and a task, planned from the checkout's root
    // with relative arguments.
    let dir = scratch("shards-moved");
    let here = dir.join("checkout");
    let (_exp, _task) = experiment(&here);
    std::fs::write(
        here.join("exp/experiment.yaml"),
        "experiment_id: moved\nvariants:\n  - variant_id: good\n    agent: {scripted_model: scripts/good.yaml}\n",
    )
    .unwrap();
    std::fs::write(here.join("task/prompt.md"), "Write ok.txt.\n").unwrap();
    let o = Command::new(bin())
        .current_dir(&here)
        .args([
            "plan",
            "--experiment",
            "exp/experiment.yaml",
            "task/task.yaml",
            "-D",
            "initial_prompt_file=task/prompt.md",
            "--out",
            "plan.json",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", show(&o));
    let p = Plan::read(&here.join("plan.json")).unwrap();
    assert_eq!(p.units.len(), 1);
    let text = std::fs::read_to_string(here.join("plan.json")).unwrap();
    assert!(
        !text.contains(&here.display().to_string()),
        "the plan names the checkout's path: {text}"
    );
    // A pod mounts the repository at another path: the checkout moves, nothing is left
    // where it was.
    let there = dir.join("mnt/repo");
    std::fs::create_dir_all(there.parent().unwrap()).unwrap();
    std::fs::rename(&here, &there).unwrap();
    let o = isolate(Command::new(bin()).current_dir(&there).args([
        "run",
        "--plan",
        "plan.json",
        "--shard",
        "0/1",
        "--out",
        "shard",
    ]))
    .output()
    .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", show(&o));
    let record = ShardRecord::read(&there.join("shard")).unwrap();
    assert_eq!(
        record.units,
        p.units.iter().map(|u| u.id.clone()).collect::<Vec<_>>()
    );
    let t: TaskResult = serde_json::from_str(
        &std::fs::read_to_string(there.join("shard/good/write_ok/claude-code/task.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(t.status, coder_eval::results::TaskStatus::Success);
    // The lineage says what the layers wrote, not where the checkout was.
    let lineage = serde_json::to_value(&t.lineage).unwrap();
    assert_eq!(
        lineage["agent.scripted_model"]["value"], "scripts/good.yaml",
        "{lineage}"
    );
    assert_eq!(
        lineage["initial_prompt_file"]["value"], "task/prompt.md",
        "{lineage}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_second_run_or_resume_into_a_run_folder_being_run_into_is_refused() {
    let dir = scratch("runs-lock");
    let (_exp, task) = experiment(&dir);
    let cli = crashing_cli(&dir, 4);
    let out = dir.join("run");
    let plain = |extra: &[&std::ffi::OsStr]| {
        let mut cmd = Command::new(bin());
        cmd.arg("run")
            .arg(&task)
            .arg("--scripted-model")
            .arg(dir.join("exp/scripts/bad.yaml"))
            .args(["--infra-retries", "0", "--cli"])
            .arg(&cli)
            .args(extra);
        cmd
    };
    let first = plain(&["--out".as_ref(), out.as_os_str()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_first_launch(&dir, "the first run");
    let busy = |o: &Output| {
        assert_eq!(o.status.code(), Some(exit_codes::USAGE), "{}", show(o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains("another coder-eval process is running a run into this folder")
                && err.contains(&format!("pid {}", first.id()))
                && err.contains(&out.display().to_string()),
            "{}",
            show(o)
        );
    };
    // A second run into the folder, and a resume of it, while the first runs.
    busy(
        &plain(&["--out".as_ref(), out.as_os_str()])
            .output()
            .unwrap(),
    );
    busy(
        &Command::new(bin())
            .arg("run")
            .arg("--resume")
            .arg(&out)
            .output()
            .unwrap(),
    );
    let first = first.wait_with_output().unwrap();
    assert_eq!(
        first.status.code(),
        Some(exit_codes::FAILED),
        "{}",
        show(&first)
    );
    // Launched once: by the first process alone.
    assert_eq!(launches(&dir), 1);
    // Once it has ended, the folder is free: resuming it runs the crashed unit again.
    let o = Command::new(bin())
        .arg("run")
        .arg("--resume")
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(exit_codes::FAILED), "{}", show(&o));
    assert_eq!(launches(&dir), 2);
    assert!(
        !String::from_utf8_lossy(&o.stderr).contains("already holds a run"),
        "{}",
        show(&o)
    );
    // A new run into the finished folder: its lists will hold this run's tasks only.
    let o = plain(&["--out".as_ref(), out.as_os_str()])
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("already holds a run"),
        "{}",
        show(&o)
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_prompt_file_outside_the_task_folder_is_part_of_the_unit_id() {
    let dir = scratch("shards-prompt-outside");
    let (_exp, _task) = experiment(&dir);
    std::fs::create_dir_all(dir.join("shared")).unwrap();
    std::fs::write(dir.join("shared/prompt.md"), "Write ok.txt.\n").unwrap();
    let task = dir.join("task/task.yaml");
    std::fs::write(
        &task,
        "task_id: shared_prompt\ninitial_prompt_file: ../shared/prompt.md\nagent:\n  type: claude-code\n  scripted_model: ../exp/scripts/good.yaml\nrun_limits:\n  max_turns: 4\n  turn_timeout: 120\nsuccess_criteria:\n  - type: file_exists\n    path: ok.txt\n",
    )
    .unwrap();
    let plan = |out: &Path| {
        let o = Command::new(bin())
            .arg("plan")
            .arg(&task)
            .arg("--out")
            .arg(out)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", show(&o));
        Plan::read(out).unwrap()
    };
    let before = plan(&dir.join("before.json"));
    assert_eq!(plan(&dir.join("same.json")).plan_id, before.plan_id);
    // The prompt the agent gets changes, the task folder does not.
    std::fs::write(dir.join("shared/prompt.md"), "Write ok.txt, then stop.\n").unwrap();
    let after = plan(&dir.join("after.json"));
    assert_ne!(after.units[0].id, before.units[0].id);
    assert_eq!(
        before.units[0].inputs.differences(&after.units[0].inputs),
        vec!["the files the task reads outside its folder"]
    );
    // A shard of the plan made before refuses to run what changed since.
    let o = shard(&dir.join("before.json"), &[], &dir.join("stale"));
    assert_eq!(o.status.code(), Some(exit_codes::USAGE), "{}", show(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr)
            .contains("the files the task reads outside its folder changed since"),
        "{}",
        show(&o)
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// A plan of an agentless task that passes (run once) and a `skip: true` one (2 replicates):
/// runs without any CLI.
fn agentless_plan(dir: &Path) -> PathBuf {
    std::fs::create_dir_all(dir.join("tasks/pass/tpl")).unwrap();
    std::fs::create_dir_all(dir.join("tasks/skip")).unwrap();
    std::fs::write(dir.join("tasks/pass/tpl/ok.txt"), "ok\n").unwrap();
    std::fs::write(
        dir.join("tasks/pass/task.yaml"),
        "task_id: pass_ok\nagent: {type: none}\nsandbox: {template_dir: tpl}\nsuccess_criteria:\n  - type: file_exists\n    path: ok.txt\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("tasks/skip/task.yaml"),
        "task_id: skip_me\nskip: true\ninitial_prompt: Write ok.txt.\nagent: {type: claude-code}\nsuccess_criteria:\n  - type: file_exists\n    path: ok.txt\n",
    )
    .unwrap();
    let plan_file = dir.join("plan.json");
    let o = Command::new(bin())
        .current_dir(dir)
        .args([
            "plan",
            "tasks/pass/task.yaml",
            "tasks/skip/task.yaml",
            "--repeats",
            "2",
            "--out",
            "plan.json",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", show(&o));
    plan_file
}

/// `run --plan plan.json --shard 0/1 --out OUT` in `dir` (where a plan such as
/// [`agentless_plan`]'s was made), waited for.
fn run_plan_in(dir: &Path, out: &str) -> Output {
    Command::new(bin())
        .current_dir(dir)
        .args(["run", "--plan", "plan.json", "--shard", "0/1", "--out", out])
        .output()
        .unwrap()
}

#[test]
fn merge_locks_its_folder_counts_skipped_units_and_writes_statistics_when_all_are_missing() {
    let dir = scratch("merge-lock");
    let plan_file = agentless_plan(&dir);
    let p = Plan::read(&plan_file).unwrap();
    assert_eq!(
        p.units.len(),
        3,
        "pass_ok once (agentless), 2 replicates of skip_me"
    );
    let s0 = dir.join("s0");
    let o = run_plan_in(&dir, "s0");
    assert_eq!(o.status.code(), Some(0), "{}", show(&o));
    // Where the plan was made: merge resolves its arguments again.
    let merge = |dirs: &[&Path], plan_file: &Path, out: &Path| {
        Command::new(bin())
            .current_dir(&dir)
            .arg("merge")
            .args(dirs)
            .arg("--plan")
            .arg(plan_file)
            .arg("--out")
            .arg(out)
            .output()
            .unwrap()
    };

    // A merge running into the folder: a second is refused (exit 2), naming it.
    let out = dir.join("merged");
    let held = coder_eval::suite::lock::lock_merge_folder(&out).unwrap();
    let o = merge(&[&s0], &plan_file, &out);
    assert_eq!(o.status.code(), Some(exit_codes::USAGE), "{}", show(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("running a merge into this folder"), "{err}");
    assert!(!out.join("run.json").exists());
    drop(held);

    // The summary line counts the skipped units as skipped, not passed.
    let o = merge(&[&s0], &plan_file, &out);
    assert_eq!(o.status.code(), Some(exit_codes::OK), "{}", show(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("1 passed, 0 failed, 2 skipped, 0 missing"),
        "{err}"
    );

    // No unit has a result: the statistics are there, every replicate missing.
    let empty = dir.join("empty-shard");
    std::fs::create_dir_all(&empty).unwrap();
    ShardRecord {
        plan_id: p.plan_id.clone(),
        shard: coder_eval::suite::shard::Shard { index: 0, count: 1 },
        units: Vec::new(),
    }
    .write(&empty)
    .unwrap();
    let none = dir.join("merged-none");
    let o = merge(&[&empty], &plan_file, &none);
    assert_eq!(o.status.code(), Some(exit_codes::FAILED), "{}", show(&o));
    let s = summary(&none);
    assert!(s.rows.is_empty());
    let stats = serde_json::to_value(&s.statistics).unwrap();
    assert!(!s.statistics.is_empty(), "{stats}");
    assert!(stats.to_string().contains("\"missing\":2"), "{stats}");

    // A shard run into the merged folder is told it is one.
    let o = run_plan_in(&dir, "merged-none");
    assert_eq!(o.status.code(), Some(exit_codes::USAGE), "{}", show(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("merged-none is a merged folder of plan"),
        "{err}"
    );
}

#[test]
fn merge_refuses_a_shard_json_listing_a_unit_of_another_shard() {
    use coder_eval::suite::shard::Shard;
    let dir = scratch("merge-forged-unit");
    let plan_file = agentless_plan(&dir);
    let p = Plan::read(&plan_file).unwrap();
    // A folder claiming to be the shard (of 2) that the first unit is not in, listing
    // every unit of the plan: one at least is another shard's.
    let index = 1 - Shard::of(&p.units[0].id, 2);
    let forged = dir.join("forged");
    std::fs::create_dir_all(&forged).unwrap();
    ShardRecord {
        plan_id: p.plan_id.clone(),
        shard: Shard { index, count: 2 },
        units: p.units.iter().map(|u| u.id.clone()).collect(),
    }
    .write(&forged)
    .unwrap();
    // Where the plan was made: merge resolves its arguments again.
    let o = Command::new(bin())
        .current_dir(&dir)
        .args(["merge", "forged", "--plan", "plan.json", "--out", "merged"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(exit_codes::USAGE), "{}", show(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(&format!(
            "forged/shard.json: lists unit {} (id {}), which is not shard {index}/2's",
            p.units[0].unit.label(),
            p.units[0].id
        )),
        "{err}"
    );
    assert!(!dir.join("merged/run.json").exists(), "{err}");
}

#[test]
fn a_plan_made_with_absolute_paths_runs_after_its_tree_moved() {
    let dir = scratch("plan-abs");
    let orig = dir.join("orig");
    std::fs::create_dir_all(&orig).unwrap();
    agentless_plan(&orig);
    let o = Command::new(bin())
        .current_dir(&orig)
        .arg("plan")
        .arg(orig.join("tasks/pass/task.yaml"))
        .args(["--out", "plan.json"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", show(&o));
    let text = std::fs::read_to_string(orig.join("plan.json")).unwrap();
    assert!(!text.contains(&orig.display().to_string()), "{text}");
    assert!(
        !String::from_utf8_lossy(&o.stderr).contains("absolute path"),
        "{}",
        show(&o)
    );
    // Made from a folder that does not hold the task: the absolute path is kept, and said.
    let sub = orig.join("elsewhere");
    std::fs::create_dir_all(&sub).unwrap();
    let o = Command::new(bin())
        .current_dir(&sub)
        .arg("plan")
        .arg(orig.join("tasks/pass/task.yaml"))
        .args(["--out", "plan.json"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", show(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("warning: the plan keeps 1 absolute path(s)")
            && err.contains(&orig.join("tasks/pass/task.yaml").display().to_string())
            && err.contains("To store them relative"),
        "{err}"
    );
    std::fs::remove_dir_all(&sub).unwrap();
    let moved = dir.join("moved");
    std::fs::rename(&orig, &moved).unwrap();
    let o = run_plan_in(&moved, "s0");
    assert_eq!(o.status.code(), Some(0), "{}", show(&o));
}

#[test]
fn raising_repeats_in_an_experiment_keeps_the_ids_of_the_replicates_it_had() {
    let dir = scratch("repeats-ids");
    let (exp, task) = experiment(&dir);
    let text = std::fs::read_to_string(&exp).unwrap();
    let ids = |repeats: u32| -> std::collections::BTreeMap<String, String> {
        let file = dir.join(format!("exp/exp{repeats}.yaml"));
        std::fs::write(
            &file,
            text.replace(
                "experiment_id: good-vs-bad\n",
                &format!("experiment_id: good-vs-bad\ndefaults:\n  repeats: {repeats}\n"),
            ),
        )
        .unwrap();
        let plan_file = dir.join(format!("plan{repeats}.json"));
        let o = Command::new(bin())
            .args(["plan", "--experiment"])
            .arg(&file)
            .arg(&task)
            .arg("--out")
            .arg(&plan_file)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", show(&o));
        Plan::read(&plan_file)
            .unwrap()
            .units
            .into_iter()
            .map(|u| (u.result_dir, u.id))
            .collect()
    };
    let (two, three) = (ids(2), ids(3));
    assert_eq!((two.len(), three.len()), (4, 6));
    for (dir, id) in &two {
        assert_eq!(three.get(dir), Some(id), "{dir}");
    }
}

#[test]
fn plan_names_a_missing_out_folder_and_refuses_more_shards_than_kubernetes_runs() {
    let dir = scratch("plan-nits");
    agentless_plan(&dir);
    let plan = |extra: &[&str]| {
        Command::new(bin())
            .current_dir(&dir)
            .args(["plan", "tasks/pass/task.yaml", "tasks/skip/task.yaml"])
            .args(extra)
            .output()
            .unwrap()
    };
    let o = plan(&["--out", "missing/plan.json"]);
    assert_eq!(o.status.code(), Some(exit_codes::USAGE), "{}", show(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("the folder missing does not exist") && !err.contains(".tmp"),
        "{err}"
    );
    let k8s = ["--out", "p.json", "--emit", "k8s-job", "--image", "img"];
    let o = plan(&[&k8s[..], &["--shards", "100001"]].concat());
    assert_eq!(o.status.code(), Some(exit_codes::USAGE), "{}", show(&o));
    assert!(!dir.join("p.json").exists());
    let o = plan(&[&k8s[..], &["--shards", "5"]].concat());
    assert_eq!(o.status.code(), Some(exit_codes::OK), "{}", show(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("--shards 5 is more than the plan's 2 unit(s)"),
        "{err}"
    );
}

/// Issue 15 trial S1 and N4: a merge into an earlier merge's folder keeps the units it
/// held (the trial's late shard made the 12 merged units "missing" and deleted them); a
/// unit a folder given also holds replaces the earlier copy, counted in a note; a refused
/// merge leaves no `--out` behind.
#[test]
fn merging_into_an_earlier_merge_keeps_its_units_and_a_refused_merge_creates_nothing() {
    let dir = scratch("merge-earlier");
    let plan_file = agentless_plan(&dir);
    let p = Plan::read(&plan_file).unwrap();
    let o = run_plan_in(&dir, "s0");
    assert_eq!(o.status.code(), Some(0), "{}", show(&o));
    let merge = |dirs: &[&str], out: &str| {
        Command::new(bin())
            .current_dir(&dir)
            .arg("merge")
            .args(dirs)
            .args(["--plan", "plan.json", "--out", out])
            .output()
            .unwrap()
    };
    let o = merge(&["s0"], "merged");
    assert_eq!(o.status.code(), Some(exit_codes::OK), "{}", show(&o));
    let before = rows(&summary(&dir.join("merged")));
    assert_eq!(before.len(), p.units.len());
    // A late shard folder holding none of the units (its pod finished nothing).
    let late = dir.join("late");
    std::fs::create_dir_all(&late).unwrap();
    ShardRecord {
        plan_id: p.plan_id.clone(),
        shard: coder_eval::suite::shard::Shard { index: 0, count: 1 },
        units: Vec::new(),
    }
    .write(&late)
    .unwrap();
    let o = merge(&["late"], "merged");
    assert_eq!(o.status.code(), Some(exit_codes::OK), "{}", show(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(&format!(
            "merged is an earlier merge of this plan: {} of its unit(s) kept, 0 replaced",
            p.units.len()
        )) && err.contains("0 missing"),
        "{}",
        show(&o)
    );
    let s = summary(&dir.join("merged"));
    assert_eq!(rows(&s), before);
    assert_eq!(s.unfinished, 0);
    for u in &p.units {
        assert!(
            dir.join("merged")
                .join(u.unit.rel_dir())
                .join("task.json")
                .is_file(),
            "{}",
            u.unit.label()
        );
    }
    assert_eq!(
        ShardRecord::read(&dir.join("merged")).unwrap().units.len(),
        p.units.len()
    );
    // The shard merged again: its results replace the earlier copies, said so.
    let o = merge(&["s0"], "merged");
    assert_eq!(o.status.code(), Some(exit_codes::OK), "{}", show(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(&format!(
            "0 of its unit(s) kept, {} replaced",
            p.units.len()
        )),
        "{}",
        show(&o)
    );
    assert_eq!(rows(&summary(&dir.join("merged"))), before);

    // Refused merges (a folder that is no shard's, a shard of another plan): the new
    // --out, nested or not, is not left behind.
    std::fs::create_dir_all(dir.join("plain")).unwrap();
    let mut other = ShardRecord::read(&late).unwrap();
    other.plan_id = "0".repeat(64);
    std::fs::create_dir_all(dir.join("foreign")).unwrap();
    other.write(&dir.join("foreign")).unwrap();
    for (input, says) in [
        ("plain", "not a shard folder"),
        ("foreign", "is a shard of another plan"),
    ] {
        for out in ["refused", "new/nested/refused"] {
            let o = merge(&[input], out);
            assert_eq!(o.status.code(), Some(exit_codes::USAGE), "{}", show(&o));
            assert!(
                String::from_utf8_lossy(&o.stderr).contains(says),
                "{}",
                show(&o)
            );
            let top = out.split('/').next().unwrap();
            assert!(!dir.join(top).exists(), "{input} -> {out}: {}", show(&o));
        }
    }
}

/// Issue 15 trial M2: `plan --out` replaces a plan file, but not a task file or a run's
/// run.json (the trial's plan overwrote its own task file), naming the path.
#[test]
fn plan_out_refuses_to_overwrite_a_file_that_is_not_a_plan() {
    let dir = scratch("plan-out-clobber");
    agentless_plan(&dir);
    let plan = |out: &str| {
        Command::new(bin())
            .current_dir(&dir)
            .args(["plan", "tasks/pass/task.yaml", "--out", out])
            .output()
            .unwrap()
    };
    std::fs::create_dir_all(dir.join("run")).unwrap();
    std::fs::write(dir.join("run/run.json"), "{\"rows\": []}\n").unwrap();
    for out in ["tasks/pass/task.yaml", "run/run.json", "run"] {
        let before = std::fs::read(dir.join(out)).ok();
        let o = plan(out);
        assert_eq!(
            o.status.code(),
            Some(exit_codes::USAGE),
            "{out}: {}",
            show(&o)
        );
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains(&format!("--out {out}: exists and is not")),
            "{err}"
        );
        assert_eq!(std::fs::read(dir.join(out)).ok(), before, "{out}");
    }
    // A plan file (this plan's, here plan.json of agentless_plan's two tasks) is replaced.
    let o = plan("plan.json");
    assert_eq!(o.status.code(), Some(exit_codes::OK), "{}", show(&o));
    assert_eq!(Plan::read(&dir.join("plan.json")).unwrap().units.len(), 1);
}

/// Issue 15 trial S3: a file a task folder reaches through a symbolic link is part of the
/// unit id (the trial's `check.sh -> ../shared/check.sh`, edited, kept the plan id and
/// let `--resume` keep a stale result); so is a folder reached so. A dangling link or a
/// link loop is an error naming the link.
#[test]
fn the_targets_of_symbolic_links_in_a_task_folder_are_part_of_the_unit_id() {
    let dir = scratch("plan-symlinks");
    std::fs::create_dir_all(dir.join("t")).unwrap();
    std::fs::create_dir_all(dir.join("shared/data")).unwrap();
    std::fs::write(dir.join("shared/check.sh"), "exit 0\n").unwrap();
    std::fs::write(dir.join("shared/data/rows.txt"), "1\n").unwrap();
    std::fs::write(
        dir.join("t/task.yaml"),
        "task_id: linked\nagent: {type: none}\nsuccess_criteria:\n  - type: run_command\n    command: sh check.sh\n",
    )
    .unwrap();
    std::os::unix::fs::symlink("../shared/check.sh", dir.join("t/check.sh")).unwrap();
    std::os::unix::fs::symlink("../shared/data", dir.join("t/data")).unwrap();
    let plan = |name: &str| {
        Command::new(bin())
            .current_dir(&dir)
            .args(["plan", "t/task.yaml", "--out", name])
            .output()
            .unwrap()
    };
    let id = |name: &str| {
        let o = plan(name);
        assert_eq!(o.status.code(), Some(0), "{}", show(&o));
        Plan::read(&dir.join(name)).unwrap().units[0].id.clone()
    };
    let first = id("a.json");
    assert_eq!(id("same.json"), first);
    std::fs::write(dir.join("shared/check.sh"), "exit 1\n").unwrap();
    let second = id("b.json");
    assert_ne!(second, first, "the linked file's content changed");
    std::fs::write(dir.join("shared/data/rows.txt"), "2\n").unwrap();
    assert_ne!(id("c.json"), second, "a file in the linked folder changed");

    // A dangling link, then a loop: refused, naming the link.
    std::fs::remove_file(dir.join("shared/check.sh")).unwrap();
    let o = plan("d.json");
    assert_ne!(o.status.code(), Some(0), "{}", show(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("t/check.sh: a symbolic link to ../shared/check.sh that does not resolve"),
        "{err}"
    );
    std::fs::write(dir.join("shared/check.sh"), "exit 0\n").unwrap();
    std::os::unix::fs::symlink(".", dir.join("shared/data/again")).unwrap();
    let o = plan("e.json");
    assert_ne!(o.status.code(), Some(0), "{}", show(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("t/data/again: a symbolic link loop"), "{err}");
    assert!(!dir.join("d.json").exists() && !dir.join("e.json").exists());
}

/// `--gateway`, `--upstream`, `--gateway-bodies` and `--price-table`'s prices are part of a unit's id (issue 12,
/// M9): gateway and direct results count turns and usage differently, so their plans
/// differ and a gateway shard is never merged under a direct plan silently; the same
/// flags give the same id.
#[test]
fn the_gateway_flags_are_part_of_the_plan_id() {
    let dir = scratch("plan-gateway-ids");
    let task = crate::support::root().join("tasks/scenarios/parallel/task.yaml");
    let plan_id = |name: &str, extra: &[&str]| -> String {
        let file = dir.join(format!("{name}.json"));
        let o = Command::new(bin())
            .arg("plan")
            .arg(&task)
            .args(["--harness", "codex"])
            .args(extra)
            .arg("--out")
            .arg(&file)
            .output()
            .unwrap();
        assert!(o.status.success(), "{name}: {}", show(&o));
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        v["plan_id"].as_str().unwrap().to_string()
    };
    let direct = plan_id("direct", &[]);
    let gateway = plan_id("gateway", &["--gateway"]);
    let upstream = plan_id(
        "upstream",
        &["--gateway", "--upstream", "https://api.openai.com"],
    );
    let bodies = plan_id("bodies", &["--gateway", "--gateway-bodies"]);
    // A price table's prices are part of the id; the same prices in another file are not.
    let table = |name: &str, output: u32| {
        let path = dir.join(name);
        std::fs::write(&path, format!("m: {{input: 1, output: {output}}}\n")).unwrap();
        path.display().to_string()
    };
    let (a, b, c) = (table("a.yaml", 2), table("b.yaml", 2), table("c.yaml", 3));
    let priced = plan_id("priced", &["--gateway", "--price-table", &a]);
    assert_eq!(
        plan_id("priced-same", &["--gateway", "--price-table", &b]),
        priced
    );
    let dearer = plan_id("dearer", &["--gateway", "--price-table", &c]);
    let ids = [&direct, &gateway, &upstream, &bodies, &priced, &dearer];
    for (i, a) in ids.iter().enumerate() {
        for b in &ids[i + 1..] {
            assert_ne!(a, b, "{ids:?}");
        }
    }
    assert_eq!(plan_id("gateway-again", &["--gateway"]), gateway);
}
