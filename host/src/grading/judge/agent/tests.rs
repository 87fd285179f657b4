//! agent_judge tests: params, tool defaults, the verdict's two channels, the workspace copy.

use super::*;
use serde_json::json;

fn p(v: Value) -> Result<AgentJudge, String> {
    AgentJudge::parse(v.as_object().unwrap())
}

#[test]
fn params_new_and_old_shapes() {
    let a = p(json!({"prompt": "grade"})).unwrap();
    assert_eq!(
        (a.max_turns, a.turn_timeout, a.harness().as_str()),
        (50, 300, "claude-code")
    );
    let ignore = a.ignore_patterns();
    assert!(ignore.contains(&".git".to_string()) && ignore.contains(&".mcp.json".to_string()));
    // The floor survives an author's own list.
    let a =
        p(json!({"prompt": "g", "agent": {"type": "codex", "ignore_patterns": ["dist"]}})).unwrap();
    assert_eq!(a.harness(), "codex");
    assert_eq!(
        a.ignore_patterns(),
        ["dist", ".claude", ".mcp.json", "_reference"]
    );
    p(json!({"prompt": "g", "model": "claude-opus-4-6", "allowed_tools": ["Read"], "permission_mode": "bypassPermissions"})).unwrap();
    // Read-only by default on Claude Code; what the task allows is not denied.
    let a = p(json!({"prompt": "g"})).unwrap();
    assert_eq!(a.allowed_tools(), ["Read", "Glob", "Grep"]);
    assert!(a.disallowed_tools().contains(&"Bash".to_string()));
    let a = p(json!({"prompt": "g", "agent": {"allowed_tools": ["Read", "Bash"]}})).unwrap();
    assert!(!a.disallowed_tools().contains(&"Bash".to_string()));
    assert!(a.disallowed_tools().contains(&"Write".to_string()));
    let a = p(json!({"prompt": "g", "agent": {"type": "codex"}})).unwrap();
    assert!(a.allowed_tools().is_empty() && a.disallowed_tools().is_empty());
    for (bad, want) in [
        (json!({"prompt": "g", "turn_timeout": 5}), "at least 10"),
        (json!({"prompt": "g", "max_turns": 0}), "max_turns"),
        (
            json!({"prompt": "g", "model": "a", "agent": {"model": "b"}}),
            "given twice",
        ),
        (
            json!({"prompt": "g", "agent": {"type": "cursor"}}),
            "not a harness",
        ),
        (
            json!({"prompt": "g", "agent": {"plugins": []}}),
            "unknown field",
        ),
        (
            json!({"prompt": "g", "verdict_channel": "x"}),
            "verdict_channel",
        ),
    ] {
        let err = p(bad.clone()).expect_err(&bad.to_string());
        assert!(err.contains(want), "{bad}: {err}");
    }
}

#[test]
fn verdict_from_a_tool_call_or_the_final_text() {
    let call = |name: &str, input: &str| StampedEvent {
        line: 0,
        stamp_us: 0,
        event: Event::ToolCallStarted {
            call_id: "c".into(),
            name: name.into(),
            input_json: input.into(),
            parent_call_id: None,
        },
    };
    let run = JudgeRun {
        trajectory: vec![
            call("Read", r#"{"file_path":"a"}"#),
            call(
                "mcp__coder_eval_judge__submit_verdict",
                r#"{"score":0.4,"rationale":"r"}"#,
            ),
        ],
        final_text: Some(r#"{"score": 0.9, "rationale": "text"}"#.into()),
        ..JudgeRun::default()
    };
    assert_eq!(find_verdict(&run).unwrap()["score"], 0.4);
    let run = JudgeRun {
        final_text: Some(
            "I read main.py {not json}. Verdict:\n{\"score\": 0.75, \"rationale\": \"ok\", \"findings\": [\"a {b}\"]}\n"
                .into(),
        ),
        ..JudgeRun::default()
    };
    assert_eq!(find_verdict(&run).unwrap()["score"], 0.75);
    let run = JudgeRun {
        final_text: Some("no verdict here {\"a\": 1}".into()),
        ..JudgeRun::default()
    };
    assert!(find_verdict(&run).is_none());
}

#[test]
fn the_copy_leaves_out_planted_settings() {
    let from = criteria_common::scratch_workspace("judge-copy-from");
    let to = criteria_common::scratch_workspace("judge-copy-to").join("ws");
    std::fs::create_dir_all(from.join(".claude")).unwrap();
    std::fs::write(from.join(".claude/settings.json"), "{}").unwrap();
    std::fs::write(from.join(".mcp.json"), "{}").unwrap();
    std::fs::create_dir_all(from.join("src")).unwrap();
    std::fs::write(from.join("src/a.py"), "x").unwrap();
    std::os::unix::fs::symlink("/etc/passwd", from.join("link")).unwrap();
    let a = p(json!({"prompt": "g"})).unwrap();
    copy_tree(&from, &to, &a.ignore_patterns()).unwrap();
    assert!(to.join("src/a.py").is_file());
    assert!(!to.join(".claude").exists() && !to.join(".mcp.json").exists());
    assert!(
        to.join("link")
            .symlink_metadata()
            .unwrap()
            .file_type()
            .is_symlink()
    );
}
