//! Writing a turn record as pretty JSON (`replay --json`) on two threads, byte for byte
//! what `serde_json::to_writer_pretty` writes.
//!
//! A long turn's record is mostly its three lists (`model_calls`, `messages`,
//! `tool_calls`): for a 64 MiB Claude Code capture, 44 MiB of JSON that took about 120 ms
//! to write after the last line was reduced (`cargo bench --bench replay_e2e`). Each list
//! is cut into segments of [`SEGMENT`] elements; a second thread renders every other
//! segment while the calling thread writes the others as they are serialized, then the
//! second thread's in turn. At most two rendered segments wait, so memory stays that of
//! a few hundred elements, not of the list.

use super::TurnRecord;
use serde::Serialize;
use serde_json::ser::{Formatter, PrettyFormatter};
use std::io::{self, Write};
use std::sync::mpsc::sync_channel;

/// Elements a segment holds: small enough that the waiting segments take little memory,
/// large enough that handing one over costs nothing next to rendering it.
const SEGMENT: usize = 256;

/// Writes `record` to `out` as `serde_json::to_writer_pretty` would, then a newline. The
/// record is borrowed mutably only to move its lists out while the rest is rendered (a
/// copy of the record would cost as much as the writing); they are put back at once.
/// Errors: writing to `out` failed, or serializing did (as `to_writer_pretty` would; the
/// record's types never fail), and `out` may then hold part of the text. A panic of the
/// second thread is raised again here.
pub fn write_turn_record_pretty<W: Write>(out: &mut W, record: &mut TurnRecord) -> io::Result<()> {
    let model_calls = std::mem::take(&mut record.model_calls);
    let messages = std::mem::take(&mut record.messages);
    let tool_calls = std::mem::take(&mut record.tool_calls);
    // The record without its lists: each list reads `[]`, on a line of its own.
    let skeleton = serde_json::to_vec_pretty(&*record);
    record.model_calls = model_calls;
    record.messages = messages;
    record.tool_calls = tool_calls;
    let skeleton = skeleton.map_err(io::Error::from)?;
    let model_calls_at = empty_list_at(&skeleton, "model_calls");
    let messages_at = empty_list_at(&skeleton, "messages");
    let tool_calls_at = empty_list_at(&skeleton, "tool_calls");
    out.write_all(&skeleton[..model_calls_at])?;
    write_list(out, &record.model_calls)?;
    out.write_all(&skeleton[model_calls_at + 2..messages_at])?;
    write_list(out, &record.messages)?;
    out.write_all(&skeleton[messages_at + 2..tool_calls_at])?;
    write_list(out, &record.tool_calls)?;
    out.write_all(&skeleton[tool_calls_at + 2..])?;
    out.write_all(b"\n")
}

/// Where the `[]` of the record's top-level field `key` starts in `skeleton`. A top-level
/// key is the only text that follows a newline and exactly two spaces (a nested one is
/// indented further, and a string holds no raw newline), so the match is that field.
fn empty_list_at(skeleton: &[u8], key: &str) -> usize {
    let needle = format!("\n  \"{key}\": []");
    let at = memchr::memmem::find(skeleton, needle.as_bytes())
        .expect("a turn record's pretty JSON has each list as a top-level field");
    at + needle.len() - 2
}

/// Writes `list` as the value of a top-level field: `[]`, or `[`, each element on its own
/// lines one level further in, and `]` on a line of its own. Two threads render the
/// segments when there are several.
fn write_list<W: Write, T: Serialize + Sync>(out: &mut W, list: &[T]) -> io::Result<()> {
    if list.is_empty() {
        return out.write_all(b"[]");
    }
    out.write_all(b"[")?;
    let segments: Vec<&[T]> = list.chunks(SEGMENT).collect();
    if segments.len() == 1 {
        write_elements(out, segments[0], true)?;
    } else {
        std::thread::scope(|scope| -> io::Result<()> {
            // The odd segments, rendered ahead; one waits in the channel, one is rendering.
            let (to, from) = sync_channel::<io::Result<Vec<u8>>>(1);
            let odd = &segments;
            std::thread::Builder::new()
                .name("coder-eval-print".to_string())
                .spawn_scoped(scope, move || {
                    for segment in odd.iter().skip(1).step_by(2) {
                        let mut text = Vec::new();
                        let rendered = write_elements(&mut text, segment, false).map(|()| text);
                        // A closed channel: the writing side failed and has gone.
                        if to.send(rendered).is_err() {
                            return;
                        }
                    }
                })?;
            for (i, segment) in segments.iter().enumerate() {
                if i % 2 == 0 {
                    write_elements(out, segment, i == 0)?;
                } else {
                    // The thread sends every odd segment, or has panicked: the scope then
                    // raises its panic again.
                    let Ok(text) = from.recv() else { break };
                    out.write_all(&text?)?;
                }
            }
            Ok(())
        })?;
    }
    out.write_all(b"\n  ]")
}

/// Writes `elements` of a top-level list, each after its separator (`first`: the first
/// element of the list, after `[`), two levels in.
fn write_elements<W: Write, T: Serialize>(
    out: &mut W,
    elements: &[T],
    first: bool,
) -> io::Result<()> {
    for (i, element) in elements.iter().enumerate() {
        out.write_all(if first && i == 0 {
            b"\n    "
        } else {
            b",\n    "
        })?;
        // A formatter moved two levels in, as inside a top-level field's array.
        let mut formatter = PrettyFormatter::new();
        formatter.begin_array(&mut io::sink())?;
        formatter.begin_array(&mut io::sink())?;
        let mut serializer = serde_json::Serializer::with_formatter(&mut *out, formatter);
        element
            .serialize(&mut serializer)
            .map_err(io::Error::from)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A record with every list filled, one empty, and strings that look like keys.
    fn record(tool_calls: usize) -> TurnRecord {
        let mut record: TurnRecord = serde_json::from_value(serde_json::json!({
            "record_version": 2, "harness": "h", "component": "builtin:h",
            "session_id": "\n  \"messages\": []", "cli_version": null, "model": null,
            "final_status": "completed", "num_turns": 1, "cli_num_turns": null,
            "max_turns_exhausted": false, "max_tool_calls_exhausted": false,
            "model_calls": [{"main_index": 1, "message_id": "m1", "parent_call_id": null,
                             "started_ms": 2, "generation_ms": 1}],
            "messages": [{"message_id": "m1", "parent_call_id": null,
                          "text": "  \"tool_calls\": []", "usage": null, "cost_usd": null,
                          "first_ms": 2}],
            "tool_calls": [],
            "commands": ["ls"], "usage": null, "usage_source": "none", "cost_usd": null,
            "cli_result": null,
            "timing": {"turn_duration_ms": 5, "harness_startup_ms": 2,
                       "generation_duration_ms": 1, "tool_union_ms": 0,
                       "harness_teardown_ms": 0, "tool_sum_ms": 0},
            "exit": null, "diagnostics": [], "reducer_error": null,
            "stdout_lines": 4, "stdout_bytes": 10
        }))
        .unwrap();
        let call = serde_json::json!({"call_id": "t", "name": "Bash",
            "input": {"command": "echo \"a\"", "nested": {"deep": [1, {"x": []}]}},
            "parent_call_id": null, "status": "ok", "exit_code": 0,
            "output_excerpt": "a\n", "started_ms": 3, "finished_ms": 4, "duration_ms": 1});
        record.tool_calls = (0..tool_calls)
            .map(|_| serde_json::from_value(call.clone()).unwrap())
            .collect();
        record
    }

    #[test]
    fn writes_what_to_writer_pretty_writes() {
        for tool_calls in [0, 1, 3, SEGMENT, SEGMENT + 1, 3 * SEGMENT + 7] {
            let mut record = record(tool_calls);
            let mut expected = serde_json::to_vec_pretty(&record).unwrap();
            expected.push(b'\n');
            let mut written = Vec::new();
            write_turn_record_pretty(&mut written, &mut record).unwrap();
            assert_eq!(
                String::from_utf8(written).unwrap(),
                String::from_utf8(expected).unwrap(),
                "{tool_calls} tool calls"
            );
            assert_eq!(
                record.tool_calls.len(),
                tool_calls,
                "the lists are put back"
            );
            assert_eq!(record.messages.len(), 1);
        }
    }
}
