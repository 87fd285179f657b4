//! Bad input never panics the host: each case ends as diagnostics in the record.

use crate::support::scratch;
use coder_eval::results::{TurnRecord, TurnStatus};
use coder_eval::turn::replay::{ReplayOptions, replay};

fn replay_bytes(name: &str, bytes: &[u8], options: &ReplayOptions) -> TurnRecord {
    let path = scratch(name).join("capture.jsonl");
    std::fs::write(&path, bytes).unwrap();
    let record = replay(&path, options).unwrap();
    assert!(record.reducer_error.is_none(), "{:?}", record.reducer_error);
    record
}

fn kinds(record: &TurnRecord) -> Vec<&str> {
    record.diagnostics.iter().map(|d| d.kind.as_str()).collect()
}

#[test]
fn empty_file() {
    let r = replay_bytes("empty", b"", &ReplayOptions::new("claude-code"));
    assert_eq!(r.final_status, TurnStatus::Incomplete);
    assert_eq!(r.stdout_lines, 0);
    assert!(r.diagnostics.is_empty());
}

#[test]
fn invalid_utf8_not_json_and_truncated_last_line() {
    let input = b"\xff\xfe\xfd{\"type\":\"system\"}\nchanged 265 packages in 8s\n{\"type\":\"result\",\"subtype\":\"succ";
    let r = replay_bytes("mixed", input, &ReplayOptions::new("claude-code"));
    assert_eq!(kinds(&r), ["invalid_utf8", "not_json", "truncated_line"]);
    assert_eq!(r.diagnostics[0].line, 1);
    assert_eq!(r.diagnostics[1].raw, "changed 265 packages in 8s");
    assert_eq!(r.diagnostics[2].line, 3);
    assert_eq!(r.final_status, TurnStatus::Incomplete);
}

#[test]
fn a_16_mib_line_is_reduced() {
    // A real-shaped tool result carrying 16 MiB of output: parsed, excerpt cut to 4 KiB.
    let big = "x".repeat(16 << 20);
    let input = format!(
        "{}\n{}\n",
        r#"{"type":"assistant","message":{"id":"m1","content":[{"type":"tool_use","id":"t1","name":"Read","input":{}}]},"parent_tool_use_id":null}"#,
        serde_json::json!({"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","content":big}]}})
    );
    let r = replay_bytes(
        "big-json",
        input.as_bytes(),
        &ReplayOptions::new("claude-code"),
    );
    assert_eq!(r.tool_calls[0].output_excerpt.len(), 4096);
    assert!(r.diagnostics.is_empty(), "{:?}", kinds(&r));
}

#[test]
fn a_16_mib_line_of_garbage_is_one_bounded_diagnostic() {
    let mut input = vec![b'#'; 16 << 20];
    input.push(b'\n');
    let r = replay_bytes("big-garbage", &input, &ReplayOptions::new("claude-code"));
    assert_eq!(kinds(&r), ["not_json"]);
    assert!(r.diagnostics[0].raw.len() < 70_000, "raw kept bounded");
    assert!(r.diagnostics[0].raw.contains("16777216 bytes in all"));
}

#[test]
fn a_line_over_the_cap_is_not_reduced() {
    let mut options = ReplayOptions::new("claude-code");
    options.max_line_bytes = 1 << 20;
    let mut input = b"{\"type\":\"x\",\"pad\":\"".to_vec();
    input.extend(vec![b'a'; 2 << 20]);
    input.extend(b"\"}\n{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"result\":\"ok\"}\n");
    let r = replay_bytes("over-cap", &input, &options);
    assert_eq!(kinds(&r), ["line_too_large"]);
    assert!(
        r.diagnostics[0].message.contains("2097173 bytes"),
        "{}",
        r.diagnostics[0].message
    );
    // Reading went on past it.
    assert_eq!(r.final_status, TurnStatus::Completed);
}

/// A recording (header, `out` records) of the recorded Claude Code `hello` stream with
/// `extra` records inserted after its second line; the stream ends in a success result.
fn recording_with(name: &str, extra: &[&str]) -> std::path::PathBuf {
    let hello = std::fs::read_to_string(crate::support::corpus("live/claude/hello.jsonl")).unwrap();
    let mut text = String::from(
        r#"{"format":"coder-eval-recording","version":1,"harness":"claude-code","argv":["claude"]}"#,
    );
    text.push('\n');
    for (i, line) in hello.lines().enumerate() {
        text.push_str(
            &serde_json::json!({"t": "out", "us": (i as u64 + 1) * 1000, "text": line}).to_string(),
        );
        text.push('\n');
        if i == 1 {
            for record in extra {
                text.push_str(record);
                text.push('\n');
            }
        }
    }
    text.push_str(r#"{"t":"exit","us":99000,"code":0}"#);
    text.push('\n');
    let path = scratch(name).join("recording.jsonl");
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn a_stop_record_with_an_unknown_reason_is_a_diagnostic_and_never_completed() {
    // Control: the same recording without the stop completes.
    let plain = recording_with("stop-control", &[]);
    let r = replay(&plain, &ReplayOptions::new("claude-code")).unwrap();
    assert_eq!(r.final_status, TurnStatus::Completed);
    let path = recording_with(
        "stop-unknown",
        &[r#"{"t":"stop","us":2500,"reason":"solar_flare"}"#],
    );
    let r = replay(&path, &ReplayOptions::new("claude-code")).unwrap();
    assert_ne!(r.final_status, TurnStatus::Completed);
    assert_eq!(r.final_status, TurnStatus::Incomplete);
    let d = r
        .diagnostics
        .iter()
        .find(|d| d.kind == "unknown_stop_reason")
        .unwrap_or_else(|| panic!("{:?}", kinds(&r)));
    assert!(d.message.contains("solar_flare"), "{}", d.message);
    assert_eq!(d.line, 4, "the recording's file line");
    assert_eq!(d.at_ms, 2);
    // The turn ends where the host stopped it: what came after is not counted.
    assert_eq!(r.timing.turn_duration_ms, 2);
}

#[test]
fn an_unreadable_recording_line_keeps_its_text_and_stamp() {
    let path = recording_with(
        "unreadable-line",
        &[r#"{"t":"out","us":2500,"bogus":true}"#, "not json at all"],
    );
    let r = replay(&path, &ReplayOptions::new("claude-code")).unwrap();
    let unreadable: Vec<_> = r
        .diagnostics
        .iter()
        .filter(|d| d.kind == "recording_unreadable")
        .collect();
    assert_eq!(unreadable.len(), 2, "{:?}", kinds(&r));
    assert_eq!(unreadable[0].line, 4);
    assert_eq!(unreadable[0].at_ms, 2);
    assert_eq!(unreadable[0].raw, r#"{"t":"out","us":2500,"bogus":true}"#);
    assert_eq!(unreadable[1].line, 5);
    assert_eq!(unreadable[1].raw, "not json at all");
    // Reading went on: the stream still completes.
    assert_eq!(r.final_status, TurnStatus::Completed);
}
