//! `coder-eval export --format atif`: real runs of every harness against the scripted
//! model, exported and validated by Harbor's own ATIF models (the `harbor` package's
//! pydantic trajectory models, unpacked by scripts/setup.sh), and the validator shown to
//! reject what breaks the format's rules.

use crate::support::{bin, root, scratch};
use coder_eval::results::{RunSummary, StampedEvent, TaskResult};
use coder_eval::{Event, ToolStatus};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

const HARNESSES: [&str; 5] = ["claude-code", "codex", "pi", "opencode", "gemini-cli"];

fn harbor() -> PathBuf {
    let dir = root().join("tests/.tools/harbor-0.26.0");
    assert!(
        dir.join("harbor/models/trajectories").is_dir(),
        "{} is missing: run scripts/setup.sh",
        dir.display()
    );
    dir
}

/// Runs Harbor's validator on `files`; returns (all valid, its output).
fn validate(files: &[PathBuf]) -> (bool, String) {
    let out = Command::new("python3")
        .arg(root().join("tests/fixtures/atif/validate.py"))
        .arg(harbor())
        .args(files)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

#[test]
fn the_validator_reads_real_atif_and_rejects_broken_rules() {
    let fixtures = root().join("tests/fixtures/atif");
    let real = [
        fixtures.join("claude_code_hello.trajectory.json"),
        fixtures.join("terminus2_timeout.trajectory.json"),
    ];
    let (ok, text) = validate(&real);
    assert!(ok, "{text}");

    let base: Value = serde_json::from_str(&std::fs::read_to_string(&real[0]).unwrap()).unwrap();
    let dir = scratch("atif-broken");
    type Mutation = (&'static str, fn(&mut Value));
    let broken: [Mutation; 5] = [
        ("step_gap", |t| t["steps"][1]["step_id"] = 3.into()),
        ("dangling_call", |t| {
            t["steps"][1]["observation"]["results"][0]["source_call_id"] = "nope".into()
        }),
        ("metrics_on_user", |t| {
            t["steps"][0]["metrics"] = serde_json::json!({"prompt_tokens": 1})
        }),
        ("unresolved_subagent", |t| {
            t["steps"][1]["observation"]["results"][0]["subagent_trajectory_ref"] =
                serde_json::json!([{"trajectory_id": "missing"}])
        }),
        ("total_steps", |t| {
            t["final_metrics"]["total_steps"] = 9.into()
        }),
    ];
    for (name, mutate) in broken {
        let mut t = base.clone();
        mutate(&mut t);
        let file = dir.join(format!("{name}.json"));
        std::fs::write(&file, serde_json::to_vec(&t).unwrap()).unwrap();
        let (ok, text) = validate(std::slice::from_ref(&file));
        assert!(!ok, "{name} passed: {text}");
    }
}

/// Runs `scenarios` on every harness into `out`; returns the run's rows' task.json paths.
fn run(out: &Path, scenarios: &[&str]) -> Vec<PathBuf> {
    let mut cmd = Command::new(bin());
    cmd.arg("run");
    for s in scenarios {
        cmd.arg(root().join(format!("tasks/scenarios/{s}/task.yaml")));
    }
    for h in HARNESSES {
        cmd.args(["--harness", h]);
    }
    let output = cmd
        .arg("--out")
        .arg(out)
        .args(["--jobs", "2"])
        .output()
        .unwrap();
    assert!(
        out.join("run.json").is_file(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let summary: RunSummary =
        serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).unwrap()).unwrap();
    assert_eq!(summary.rows.len(), scenarios.len() * HARNESSES.len());
    summary.rows.iter().map(|r| out.join(&r.result)).collect()
}

#[test]
fn every_harness_exports_valid_atif_that_matches_its_run() {
    let out = scratch("atif-export");
    let units = run(&out, &["parallel", "tool_error"]);
    let export = Command::new(bin())
        .args(["export", "--format", "atif"])
        .arg(&out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&export.stderr);
    assert!(export.status.success(), "{stderr}");
    let files: Vec<PathBuf> = units
        .iter()
        .map(|t| t.parent().unwrap().join("trajectory.json"))
        .collect();
    let (ok, text) = validate(&files);
    assert!(ok, "{text}");

    for (task_json, file) in units.iter().zip(&files) {
        let task: TaskResult =
            serde_json::from_str(&std::fs::read_to_string(task_json).unwrap()).unwrap();
        let turn = task.turn.as_ref().unwrap();
        let t: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
        let who = format!("{} {}", task.task_id, task.harness);
        let steps = t["steps"].as_array().unwrap();
        assert_eq!(steps[0]["source"], "user", "{who}");
        assert_eq!(steps[0]["message"], task.prompt.as_str(), "{who}");
        // The recording carries its wall-clock start: every step has a timestamp.
        assert!(
            steps.iter().all(|s| s["timestamp"].is_string()),
            "{who}: {t:#}"
        );
        // Each message's text once, as the turn record keeps it (a message the stream
        // sends in parts is its last, whole state).
        let texts: Vec<&str> = steps[1..]
            .iter()
            .filter_map(|s| s["message"].as_str())
            .filter(|m| !m.is_empty())
            .collect();
        let expected: Vec<&str> = turn
            .messages
            .iter()
            .filter(|m| m.parent_call_id.is_none() && !m.text.is_empty())
            .map(|m| m.text.as_str())
            .collect();
        assert_eq!(texts, expected, "{who}");
        // One agent step per model call the run counted.
        let model_steps = steps.iter().filter(|s| s["llm_call_count"] == 1).count();
        assert_eq!(model_steps, turn.model_calls.len(), "{who}: {t:#}");
        // Every tool call, in order, each with its result and status.
        let calls: Vec<(&str, &str)> = steps
            .iter()
            .flat_map(|s| s["tool_calls"].as_array().into_iter().flatten())
            .map(|c| {
                (
                    c["tool_call_id"].as_str().unwrap(),
                    c["function_name"].as_str().unwrap(),
                )
            })
            .collect();
        let expected: Vec<(&str, &str)> = turn
            .tool_calls
            .iter()
            .map(|c| (c.call_id.as_str(), c.name.as_str()))
            .collect();
        assert_eq!(calls, expected, "{who}");
        let statuses: Vec<String> = steps
            .iter()
            .flat_map(|s| s["observation"]["results"].as_array().into_iter().flatten())
            .map(|r| r["extra"]["status"].as_str().unwrap().to_string())
            .collect();
        let expected: Vec<String> = turn
            .tool_calls
            .iter()
            .map(|c| {
                serde_json::to_value(c.status)
                    .unwrap()
                    .as_str()
                    .unwrap()
                    .to_string()
            })
            .collect();
        assert_eq!(statuses, expected, "{who}");
        // The totals are the run's; absent where the run has none.
        let fm = &t["final_metrics"];
        assert_eq!(fm["total_steps"], steps.len(), "{who}");
        match task.cost.as_ref().and_then(|c| c.usage) {
            Some(u) => assert_eq!(fm["total_completion_tokens"], u.output_tokens, "{who}"),
            None => assert!(fm.get("total_completion_tokens").is_none(), "{who}"),
        }
        assert_eq!(
            t["extra"]["coder_eval"]["status"],
            serde_json::to_value(task.status).unwrap(),
            "{who}"
        );
    }
    // Exporting again writes the same bytes (the replay is deterministic).
    let first = std::fs::read(&files[0]).unwrap();
    let again = Command::new(bin())
        .args(["export", "--format", "atif"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(again.status.success());
    assert_eq!(std::fs::read(&files[0]).unwrap(), first);

    // A sub-agent (no scripted scenario has one): embedded with its own id, referenced from
    // the spawning call, and Harbor accepts it.
    let task: TaskResult =
        serde_json::from_str(&std::fs::read_to_string(&units[0]).unwrap()).unwrap();
    let stamp = |ms: u64, event: Event| StampedEvent {
        line: 0,
        stamp_us: ms * 1000,
        event,
    };
    let events = vec![
        stamp(
            1,
            Event::ModelCallStarted {
                message_id: None,
                parent_call_id: None,
            },
        ),
        stamp(
            2,
            Event::ToolCallStarted {
                call_id: "task1".into(),
                name: "Task".into(),
                input_json: r#"{"prompt":"look"}"#.into(),
                parent_call_id: None,
            },
        ),
        stamp(
            3,
            Event::ModelCallStarted {
                message_id: None,
                parent_call_id: Some("task1".into()),
            },
        ),
        stamp(
            4,
            Event::ToolCallFinished {
                call_id: "task1".into(),
                status: ToolStatus::Ok,
                output_excerpt: "seen".into(),
                exit_code: None,
                cli_duration_ms: None,
            },
        ),
    ];
    let t = coder_eval::export::atif::trajectory(
        &task,
        &events,
        "with/subagent",
        Some(1_796_077_147_394),
    );
    let file = out.join("subagent.trajectory.json");
    std::fs::write(&file, serde_json::to_vec_pretty(&t).unwrap()).unwrap();
    let (ok, text) = validate(std::slice::from_ref(&file));
    assert!(ok, "{text}");
    assert_eq!(
        t.subagent_trajectories[0].trajectory_id,
        "with/subagent/task1"
    );
}

#[test]
fn a_lost_recording_or_a_path_out_of_the_run_is_an_error_not_a_thin_trajectory() {
    let out = scratch("atif-lost");
    let units = run(&out, &["parallel"]);
    let export = |dir: &Path| {
        Command::new(bin())
            .args(["export", "--format", "atif"])
            .arg(dir)
            .output()
            .unwrap()
    };
    // One recording gone: that run is an error naming it, the others are written.
    let lost = units[0].parent().unwrap().join("recording.jsonl");
    std::fs::remove_file(&lost).unwrap();
    let o = export(&out);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains(&lost.display().to_string()), "{stderr}");
    assert!(!units[0].parent().unwrap().join("trajectory.json").exists());
    assert!(units[1].parent().unwrap().join("trajectory.json").exists());
    // A run.json row pointing out of the run folder is refused.
    let run_json = out.join("run.json");
    let text = std::fs::read_to_string(&run_json).unwrap();
    let first = text.find("\"result\": \"").unwrap();
    let tampered = format!(
        "{}\"result\": \"../elsewhere/task.json\",{}",
        &text[..first],
        {
            let rest = &text[first..];
            &rest[rest.find(',').unwrap() + 1..]
        }
    );
    std::fs::write(&run_json, tampered).unwrap();
    let o = export(&out);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("not a path inside the run folder"),
        "{stderr}"
    );
}

#[test]
fn a_folder_without_run_json_is_refused_naming_it() {
    let dir = scratch("atif-no-run");
    let out = Command::new(bin())
        .args(["export", "--format", "atif"])
        .arg(&dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("{}", dir.join("run.json").display())),
        "{stderr}"
    );
}
