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
        crate::suite::lock::mark(&dir.join(out)).unwrap();
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
                replicates: Some(2),
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

/// Issue 15 trial: 10 tasks × 10000 replicates made a 335 MB plan, every replicate's
/// inputs written whole. What is the same for every replicate is written once.
#[test]
fn a_plan_writes_what_replicates_share_once_and_reads_its_older_version() {
    let unit = |task: &str, r: Option<u32>| {
        let mut inputs = inputs(r);
        inputs.resolved["task_id"] = serde_json::json!(task);
        inputs.resolved["lineage"] = serde_json::json!({"marker": "shared-by-every-replicate"});
        let unit = UnitId {
            variant: Some("v".into()),
            task_id: task.into(),
            harness: "claude-code".into(),
            replicate: r,
            replicates: r.map(|_| 50),
        };
        PlanUnit {
            id: inputs.id(),
            kind: UnitKind::Agent,
            result_dir: unit.rel_dir().display().to_string(),
            unit,
            task_file: format!("{task}/task.yaml").into(),
            inputs,
        }
    };
    let mut units: Vec<PlanUnit> = (0..50).map(|r| unit("a", Some(r))).collect();
    units.extend((0..50).map(|r| unit("b", Some(r))));
    units.push(unit("c", None));
    let plan = Plan::new(vec!["a/task.yaml".into()], units);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("plan.json");
    plan.write(&path).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    // One group per task: the shared inputs three times, not 101.
    assert_eq!(text.matches("shared-by-every-replicate").count(), 3);
    assert_eq!(Plan::read(&path).unwrap(), plan);
    // A version-1 plan (every unit whole) still reads, to the same units and ids.
    let v1 = serde_json::json!({
        "plan_version": 1,
        "plan_id": plan.plan_id,
        "coder_eval_version": plan.coder_eval_version,
        "args": plan.args,
        "units": plan.units,
    });
    std::fs::write(&path, serde_json::to_string(&v1).unwrap()).unwrap();
    let old = Plan::read(&path).unwrap();
    assert_eq!((old.plan_version, &old.units), (1, &plan.units));
    // A version this build does not know is refused, saying which it reads.
    std::fs::write(
        &path,
        text.replacen("\"plan_version\": 2", "\"plan_version\": 3", 1),
    )
    .unwrap();
    let err = Plan::read(&path).unwrap_err().to_string();
    assert!(
        err.contains("plan_version 3") && err.contains("(1 or 2)"),
        "{err}"
    );
    // A group whose ids and replicates do not pair up is refused, naming it.
    let mut edited: serde_json::Value = serde_json::from_str(&text).unwrap();
    edited["groups"][1]["ids"].as_array_mut().unwrap().pop();
    std::fs::write(&path, edited.to_string()).unwrap();
    let err = Plan::read(&path).unwrap_err().to_string();
    assert!(
        err.contains("groups[1]: 50 replicate(s) but 49 id(s)"),
        "{err}"
    );
}

/// Issue 15 trial (M1): a plan's replicates had their inputs serialized whole for each
/// id. A group's template gives every replicate the id its whole inputs give.
#[test]
fn a_groups_id_template_gives_each_replicate_its_own_id() {
    let group = inputs(None);
    let template = group.id_template().expect("a template");
    for r in [0, 1, 9, 10, 99, 100, 1234, 9999, u32::MAX] {
        assert_eq!(template.id(r), inputs(Some(r)).id(), "replicate {r}");
    }
}

#[test]
fn a_plan_lists_the_absolute_paths_it_keeps_once_each() {
    let unit = |task_file: &str, r: u32| {
        let inputs = inputs(Some(r));
        PlanUnit {
            id: inputs.id(),
            kind: UnitKind::Agent,
            unit: UnitId {
                variant: None,
                task_id: "t".into(),
                harness: "claude-code".into(),
                replicate: Some(r),
                replicates: Some(2),
            },
            result_dir: format!("t/claude-code/r{r:02}"),
            task_file: task_file.into(),
            inputs,
        }
    };
    let plan = Plan::new(
        vec![
            "--experiment=/elsewhere/e.yaml".into(),
            "/repo/tasks/a/task.yaml".into(),
            "b/task.yaml".into(),
        ],
        vec![
            unit("/repo/tasks/a/task.yaml", 0),
            unit("/repo/tasks/a/task.yaml", 1),
            unit("b/task.yaml", 0),
        ],
    );
    assert_eq!(
        plan.absolute_paths(),
        vec!["/repo/tasks/a/task.yaml", "/elsewhere/e.yaml"]
    );
    let relative = Plan::new(vec!["b/task.yaml".into()], vec![unit("b/task.yaml", 0)]);
    assert!(relative.absolute_paths().is_empty());
}
