//! coder_eval task files (`tasks/coder_eval/`): each loads with the meaning it has in
//! coder_eval, or is refused at load with one line naming the field; `coder-eval check`
//! says so with its exit code; and the tempdir tasks run against the scripted model on
//! two harnesses, graded by the real criteria.

use crate::support::{bin, root, scratch};
use coder_eval::results::TaskResult;
use coder_eval::task::{NoteAction, Reference, Task};
use std::path::{Path, PathBuf};
use std::process::Command;

fn dir(rel: &str) -> PathBuf {
    root().join("tasks/coder_eval").join(rel)
}

/// The YAML files of a fixture folder, sorted.
fn yaml_files(rel: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir(rel))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no fixtures in {rel}");
    files
}

/// The values of `# <tag>: value` header lines.
fn header(path: &Path, tag: &str) -> Vec<String> {
    let prefix = format!("# {tag}: ");
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter_map(|l| l.strip_prefix(&prefix).map(str::to_string))
        .collect()
}

fn action_name(a: NoteAction) -> &'static str {
    match a {
        NoteAction::Ignored => "ignored",
        NoteAction::Dropped => "dropped",
        NoteAction::Mapped => "mapped",
        NoteAction::NotEnforced => "not_enforced",
    }
}

#[test]
fn good_files_load_with_their_notes() {
    for file in yaml_files("load/ok") {
        let name = file.file_name().unwrap().to_string_lossy().to_string();
        let loaded = Task::load_file(&file).unwrap_or_else(|e| panic!("{name}: {e}"));
        if let [n] = header(&file, "expect-tasks").as_slice() {
            assert_eq!(loaded.tasks.len(), n.parse::<usize>().unwrap(), "{name}");
        }
        let notes: Vec<String> = loaded
            .notes
            .iter()
            .map(|n| format!("{} {}", n.key, action_name(n.action)))
            .collect();
        let expected = header(&file, "expect-note");
        for e in &expected {
            assert!(
                notes.contains(e),
                "{name}: note `{e}` missing from {notes:?}"
            );
        }
        assert_eq!(notes.len(), expected.len(), "{name}: {notes:?}");
        for note in &loaded.notes {
            assert!(note.line.is_some(), "{name}: {note:?} has no line");
        }
        for task in &loaded.tasks {
            assert_eq!(task.load_notes, loaded.notes, "{name}");
        }
    }
}

#[test]
fn bad_files_are_refused_with_one_clear_line() {
    for file in yaml_files("load/bad") {
        let name = file.file_name().unwrap().to_string_lossy().to_string();
        let expected = header(&file, "expect");
        assert!(!expected.is_empty(), "{name} has no `# expect:` line");
        let err = match Task::load_file(&file) {
            Ok(_) => panic!("{name} loaded"),
            Err(e) => e.to_string(),
        };
        assert!(!err.contains('\n'), "{name}: not one line: {err}");
        assert!(
            err.contains(&name),
            "{name}: the error does not name the file: {err}"
        );
        for e in &expected {
            assert!(err.contains(e.as_str()), "{name}: `{e}` not in: {err}");
        }
    }
}

#[test]
fn what_the_loader_made_of_them() {
    let t = Task::load(&dir("load/ok/legacy_keys.yaml")).unwrap();
    assert_eq!(t.run_limits.max_turns, Some(12));
    assert_eq!(t.run_limits.turn_timeout.map(|d| d.as_secs()), Some(300));
    assert_eq!(t.run_limits.task_timeout.map(|d| d.as_secs()), Some(900));
    let mapped = t
        .load_notes
        .iter()
        .find(|n| n.key == "agent.max_turns")
        .unwrap();
    assert_eq!(mapped.to.as_deref(), Some("run_limits.max_turns"));
    assert_eq!(mapped.line, Some(19));

    let t = Task::load(&dir("load/ok/every_key_tempdir.yaml")).unwrap();
    // sandbox.limits.timeout (120 s) is smaller than run_limits.task_timeout (600 s).
    assert_eq!(t.run_limits.task_timeout.map(|d| d.as_secs()), Some(120));
    assert_eq!(t.pre_run[0].timeout.as_secs(), 30);
    assert!(t.pre_run[0].fail_on_error);
    assert!(!t.pre_run[1].fail_on_error);
    assert_eq!(t.expected_commands, Some(6));
    assert_eq!(t.sandbox.network_enabled, Some(false));
    assert!(matches!(&t.reference, Some(Reference::Directory(d)) if d.is_absolute()));

    let rows = Task::load_file(&dir("load/ok/dataset_rows.yaml"))
        .unwrap()
        .tasks;
    let ids: Vec<&str> = rows.iter().map(|t| t.task_id.as_str()).collect();
    assert_eq!(ids, ["rows/alpha", "rows/beta", "rows/gamma_3"]);
    assert_eq!(rows[1].prompt, "Write 'beta' into out.txt (row beta, n=2).");
    let params = serde_json::to_string(&rows[2].success_criteria[0]).unwrap();
    assert!(
        params.contains("gamma") && !params.contains("${row"),
        "{params}"
    );
    assert_eq!(rows[2].row.as_ref().unwrap().suite_id, "rows");

    let a = Task::load_file(&dir("load/ok/dataset_paths.yaml"))
        .unwrap()
        .tasks;
    let b = Task::load_file(&dir("load/ok/dataset_paths.yaml"))
        .unwrap()
        .tasks;
    let ids = |ts: &[Task]| ts.iter().map(|t| t.task_id.clone()).collect::<Vec<_>>();
    assert_eq!(ids(&a), ids(&b), "a pinned seed draws the same rows");
    assert!(ids(&a).contains(&"jsonl/r3".to_string()));
    assert!(ids(&a).contains(&"jsonl/r4".to_string()));

    let single = Task::load_file(&dir("load/ok/dataset_path_singular.yaml"))
        .unwrap()
        .tasks;
    assert_eq!(single[0].prompt, "Answer one []");
    assert_eq!(single[1].prompt, "Answer two [n2]");

    let t = Task::load(&dir("load/ok/agent_fields.yaml")).unwrap();
    assert_eq!(
        t.agent.system_prompt.as_deref(),
        Some("You are a careful engineer.\n")
    );
    assert!(Path::new(&t.agent.plugins[0].path).is_absolute());
    assert_eq!(t.agent.skill_dirs().len(), 1);
    assert!(matches!(
        t.agent.claude_settings,
        Some(coder_eval::task::agent::ClaudeSettings::Object(_))
    ));
}

/// Runs the binary; returns (exit code, stdout, stderr).
fn run_bin(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(bin()).args(args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn check_validates_without_running() {
    let legacy = dir("load/ok/legacy_keys.yaml");
    let (code, stdout, stderr) = run_bin(&["check", legacy.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.starts_with("ok "), "{stdout}");
    assert!(
        stderr.contains(&format!(
            "warning: {}:12: `max_iterations` is dropped",
            legacy.display()
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains("mapped to `run_limits.max_turns`"),
        "{stderr}"
    );

    // One bad file among good ones: exit 2, the good ones still reported.
    let bad = dir("load/bad/dataset_row_without_id.yaml");
    let rows = dir("load/ok/dataset_rows.yaml");
    let (code, stdout, stderr) = run_bin(&["check", rows.to_str().unwrap(), bad.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(stdout.contains("(3 tasks)"), "{stdout}");
    assert!(stderr.contains("has no `id`"), "{stderr}");

    // An agent field the harness does not honour: refused, naming field and harness.
    let fields = dir("load/ok/agent_fields.yaml");
    let (code, _, stderr) = run_bin(&["check", fields.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains(
            "`agent.thinking_level`, `agent.variant`, `agent.pure` are not honoured by the \
             `claude-code` harness (its component speaks harness@0.2.0"
        ),
        "{stderr}"
    );
    let (code, _, stderr) = run_bin(&["check", fields.to_str().unwrap(), "--harness", "pi"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("`pi` harness"), "{stderr}");
    // What Claude Code's component declares it honours passes (its `describe()`).
    let claude = root().join("tasks/agent_fields/claude_code.yaml");
    let (code, stdout, stderr) = run_bin(&["check", claude.to_str().unwrap()]);
    assert_eq!(code, 0, "{stdout}{stderr}");
}

/// Claude Code prints nothing for a sub-agent's own sub-agents (trial14c `sub1`: their
/// commands are missing from `commands`): claude-code's row of the limits table declares
/// it, and no other harness's row does.
#[test]
fn parity_declares_claude_codes_unreported_nested_sub_agents() {
    let (code, stdout, stderr) = run_bin(&["harnesses", "--parity"]);
    assert_eq!(code, 0, "{stderr}");
    let rows: Vec<&str> = stdout
        .lines()
        .take_while(|l| !l.is_empty())
        .filter(|l| l.starts_with("| "))
        .collect();
    let claude = rows
        .iter()
        .find(|l| l.starts_with("| claude-code |"))
        .unwrap_or_else(|| panic!("{stdout}"));
    assert!(
        claude.contains("sub-agent's own sub-agents (nested) print nothing")
            && claude.contains("commands are missing from the record"),
        "{claude}"
    );
    let others: Vec<&&str> = rows
        .iter()
        .filter(|l| !l.starts_with("| claude-code |") && l.contains("(nested)"))
        .collect();
    assert!(others.is_empty(), "{others:?}");
}

#[test]
fn parity_lists_the_agent_fields() {
    let (code, stdout, stderr) = run_bin(&["harnesses", "--parity"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("| harness | agent fields honoured | budget_mode: time (resume) |"),
        "{stdout}"
    );
    assert!(
        stdout.contains("model, allowed_tools, disallowed_tools, permission_mode, system_prompt"),
        "{stdout}"
    );
    // The decide_within rule: what counts as a call.
    assert!(
        stdout.contains("stop_early.decide_within: N counts the tool calls that finished and ran")
            && stdout.contains("does not use up the budget"),
        "{stdout}"
    );
    // The stop_early column says where a fail-stop cannot hold the forbidden command.
    for line in stdout
        .lines()
        .filter(|l| l.contains("on the event that decides"))
    {
        let harness = line.split('|').nth(1).unwrap_or("").trim();
        let cannot_hold = line.contains("a fail-stop cannot hold the forbidden command");
        assert_eq!(
            cannot_hold,
            ["codex", "opencode", "gemini-cli", "kilo"].contains(&harness),
            "{line}"
        );
        assert_eq!(
            line.contains("is not checked on this CLI yet"),
            ["qwen-code", "cline", "copilot", "letta"].contains(&harness),
            "{line}"
        );
        // Their events come only once the CLI exited.
        assert_eq!(
            line.contains("after the run only"),
            ["grok-cli", "continue"].contains(&harness),
            "{line}"
        );
    }
    // The limits row of the CLIs that report only once they exited says so.
    for harness in ["grok-cli", "continue"] {
        assert!(
            stdout
                .lines()
                .any(|l| l.starts_with(&format!("| {harness} |"))
                    && l.contains("every event comes once the CLI exited")),
            "{harness}: {stdout}"
        );
    }
    assert_eq!(
        stdout
            .lines()
            .filter(|l| l.contains("on the event that decides"))
            .count(),
        coder_eval::components::BUILTIN_HARNESSES.len(),
        "{stdout}"
    );
    // Letta Code's stream has no tool results: its limits row says so, and names the
    // files it writes into the workspace; no other row does.
    for line in stdout.lines().filter(|l| l.contains("host-enforced |")) {
        let harness = line.split('|').nth(1).unwrap_or("").trim();
        assert_eq!(
            line.contains("the stream has no tool results") && line.contains(".letta/"),
            harness == "letta",
            "{line}"
        );
    }
}

/// Runs `coder-eval run` on task files; returns the exit code and the results by
/// (task_id, harness).
fn run_tasks(out: &Path, args: &[&str]) -> (i32, Vec<TaskResult>, String) {
    let mut cmd = Command::new(bin());
    cmd.arg("run").args(args).arg("--out").arg(out);
    let output = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    let run: serde_json::Value = match std::fs::read(out.join("run.json")) {
        Ok(bytes) => serde_json::from_slice(&bytes).unwrap(),
        Err(_) => return (output.status.code().unwrap_or(-1), Vec::new(), stderr),
    };
    let results = run["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| {
            let file = out.join(row["result"].as_str().unwrap());
            serde_json::from_slice(&std::fs::read(&file).unwrap())
                .unwrap_or_else(|e| panic!("{}: {e}", file.display()))
        })
        .collect();
    (output.status.code().unwrap_or(-1), results, stderr)
}

#[test]
fn skip_and_tags_select_what_runs() {
    let out = scratch("compat-skip");
    let skipped = dir("load/ok/skipped.yaml");
    let every = dir("load/ok/every_key_tempdir.yaml");
    // No task has one of these tags: nothing is selected, nothing runs.
    let (code, results, stderr) = run_tasks(
        &out,
        &[
            skipped.to_str().unwrap(),
            "--tags",
            "nothing-has-this,other",
        ],
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("none of the 1 tasks is selected"),
        "{stderr}"
    );
    assert!(results.is_empty());
    // every_key has `golden`: excluded; the skipped task is recorded, nothing started.
    let (code, results, stderr) = run_tasks(
        &out,
        &[
            skipped.to_str().unwrap(),
            every.to_str().unwrap(),
            "--exclude-tags",
            "golden",
        ],
    );
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(results.len(), 1, "{stderr}");
    let r = &results[0];
    assert_eq!(
        (r.task_id.as_str(), r.harness.as_str()),
        ("parked", "codex")
    );
    assert_eq!(r.status.as_str(), "SKIPPED");
    assert!(r.turn.is_none() && r.cli.path.is_none());
    assert!(!out.join("parked/codex/workspace").exists());
    assert!(stderr.contains("1 skipped"), "{stderr}");
    let junit = std::fs::read_to_string(out.join("junit.xml")).unwrap();
    assert!(junit.contains("<skipped"), "{junit}");
}

#[test]
fn tempdir_tasks_run_on_two_harnesses() {
    let out = scratch("compat-run");
    let files: Vec<String> = ["workspace.yaml", "rows.yaml", "legacy.yaml", "offline.yaml"]
        .iter()
        .map(|f| dir("run").join(f).display().to_string())
        .collect();
    let mut args: Vec<&str> = files.iter().map(String::as_str).collect();
    args.extend(["--harness", "claude-code", "--harness", "codex"]);
    let (code, results, stderr) = run_tasks(&out, &args);
    // compat-rows/gamma fails on purpose.
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("the whole run goes into a network namespace"),
        "{stderr}"
    );
    let status = |id: &str, h: &str| {
        let r = results
            .iter()
            .find(|r| r.task_id == id && r.harness == h)
            .unwrap_or_else(|| panic!("no result for {id} on {h}: {stderr}"));
        let failed: Vec<String> = r
            .criteria
            .iter()
            .filter(|c| !c.passed)
            .map(|c| format!("{}: {}", c.description, c.details))
            .collect();
        (r.status.as_str(), failed, r)
    };
    for h in ["claude-code", "codex"] {
        for id in [
            "compat-workspace",
            "compat-rows/alpha",
            "compat-legacy",
            "compat-offline",
        ] {
            let (s, failed, r) = status(id, h);
            assert_eq!(s, "SUCCESS", "{id} on {h}: {failed:?} {:?}", r.error);
        }
        // The row's own string decides: the script wrote "alpha".
        let (s, failed, r) = status("compat-rows/gamma", h);
        assert_eq!(s, "FAILURE", "{h}");
        assert!(failed[0].contains("gamma"), "{failed:?}");
        assert_eq!(r.row.as_ref().unwrap().row_id, "gamma");
        assert!(
            out.join("compat-rows/gamma")
                .join(h)
                .join("task.json")
                .exists()
        );

        // The legacy placement had its meaning: one model call, then the cap.
        let (_, _, r) = status("compat-legacy", h);
        assert_eq!(r.run_limits.max_turns, Some(1));
        assert!(r.turn.as_ref().unwrap().max_turns_exhausted, "{h}");
        let keys: Vec<&str> = r.load_notes.iter().map(|n| n.key.as_str()).collect();
        assert_eq!(keys, ["llm_reviewer", "agent.max_turns", "turn_timeout"]);
        let file =
            std::fs::read_to_string(out.join("compat-legacy").join(h).join("task.json")).unwrap();
        assert!(file.contains("\"action\": \"mapped\""), "{file}");

        // Reference: not found by the agent during the turn, staged beside the
        // workspace after it.
        let (_, _, r) = status("compat-workspace", h);
        assert_eq!(r.paths.reference.as_deref(), Some("reference"));
        let task_dir = out.join("compat-workspace").join(h);
        assert!(task_dir.join("reference/solution.py").is_file());
        assert!(!task_dir.join("workspace/reference").exists());
        // post_run ran, and its failing exit did not fail the task; every step is kept.
        assert!(task_dir.join("workspace/post.txt").is_file());
        let steps: Vec<(&str, Option<i32>)> = r
            .steps
            .iter()
            .map(|s| (s.phase.as_str(), s.exit_code))
            .collect();
        assert_eq!(
            steps,
            [
                ("pre_run", Some(0)),
                ("pre_run", Some(3)),
                ("post_run", Some(1))
            ],
            "{h}"
        );
    }
    // Passed: the runs and their virtualenvs leave /tmp.
    let _ = std::fs::remove_dir_all(&out);
}

/// Writes a minimal pure-Python wheel (`cehello`) into `dir` and returns its file name.
fn write_wheel(dir: &Path) -> String {
    let script = r#"
import base64, hashlib, sys, zipfile
name, ver = "cehello", "0.1"
files = {
    f"{name}/__init__.py": "GREETING = 'hello from a wheel'\n",
    f"{name}-{ver}.dist-info/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {ver}\n",
    f"{name}-{ver}.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
}
record = []
for p, c in files.items():
    d = base64.urlsafe_b64encode(hashlib.sha256(c.encode()).digest()).rstrip(b"=").decode()
    record.append(f"{p},sha256={d},{len(c)}")
record.append(f"{name}-{ver}.dist-info/RECORD,,")
files[f"{name}-{ver}.dist-info/RECORD"] = "\n".join(record) + "\n"
with zipfile.ZipFile(sys.argv[1], "w") as z:
    for p, c in files.items():
        z.writestr(p, c)
"#;
    let name = "cehello-0.1-py3-none-any.whl";
    let status = Command::new("python3")
        .args(["-c", script])
        .arg(dir.join(name))
        .status()
        .unwrap();
    assert!(status.success());
    name.to_string()
}

#[test]
fn python_env_installs_packages_offline_or_says_why_not() {
    let dir = scratch("compat-venv");
    std::fs::create_dir_all(dir.join("wheels")).unwrap();
    let wheel = write_wheel(&dir.join("wheels"));
    std::fs::write(
        dir.join("script.yaml"),
        "name: venv\nreplies:\n  - text: I'll check.\n    tool_calls:\n      - shell: {command: \"python -c 'import cehello; print(cehello.GREETING)' > agent.txt\"}\n  - text: Done.\n",
    )
    .unwrap();
    let task = |id: &str, packages: &str| {
        format!(
            "task_id: {id}\ninitial_prompt: hi\nagent: {{type: claude-code, scripted_model: script.yaml}}\n\
             sandbox:\n  python:\n    python_version: \"3\"\n    env_packages: [{packages}]\n  template_sources:\n    - {{type: template_dir, path: wheels, mount_point: wheels}}\n\
             pre_run:\n  - command: \"python -c 'import cehello; print(cehello.GREETING)' > pre.txt\"\n\
             run_limits: {{max_turns: 4, turn_timeout: 180}}\n\
             success_criteria:\n  - {{type: file_contains, path: pre.txt, includes: [hello from a wheel], description: pre_run imports it}}\n  - {{type: file_contains, path: agent.txt, includes: [hello from a wheel], description: the agent imports it}}\n"
        )
    };
    std::fs::write(
        dir.join("ok.yaml"),
        task("venv-ok", &format!("\"./wheels/{wheel}\"")),
    )
    .unwrap();
    std::fs::write(
        dir.join("missing.yaml"),
        task("venv-missing", "\"coder-eval-surely-no-such-package==9.9\""),
    )
    .unwrap();
    let out = dir.join("out");
    let ok = dir.join("ok.yaml").display().to_string();
    let missing = dir.join("missing.yaml").display().to_string();
    let (_, results, stderr) = run_tasks(
        &out,
        &[
            &ok,
            &missing,
            "--harness",
            "claude-code",
            "--harness",
            "codex",
        ],
    );
    assert_eq!(results.len(), 4, "{stderr}");
    for r in &results {
        if r.task_id == "venv-ok" {
            assert_eq!(
                r.status.as_str(),
                "SUCCESS",
                "{} {:?} {:?}",
                r.harness,
                r.error,
                r.criteria
            );
        } else {
            // pip cannot reach an index here: the task is an ERROR that says so, and the
            // agent never started.
            assert_eq!(r.status.as_str(), "ERROR", "{}", r.harness);
            let error = r.error.as_deref().unwrap();
            assert!(
                error.contains("sandbox.python.env_packages (pip install)"),
                "{error}"
            );
            assert!(r.turn.is_none());
        }
    }
    // Passed: the run and its virtualenvs (~100 MB) leave /tmp.
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn node_env_installs_a_local_package_on_path() {
    let dir = scratch("compat-node");
    let pkg = dir.join("pkgs/cehello");
    std::fs::create_dir_all(&pkg).unwrap();
    std::fs::write(
        pkg.join("package.json"),
        r#"{"name": "cehello", "version": "1.0.0", "bin": {"cehello": "bin.js"}}"#,
    )
    .unwrap();
    std::fs::write(
        pkg.join("bin.js"),
        "#!/usr/bin/env node\nconsole.log(\"hello from npm\");\n",
    )
    .unwrap();
    let packed = Command::new("npm")
        .args(["pack", "./cehello", "--silent"])
        .current_dir(dir.join("pkgs"))
        .output()
        .unwrap();
    assert!(packed.status.success(), "{packed:?}");
    std::fs::write(
        dir.join("script.yaml"),
        "name: node\nreplies:\n  - text: Running.\n    tool_calls:\n      - shell: {command: \"cehello > agent.txt\"}\n  - text: Done.\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("task.yaml"),
        "task_id: compat-node\ninitial_prompt: hi\nagent: {type: claude-code, scripted_model: script.yaml}\n\
         sandbox:\n  node:\n    env_packages: [\"./pkgs/cehello-1.0.0.tgz\"]\n  template_sources:\n    - {type: template_dir, path: pkgs, mount_point: pkgs}\n\
         pre_run:\n  - command: \"cehello > pre.txt\"\n\
         run_limits: {max_turns: 4, turn_timeout: 180}\n\
         success_criteria:\n  - {type: file_contains, path: pre.txt, includes: [hello from npm], description: pre_run finds the command}\n  - {type: file_contains, path: agent.txt, includes: [hello from npm], description: the agent finds the command}\n",
    )
    .unwrap();
    let task = dir.join("task.yaml").display().to_string();
    let (code, results, stderr) = run_tasks(&dir.join("out"), &[&task]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        results[0].status.as_str(),
        "SUCCESS",
        "{:?}",
        results[0].criteria
    );
    // Passed: the run and its node_modules leave /tmp.
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_agentless_task_checks_a_prepared_sandbox_without_an_agent() {
    let out = scratch("compat-agentless");
    let task = dir("run/agentless.yaml").display().to_string();
    // --harness is for the tasks that have an agent: this one runs on none.
    let (code, results, stderr) = run_tasks(&out, &[&task, "--harness", "codex"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(results.len(), 1, "{stderr}");
    let r = &results[0];
    assert_eq!(
        (r.task_id.as_str(), r.harness.as_str()),
        ("compat-agentless", "none")
    );
    assert_eq!(
        r.status.as_str(),
        "SUCCESS",
        "{:?} {:?}",
        r.error,
        r.criteria
    );
    assert!(r.turn.is_none(), "no agent ran");
    assert_eq!(r.criteria.len(), 2);
    let phases: Vec<&str> = r.steps.iter().map(|s| s.phase.as_str()).collect();
    assert_eq!(phases, ["pre_run", "post_run"]);
    let dir = out.join("compat-agentless/none");
    assert!(!dir.join("recording.jsonl").exists());
    assert!(
        dir.join("workspace/src").is_dir(),
        "the template was applied"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("workspace/canary.txt")).unwrap(),
        "ready\nchecked\n"
    );
    // `check` accepts it without a harness to check agent fields against.
    let checked = Command::new(bin())
        .arg("check")
        .arg(&task)
        .output()
        .unwrap();
    assert!(checked.status.success(), "{checked:?}");
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn check_places_a_duplicate_key_at_its_second_line_and_says_it_once() {
    let dir = scratch("duplicate-key");
    let file = dir.join("dup.yaml");
    std::fs::write(
        &file,
        "task_id: dup\ndescription: x\nagent:\n  type: pi\ninitial_prompt: hi\n\
         success_criteria:\n  - type: file_exists\n    path: a\n    path: b\ndescription: y\n",
    )
    .unwrap();
    let (code, _, stderr) = run_bin(&["check", file.to_str().unwrap()]);
    assert_eq!(code, 2, "{stderr}");
    let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(
        errors,
        [
            format!(
                "error: {}:9:5: duplicate key `path` (first set at line 8)",
                file.display()
            ),
            format!(
                "error: {}:10:1: duplicate key `description` (first set at line 2)",
                file.display()
            ),
        ],
        "{stderr}"
    );
}
