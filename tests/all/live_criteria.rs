//! coder_eval's criterion types graded for real after live runs of real CLIs against the
//! scripted model: `tasks/coder_eval_criteria/task.yaml` on Claude Code and Pi (file,
//! command, CLI-log, import and both judges, each judge playing its own script), an
//! agent_judge run by Pi for an agent on Codex, and the
//! judges' API key: handed to judges only, it reaches neither the agent nor any file of
//! the run.

use crate::support::{bin, root, scratch};
use coder_eval::results::{TaskResult, TaskStatus};
use std::path::Path;
use std::process::Command;

fn result(out: &Path, task: &str, harness: &str) -> TaskResult {
    let path = out.join(task).join(harness).join("task.json");
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

#[test]
fn coder_eval_criteria_on_two_harnesses() {
    let out = scratch("live-criteria");
    let output = Command::new(bin())
        .arg("run")
        .arg(root().join("tasks/coder_eval_criteria/task.yaml"))
        .args(["--harness", "claude-code", "--harness", "pi", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    eprintln!("{stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    for harness in ["claude-code", "pi"] {
        let r = result(&out, "coder_eval_criteria", harness);
        assert_eq!(r.status, TaskStatus::Success, "{harness}: {:?}", r.error);
        let kinds: Vec<&str> = r.criteria.iter().map(|c| c.kind.as_str()).collect();
        assert_eq!(
            kinds,
            [
                "file_check",
                "run_command",
                "run_command",
                "command_executed",
                "cli_called",
                "cli_called",
                "import_check",
                "llm_judge",
                "agent_judge"
            ]
        );
        for c in &r.criteria {
            assert!(
                c.passed && c.error.is_none(),
                "{harness} {}: {} {:?}",
                c.kind,
                c.details,
                c.error
            );
        }
        let llm = r.criteria[7].judge.as_ref().unwrap();
        assert_eq!(
            (llm.endpoint.as_str(), r.criteria[7].score),
            ("scripted", 0.85)
        );
        assert!(
            llm.prompt.as_deref().unwrap().contains("AGENT TOOL CALLS"),
            "{llm:?}"
        );
        let agent = r.criteria[8].judge.as_ref().unwrap();
        assert_eq!(
            (agent.endpoint.as_str(), r.criteria[8].score),
            ("agent:claude-code", 0.9)
        );
        assert!(agent.usage.as_ref().unwrap().input_tokens.unwrap() > 0);
        // The judge ran as a task of its own, in a copy of the workspace, and read main.py.
        let judge = result(
            &out.join("coder_eval_criteria").join(harness).join("judges"),
            "judge-1",
            "claude-code",
        );
        assert_eq!(judge.status, TaskStatus::Success);
        let calls = &judge.turn.as_ref().unwrap().tool_calls;
        assert_eq!(calls.len(), 1, "{calls:?}");
        assert_eq!(calls[0].name, "Read");
        assert!(
            calls[0].input["file_path"]
                .as_str()
                .unwrap()
                .ends_with("/judges/judge-1/claude-code/workspace/main.py")
        );
    }
}

#[test]
fn an_agent_judge_on_another_harness() {
    let out = scratch("live-pi-judge");
    let output = Command::new(bin())
        .arg("run")
        .arg(root().join("tasks/coder_eval_criteria/pi_judge.yaml"))
        .args(["--harness", "codex", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    eprintln!("{}", String::from_utf8_lossy(&output.stdout));
    let r = result(&out, "coder_eval_criteria_pi_judge", "codex");
    assert_eq!(r.status, TaskStatus::Success, "{:?}", r.error);
    let c = r.criteria.last().unwrap();
    assert_eq!((c.kind.as_str(), c.score), ("agent_judge", 0.9), "{c:?}");
    assert_eq!(c.judge.as_ref().unwrap().endpoint, "agent:pi");
    let judge = result(
        &out.join("coder_eval_criteria_pi_judge/codex/judges"),
        "judge-1",
        "pi",
    );
    let calls = &judge.turn.as_ref().unwrap().tool_calls;
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert!(calls[0].input.to_string().contains("main.py"), "{calls:?}");
}

#[test]
fn the_judges_key_reaches_no_agent_and_no_file() {
    let out = scratch("live-judge-key");
    let secret = "sk-ant-test-4f0c-NEVER-WRITTEN";
    let output = Command::new(bin())
        .arg("run")
        .arg(root().join("tasks/coder_eval_criteria/judge_key.yaml"))
        .args([
            "--harness",
            "claude-code",
            "--judge-env",
            "ANTHROPIC_API_KEY",
            "--judge-env",
            "ANTHROPIC_BASE_URL",
            "--out",
        ])
        .arg(&out)
        .env("ANTHROPIC_API_KEY", secret)
        // The real-API path, pointed at a closed loopback port.
        .env("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stdout.contains(secret) && !stderr.contains(secret));
    let r = result(&out, "judge_key", "claude-code");
    assert_eq!(r.status, TaskStatus::Success, "{:?}", r.error);
    // The agent dumped its environment: no key in it (nor anywhere else).
    let env =
        std::fs::read_to_string(out.join("judge_key/claude-code/workspace/agent-env.txt")).unwrap();
    assert!(env.contains("PATH="), "{env}");
    let mut stack = vec![out.clone()];
    let mut files = 0;
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = e.path();
            let kind = e.file_type().unwrap();
            if kind.is_dir() {
                stack.push(path);
            } else if kind.is_file() {
                files += 1;
                let bytes = std::fs::read(&path).unwrap();
                assert!(
                    !String::from_utf8_lossy(&bytes).contains(secret),
                    "the key is in {}",
                    path.display()
                );
            }
        }
    }
    assert!(files > 10, "{files} files scanned");
    let llm = &r.criteria[1];
    assert_eq!(llm.error.as_ref().unwrap().kind, "judge_request", "{llm:?}");
    assert!(
        llm.details.contains("Connection refused"),
        "{}",
        llm.details
    );
    // The scripted agent judge tried Bash: refused (read-only by default), verdict kept.
    let scripted = &r.criteria[2];
    assert_eq!(scripted.score, 1.0, "{scripted:?}");
    let judge = result(
        &out.join("judge_key/claude-code/judges"),
        "judge-1",
        "claude-code",
    );
    let call = &judge.turn.as_ref().unwrap().tool_calls[0];
    assert_eq!(call.name, "Bash");
    // Claude Code 2.1.197: "… not enabled …"; 2.1.332: "No such tool available: Bash.
    // Bash is disabled for this session …".
    assert!(
        call.output_excerpt.contains("not enabled")
            || call
                .output_excerpt
                .contains("Bash is disabled for this session"),
        "{}",
        call.output_excerpt
    );
    assert!(
        !out.join("judge_key/claude-code/judges/judge-1/claude-code/workspace/judge-env.txt")
            .exists()
    );
    // The agent judge on the real-API path had the key, and failed to connect.
    assert!(r.criteria[3].error.is_some());
}

/// Three rows of a labelling dataset, run live on two harnesses and graded for real; their
/// results renamed `sentiment/<row>` as a dataset's fan-out names them, then judged
/// together by `suite_thresholds` (run.json's `suite_thresholds`, junit.xml, report.html).
#[test]
fn suite_thresholds_over_live_rows() {
    use coder_eval::run::thresholds::{CriteriaByTask, suite_verdicts};
    let out = scratch("live-suite");
    let rows = ["r1", "r2", "r3"];
    let mut cmd = Command::new(bin());
    cmd.arg("run");
    for r in rows {
        cmd.arg(root().join(format!("tasks/coder_eval_criteria/suite/{r}.yaml")));
    }
    let output = cmd
        .args(["--harness", "claude-code", "--harness", "pi", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    // The three files are the rows of one dataset task: one group per harness and
    // criterion; the second criterion misses its threshold, so exit 1.
    assert_eq!(
        output.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let summary: coder_eval::results::RunSummary =
        serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).unwrap()).unwrap();
    assert_eq!(
        summary.suite_thresholds.len(),
        4,
        "2 harnesses × 2 criteria, over the 3 rows"
    );

    let mut results = Vec::new();
    let mut criteria = CriteriaByTask::new();
    for r in rows {
        let task = coder_eval::task::Task::load_id(
            &root().join(format!("tasks/coder_eval_criteria/suite/{r}.yaml")),
            &format!("sentiment/{r}"),
        )
        .unwrap();
        criteria.insert(format!("sentiment/{r}"), task.success_criteria);
        for h in ["claude-code", "pi"] {
            let res = result(&out, &format!("sentiment/{r}"), h);
            assert_eq!(res.status, TaskStatus::Success);
            assert_eq!(res.row.as_ref().unwrap().suite_id, "sentiment");
            results.push(res);
        }
    }
    let gates = suite_verdicts(&results, &criteria);
    assert_eq!(gates, summary.suite_thresholds, "run.json says the same");
    assert_eq!(gates.len(), 4, "one group per harness and criterion");
    for g in &gates {
        assert_eq!((g.task_id.as_str(), g.rows), ("sentiment", 3));
        // expected/observed: pos/pos, neg/neg, pos/neg.
        assert!((g.metrics["accuracy"] - 2.0 / 3.0).abs() < 1e-9, "{g:?}");
        assert_eq!(g.metrics["recall.positive"], 0.5);
        assert_eq!(g.metrics["recall.negative"], 1.0);
        assert_eq!(g.metrics["precision.negative"], 0.5);
        assert_eq!(g.passed, g.criterion_index == 0, "{g:?}");
    }
    let junit = coder_eval::run::junit::report(&results, &gates)
        .to_string()
        .unwrap();
    assert!(
        junit.contains("suite_thresholds") && junit.contains("recall.positive = 0.500 &lt; 0.9"),
        "{junit}"
    );
    let html = coder_eval::run::report::render(&results, &gates, &[]);
    assert!(html.contains("Suite thresholds") && html.contains("— missed"));

    // `grade --write` of one row with an edited task file (r3 expects `negative`, which
    // claude-code's agent answered) judges the suite's thresholds again in run.json.
    let edited = out.join("edited");
    let src = root().join("tasks/coder_eval_criteria/suite");
    std::fs::create_dir_all(&edited).unwrap();
    std::fs::copy(src.join("script-r3.yaml"), edited.join("script-r3.yaml")).unwrap();
    let text = std::fs::read_to_string(src.join("r3.yaml"))
        .unwrap()
        .replace("label: positive}", "label: negative}");
    std::fs::write(edited.join("r3.yaml"), text).unwrap();
    let graded = Command::new(bin())
        .arg("grade")
        .arg(out.join("sentiment/r3/claude-code"))
        .arg("--task")
        .arg(edited.join("r3.yaml"))
        .arg("--write")
        .output()
        .unwrap();
    assert!(
        graded.status.success(),
        "{}",
        String::from_utf8_lossy(&graded.stderr)
    );
    let summary: coder_eval::results::RunSummary =
        serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).unwrap()).unwrap();
    assert_eq!(summary.suite_thresholds.len(), 4);
    for g in &summary.suite_thresholds {
        if g.harness == "claude-code" {
            assert_eq!(g.metrics["accuracy"], 1.0, "{g:?}");
            assert!(g.passed, "{g:?}");
        } else {
            assert!((g.metrics["accuracy"] - 2.0 / 3.0).abs() < 1e-9, "{g:?}");
            assert_eq!(g.passed, g.criterion_index == 0, "{g:?}");
        }
    }
}
