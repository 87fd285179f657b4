//! Script loading: the recorded corpus scripts, YAML with neutral actions, and errors.

use std::time::Duration;

use coder_eval_scripted_model::{NeutralAction, Script, ScriptCall, ScriptError, ToolCallSpec};
use serde_json::json;

use crate::common::{SCRIPT, shared_dir};

#[test]
fn corpus_scripts_all_load() {
    let live = shared_dir().join("corpus/live");
    let mut loaded = 0;
    for harness in std::fs::read_dir(&live).unwrap_or_else(|e| panic!("{}: {e}", live.display())) {
        let dir = harness.unwrap().path();
        if !dir.is_dir() {
            continue;
        }
        for file in std::fs::read_dir(&dir).unwrap() {
            let path = file.unwrap().path();
            if path.to_string_lossy().ends_with(".script.json") {
                let script = Script::load(&path).unwrap_or_else(|e| panic!("{e}"));
                assert!(!script.replies.is_empty(), "{}", path.display());
                loaded += 1;
            }
        }
    }
    assert!(
        loaded >= 30,
        "only {loaded} corpus scripts found under {}",
        live.display()
    );
}

#[test]
fn codex_apply_patch_is_a_custom_call() {
    let path = shared_dir().join("corpus/live/codex/parallel.script.json");
    let script = Script::load(&path).unwrap();
    assert_eq!(script.name, "codex/parallel");
    assert!(!script.has_neutral_actions());
    let calls = &script.replies[0].tool_calls;
    assert_eq!(calls.len(), 2);
    assert!(matches!(
        &calls[0].call,
        ScriptCall::Raw(ToolCallSpec::Custom { name, input })
            if name == "apply_patch" && input.starts_with("*** Begin Patch")
    ));
    assert!(matches!(
        &calls[1].call,
        ScriptCall::Raw(ToolCallSpec::Function { name, arguments })
            if name == "exec_command" && arguments == &json!({"cmd": "echo two"})
    ));
    assert_eq!(script.after_end.text.as_deref(), Some("done"));
    assert_eq!(script.side_text, "Mock title");
}

#[test]
fn yaml_with_neutral_actions_loads() {
    let script = Script::from_str(SCRIPT, "inline.yaml", true).unwrap();
    assert_eq!(script.replies.len(), 4);
    assert!(script.has_neutral_actions());
    let r0 = &script.replies[0];
    assert_eq!(
        r0.thinking.as_deref(),
        Some("Plan: write the file, then run it.")
    );
    assert_eq!(
        r0.tool_calls[0].call,
        ScriptCall::Action(NeutralAction::WriteFile {
            path: "{{workspace}}/app.py".into(),
            content: "print('hi')\n".into()
        })
    );
    assert_eq!(script.replies[1].tool_calls.len(), 2);
    let err = script.replies[2].http_error.as_ref().unwrap();
    assert_eq!(
        (err.status, err.message.as_str(), err.times),
        (529, "overloaded", None)
    );

    let yaml = "replies:\n  - shell: {command: ls}\n    delay_s: 0.25\n  - tool_calls:\n      - shell: {command: ls}\n      - read_file: {path: a.txt}\n        id: my_id\n    delay_ms: 40\nafter_end: {text: bye}\nchunk_delay_ms: 5\n";
    let err = Script::from_str(yaml, "a.yaml", true)
        .unwrap_err()
        .to_string();
    assert!(err.contains("a.yaml") && err.contains("shell"), "{err}");
    let yaml = yaml.replace("  - shell: {command: ls}\n    delay_s", "  - delay_s");
    let script = Script::from_str(&yaml, "a.yaml", true).unwrap();
    assert_eq!(script.replies[0].delay, Duration::from_millis(250));
    assert_eq!(script.replies[1].delay, Duration::from_millis(40));
    assert_eq!(script.replies[1].tool_calls[1].id.as_deref(), Some("my_id"));
    assert_eq!(script.chunk_delay, Duration::from_millis(5));
    assert_eq!(script.reply(7).text.as_deref(), Some("bye"));
    assert_eq!(script.name, "script");
}

#[test]
fn unknown_key_names_file_and_line() {
    let dir = std::env::temp_dir().join(format!("scripted-model-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("bad.yaml");
    std::fs::write(
        &path,
        "name: bad\nreplies:\n  - text: hi\n    colour: blue\n",
    )
    .unwrap();
    let err = Script::load(&path).unwrap_err();
    assert!(matches!(err, ScriptError::Invalid { .. }));
    let msg = err.to_string();
    assert!(msg.contains(&path.display().to_string()), "{msg}");
    assert!(msg.contains("colour"), "{msg}");
    assert!(msg.contains("line 4"), "{msg}");

    // JSON too, and a key at the top level.
    let json_path = dir.join("bad.json");
    std::fs::write(&json_path, "{\n  \"name\": \"x\",\n  \"replys\": []\n}\n").unwrap();
    let msg = Script::load(&json_path).unwrap_err().to_string();
    assert!(
        msg.contains("bad.json") && msg.contains("replys") && msg.contains("line 3"),
        "{msg}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn invalid_tool_calls_are_rejected() {
    let cases = [
        (
            "replies:\n  - tool_calls:\n      - {name: X, arguments: {}, input: raw}\n",
            "not both",
        ),
        (
            "replies:\n  - tool_calls:\n      - {arguments: {a: 1}}\n",
            "needs a `name`",
        ),
        (
            "replies:\n  - tool_calls:\n      - {name: X, arguments: [1]}\n",
            "must be an object",
        ),
        (
            "replies:\n  - tool_calls:\n      - {shell: {command: ls}, name: X}\n",
            "exactly one",
        ),
        (
            "replies:\n  - tool_calls:\n      - {write_file: {path: a}}\n",
            "content",
        ),
        ("replies:\n  - http_error: {status: 200}\n", "400-599"),
        ("replies:\n  - {delay_ms: 1, delay_s: 1}\n", "not both"),
    ];
    for (yaml, needle) in cases {
        let msg = Script::from_str(yaml, "case.yaml", true)
            .unwrap_err()
            .to_string();
        assert!(
            msg.contains("case.yaml") && msg.contains(needle),
            "{yaml}: {msg}"
        );
    }
    let missing = Script::load(std::path::Path::new("/nonexistent/x.json")).unwrap_err();
    assert!(
        missing
            .to_string()
            .starts_with("cannot read script /nonexistent/x.json")
    );
}

/// A path that is no regular file is refused before it is opened: a FIFO would block the
/// load forever (no writer comes), `/dev/zero` would fill memory. So is a file past the cap.
#[test]
fn a_fifo_a_device_or_a_huge_file_is_refused_without_reading_it() {
    let dir = std::env::temp_dir().join(format!("ce-script-hostile-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let fifo = dir.join("fifo.yaml");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let huge = dir.join("huge.yaml");
    std::fs::File::create(&huge)
        .unwrap()
        .set_len(coder_eval_scripted_model::MAX_SCRIPT_BYTES + 1)
        .unwrap();
    for (path, says) in [
        (fifo.as_path(), "not a regular file"),
        (std::path::Path::new("/dev/zero"), "not a regular file"),
        (dir.as_path(), "not a regular file"),
        (huge.as_path(), "over the 16 MiB"),
    ] {
        let err = Script::load(path).unwrap_err();
        assert!(matches!(err, ScriptError::Read { .. }), "{err}");
        assert!(err.to_string().contains(says), "{}: {err}", path.display());
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
