//! coder_eval's criterion types through `grade_all`: the judges end to end against the
//! scripted model (a script answers `submit_verdict`), the API path with a key handed to
//! judges (the key never reaches a result), criterion plugins registered by name with
//! their load-time validation call, and the host-native Python criteria with a task PATH.

use crate::support::scratch;
use coder_eval::grading::judge::JudgeEnv;
use coder_eval::grading::{CriterionSpec, GradeContext, grade_all, plugins};
use coder_eval_scripted_model::{Script, ScriptedModel, ServerConfig};
use std::path::Path;

fn spec(yaml: &str) -> CriterionSpec {
    serde_yaml_ng::from_str(yaml).unwrap_or_else(|e| panic!("{yaml}: {e}"))
}

/// A task folder with a workspace, a reference and the judge's scripts.
fn setup(name: &str) -> std::path::PathBuf {
    let dir = scratch(name);
    std::fs::create_dir_all(dir.join("workspace")).unwrap();
    std::fs::create_dir_all(dir.join("reference")).unwrap();
    std::fs::write(
        dir.join("workspace/main.py"),
        "def add(a, b):\n    return a + b\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("reference/main.py"),
        "def add(x, y):\n    return x + y  # the reference solution line\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("judge.yaml"),
        "replies:\n  - tool_calls:\n      - name: submit_verdict\n        arguments:\n          score: 0.8\n          rationale: \"add() is correct; it matches `return x + y  # the reference solution line`\"\n          findings: [\"main.py:2 returns the sum\"]\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("prose.yaml"),
        "replies:\n  - text: \"I think it deserves 0.9\"\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("bad-score.yaml"),
        "replies:\n  - tool_calls: [{name: submit_verdict, arguments: {score: \"high\", rationale: r}}]\n",
    )
    .unwrap();
    dir
}

fn ctx<'a>(dir: &'a Path, env: Option<&'a JudgeEnv>) -> GradeContext<'a> {
    let mut ctx = GradeContext::new(
        Box::leak(dir.join("workspace").into_boxed_path()),
        dir,
        &[],
        "Write add(a, b) in main.py",
        Some("Done: main.py has add()."),
    );
    ctx.reference_dir = Some(Box::leak(dir.join("reference").into_boxed_path()));
    ctx.judge_env = env;
    ctx
}

#[tokio::test]
async fn llm_judge_against_the_scripted_model() {
    let dir = setup("llm-judge-scripted");
    let criteria = [
        spec(
            "type: llm_judge\nprompt: Is add() correct?\nfiles: [main.py, missing.py]\ninclude_agent_output: true\nscripted_model: judge.yaml\n",
        ),
        spec("type: llm_judge\nprompt: p\nscripted_model: prose.yaml\n"),
        spec("type: llm_judge\nprompt: p\nscripted_model: bad-score.yaml\n"),
        spec("type: llm_judge\nprompt: p\nenabled: false\n"),
        spec("type: llm_judge\nprompt: p\n"),
    ];
    let results = grade_all(&criteria, &ctx(&dir, None)).await;

    let ok = &results[0];
    assert!(ok.error.is_none(), "{ok:?}");
    assert_eq!((ok.score, ok.pass_threshold, ok.passed), (0.8, 0.7, true));
    let judge = ok.judge.as_ref().expect("a judge record");
    assert_eq!(judge.endpoint, "scripted");
    assert_eq!(
        judge.verdict.as_ref().unwrap().findings,
        ["main.py:2 returns the sum"]
    );
    let prompt = judge.prompt.as_deref().unwrap();
    assert!(
        prompt.contains("--- FILE: main.py ---\ndef add(a, b)"),
        "{prompt}"
    );
    assert!(prompt.contains("--- FILE: missing.py ---\n<file not found>"));
    assert!(prompt.contains("AGENT OUTPUT (UNTRUSTED DATA"));
    // The reference was shown to the judge but is scrubbed from what is kept.
    assert!(
        prompt.contains("REFERENCE SOLUTION") && !prompt.contains("the reference solution line"),
        "{prompt}"
    );
    assert!(
        ok.details.contains("[reference redacted]"),
        "{}",
        ok.details
    );
    assert!(
        ok.details.contains("file not found: missing.py"),
        "{}",
        ok.details
    );
    assert!(judge.usage.as_ref().unwrap().input_tokens.unwrap() > 0);
    assert_eq!(judge.cost_usd, None, "a scripted model has no price");
    let json = serde_json::to_string(ok).unwrap();
    assert!(!json.contains("the reference solution line"), "{json}");

    let prose = &results[1];
    assert_eq!(prose.error.as_ref().unwrap().kind, "no_verdict");
    assert!(
        prose.details.contains("I think it deserves"),
        "{}",
        prose.details
    );
    assert_eq!(results[2].error.as_ref().unwrap().kind, "invalid_verdict");
    assert_eq!(
        (results[3].score, results[3].details.as_str()),
        (1.0, "(skipped: enabled=false)")
    );
    let unconfigured = results[4].error.as_ref().unwrap();
    assert_eq!(unconfigured.kind, "judge_unconfigured");
    assert!(
        unconfigured
            .message
            .contains("--judge-env ANTHROPIC_API_KEY"),
        "{}",
        unconfigured.message
    );
}

#[tokio::test]
async fn the_api_path_sends_the_key_and_never_keeps_it() {
    let dir = setup("llm-judge-api");
    // The Anthropic path, pointed at a loopback scripted model through ANTHROPIC_BASE_URL.
    let script = Script::load(&dir.join("judge.yaml")).unwrap();
    let server = ScriptedModel::start(ServerConfig::new(script, "/nonexistent"))
        .await
        .unwrap();
    let secret = "sk-ant-test-0123456789-SECRET";
    let env = JudgeEnv::from_pairs([
        ("ANTHROPIC_API_KEY".to_string(), secret.to_string()),
        ("ANTHROPIC_BASE_URL".to_string(), server.base_url()),
    ]);
    let criteria = [spec(
        "type: llm_judge\nprompt: grade\nmodel: claude-sonnet-4-6\n",
    )];
    let results = grade_all(&criteria, &ctx(&dir, Some(&env))).await;
    server.shutdown().await;
    let r = &results[0];
    assert!(r.error.is_none(), "{r:?}");
    let judge = r.judge.as_ref().unwrap();
    assert_eq!(judge.endpoint, "anthropic");
    // Usage as the API reported it, priced by the model that answered.
    let usage = judge.usage.as_ref().unwrap();
    let want = (usage.input_tokens.unwrap() as f64 * 3.0
        + usage.output_tokens.unwrap() as f64 * 15.0)
        / 1e6;
    assert!((judge.cost_usd.unwrap() - want).abs() < 1e-12, "{judge:?}");
    let json = serde_json::to_string(&results).unwrap();
    assert!(
        !json.contains(secret),
        "the key leaked into the result: {json}"
    );
    assert!(!format!("{env:?}").contains(secret));

    // A key but an unreachable API: a clear request error, still no key in it.
    let env = JudgeEnv::from_pairs([
        ("ANTHROPIC_API_KEY".to_string(), secret.to_string()),
        (
            "ANTHROPIC_BASE_URL".to_string(),
            "http://127.0.0.1:9".to_string(),
        ),
    ]);
    let results = grade_all(&criteria, &ctx(&dir, Some(&env))).await;
    let e = results[0].error.as_ref().unwrap();
    assert_eq!(e.kind, "judge_request", "{e:?}");
    assert!(!serde_json::to_string(&results).unwrap().contains(secret));
}

#[tokio::test]
async fn reference_comparison_reads_the_reference_dir() {
    let dir = setup("refcmp");
    let criteria = [
        spec("type: reference_comparison\nagent_file: main.py\nreference_file: main.py\n"),
        spec(
            "type: run_command\ncommand: test -f \"$REFERENCE_DIR/main.py\" && test -d \"$TASK_DIR/workspace\"\n",
        ),
    ];
    let results = grade_all(&criteria, &ctx(&dir, None)).await;
    assert!(results[0].error.is_none(), "{:?}", results[0]);
    assert_eq!(results[0].score, 1.0, "renamed identifiers, the same AST");
    assert!(results[1].passed, "{}", results[1].details);
}

#[tokio::test]
async fn pytest_runs_with_the_task_path() {
    let dir = setup("pytest-path");
    // A stand-in `pytest` on the task's PATH (as a venv's bin would be): the criterion
    // finds it there, not on the host's PATH.
    let bin = dir.join("venv-bin");
    std::fs::create_dir_all(&bin).unwrap();
    let fake = bin.join("pytest");
    std::fs::write(
        &fake,
        "#!/bin/sh\necho \"args: $*\"\necho 'collected 4 items'\necho '=== 1 failed, 3 passed in 0.01s ==='\nexit 1\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!("{}:/usr/bin:/bin", bin.display());
    let mut ctx = ctx(&dir, None);
    ctx.path = Some(Box::leak(path.into_boxed_str()));
    let criteria = [spec(
        "type: pytest\npath: tests\nargs: [-q, -k, \"not slow\"]\n",
    )];
    let results = grade_all(&criteria, &ctx).await;
    let r = &results[0];
    assert!(r.error.is_none(), "{r:?}");
    assert_eq!(r.score, 0.75);
    assert!(
        r.details.contains("args: tests -q -k not slow"),
        "{}",
        r.details
    );
}

#[tokio::test]
async fn a_plugin_type_validates_at_load_and_grades() {
    let dir = setup("plugin");
    let example = Path::new(env!("CODER_EVAL_COMPONENTS_DIR")).join("example_criterion.wasm");
    let plugin_dir = dir.join("plugins");
    std::fs::create_dir_all(&plugin_dir).unwrap();
    std::fs::copy(&example, plugin_dir.join("readme.wasm")).unwrap();
    std::fs::write(
        plugin_dir.join("criteria.yaml"),
        "readme_mentions_files:\n  component: readme.wasm\n  validates_params: true\n",
    )
    .unwrap();
    let names = plugins::register_dir(&plugin_dir).unwrap();
    assert_eq!(names, ["readme_mentions_files"]);
    // A built-in name cannot be taken.
    let err = plugins::register(plugins::Plugin {
        name: "file_exists".into(),
        component: plugin_dir.join("readme.wasm"),
        validates_params: false,
    })
    .unwrap_err();
    assert!(err.to_string().contains("built-in"), "{err}");

    // The component's own validation runs at load, and its message is the load error at
    // the criterion's line.
    let yaml = "task_id: t\nsuccess_criteria:\n  - type: file_exists\n    path: a\n  - type: readme_mentions_files\n    readmee: README.md\n";
    #[derive(serde::Deserialize)]
    struct Task {
        #[allow(dead_code)]
        task_id: String,
        #[allow(dead_code)]
        success_criteria: Vec<CriterionSpec>,
    }
    let err = serde_yaml_ng::from_str::<Task>(yaml)
        .err()
        .expect("a load error");
    assert!(err.to_string().contains("unknown field `readmee`"), "{err}");
    assert_eq!(err.location().map(|l| l.line()), Some(5), "{err}");

    std::fs::write(dir.join("workspace/README.md"), "see main.py").unwrap();
    let criteria = [spec("type: readme_mentions_files\nreadme: README.md\n")];
    let results = grade_all(&criteria, &ctx(&dir, None)).await;
    assert!(results[0].error.is_none(), "{:?}", results[0]);
    assert_eq!(results[0].kind, "readme_mentions_files");
    assert!(
        results[0].details.contains("no files to mention"),
        "{}",
        results[0].details
    );

    // `coder-eval check --criteria DIR` knows the plugin's type, and its validation.
    let check = |file: &str, text: &str, with: bool| {
        let path = dir.join(file);
        std::fs::write(&path, text).unwrap();
        let mut cmd = std::process::Command::new(crate::support::bin());
        cmd.arg("check").arg(&path);
        if with {
            cmd.arg("--criteria").arg(&plugin_dir);
        }
        let out = cmd.output().unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let good = "task_id: t\ninitial_prompt: p\nsuccess_criteria:\n  - type: readme_mentions_files\n    readme: README.md\n";
    let (code, stderr) = check("good.yaml", good, false);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("readme_mentions_files"), "{stderr}");
    let (code, stderr) = check("good.yaml", good, true);
    assert_eq!(code, Some(0), "{stderr}");
    let (code, stderr) = check("bad.yaml", &good.replace("readme:", "readmee:"), true);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("unknown field `readmee`"), "{stderr}");
}

/// `tool` as found on the host's `PATH` (where `scripts/setup.sh` installs pytest and
/// pylint), or `None`.
fn on_path(tool: &str) -> Option<std::path::PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(tool))
        .find(|p| p.is_file())
}

#[tokio::test]
async fn pytest_criterion_runs_the_real_pytest() {
    if on_path("pytest").is_none() {
        eprintln!(
            "skipped pytest_criterion_runs_the_real_pytest: pytest is not on PATH (scripts/setup.sh installs it)"
        );
        return;
    }
    let dir = setup("real-pytest");
    let tests = dir.join("workspace/tests");
    std::fs::create_dir_all(&tests).unwrap();
    std::fs::write(
        tests.join("test_add.py"),
        "import sys, pathlib\nsys.path.insert(0, str(pathlib.Path(__file__).parent.parent))\n\
         from main import add\n\n\
         def test_small():\n    assert add(1, 2) == 3\n\n\
         def test_negative():\n    assert add(-1, -2) == -3\n\n\
         def test_strings():\n    assert add('a', 'b') == 'ab'\n\n\
         def test_wrong():\n    assert add(2, 2) == 5\n\n\
         import pytest\n\n@pytest.mark.slow\ndef test_slow():\n    assert add(0, 0) == 0\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("workspace/pytest.ini"),
        "[pytest]\nmarkers =\n    slow: long tests\n",
    )
    .unwrap();
    let criteria = [
        // 3 of the 4 selected tests pass (the slow one deselected by the args).
        spec("type: pytest\npath: tests\nargs: [-m, \"not slow\"]\n"),
        // All five run: 4 of 5.
        spec("type: pytest\npath: tests\n"),
        // A path with no tests: nothing collected scores 0.
        spec("type: pytest\npath: main.py\n"),
    ];
    let results = grade_all(&criteria, &ctx(&dir, None)).await;
    for r in &results {
        assert!(r.error.is_none(), "{r:?}");
    }
    assert_eq!(results[0].score, 0.75, "{}", results[0].details);
    assert!(
        results[0]
            .details
            .contains("pytest: 3 passed, 1 failed, 0 errors"),
        "{}",
        results[0].details
    );
    assert_eq!(results[1].score, 0.8, "{}", results[1].details);
    assert_eq!(results[2].score, 0.0, "{}", results[2].details);
}

#[tokio::test]
async fn pylint_score_criterion_runs_the_real_pylint() {
    if on_path("pylint").is_none() {
        eprintln!(
            "skipped pylint_score_criterion_runs_the_real_pylint: pylint is not on PATH (scripts/setup.sh installs it)"
        );
        return;
    }
    let dir = setup("real-pylint");
    let ws = dir.join("workspace");
    std::fs::write(
        ws.join("clean.py"),
        "\"\"\"Arithmetic.\"\"\"\n\n\ndef add(left, right):\n    \"\"\"Return the sum.\"\"\"\n    return left + right\n",
    )
    .unwrap();
    std::fs::write(
        ws.join("messy.py"),
        "import os, sys\ndef f(x):\n  y = 1\n  return x\n",
    )
    .unwrap();
    let criteria = [
        spec("type: pylint_score\npath: clean.py\n"),
        spec("type: pylint_score\npath: messy.py\nmin_score: 7\n"),
        spec("type: pylint_score\npath: messy.py\nargs: [\"--disable=C,W\"]\n"),
        // pylint 3 with every message disabled lints nothing and prints no rating.
        spec("type: pylint_score\npath: messy.py\nargs: [--disable=all]\n"),
    ];
    let results = grade_all(&criteria, &ctx(&dir, None)).await;
    for r in &results[..3] {
        assert!(r.error.is_none(), "{r:?}");
        assert!(r.details.contains("rated at"), "{}", r.details);
    }
    assert_eq!(results[0].score, 1.0, "{}", results[0].details);
    // Missing docstrings, unused imports and variable, bad indentation: well under 7/10.
    assert!(results[1].score < 0.7, "{}", results[1].details);
    assert!(!results[1].passed, "{}", results[1].details);
    // Conventions and warnings disabled: nothing else is wrong, 10/10.
    assert_eq!(results[2].score, 1.0, "{}", results[2].details);
    let error = results[3].error.as_ref().expect("no rating is an error");
    assert_eq!(error.kind, "bad_score_output", "{}", results[3].details);
    assert!(
        results[3].details.contains("No files to lint"),
        "{}",
        results[3].details
    );
}
