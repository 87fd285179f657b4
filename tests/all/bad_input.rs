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
