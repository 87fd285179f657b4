//! The replay reads on one thread, reduces on a second and collects on the calling one,
//! handing items over in batches of 256 items or 256 KiB of lines: what the record says of
//! each item stays where the recording put it, across batch boundaries too (a stop or held
//! call between two lines, a line over the cap, a reducer failing mid-stream, an
//! unreadable recording line). And `replay --json` writes the record's long lists on two
//! threads: the same bytes as the library's record printed plainly.

use crate::support::{bin, corpus, scratch, test_component};
use coder_eval::Event;
use coder_eval::results::{StampedEvent, TurnRecord, TurnStatus};
use coder_eval::turn::replay::{ReplayOptions, replay, replay_with_trajectory};
use std::path::PathBuf;

/// The recorded Claude Code `hello` stream made long: its `init` line, its body (two
/// tool-using model calls, 5 lines) repeated `copies` times with fresh message and tool
/// ids, then its closing message and result.
fn long_session(copies: usize) -> Vec<String> {
    let hello = std::fs::read_to_string(corpus("live/claude/hello.jsonl")).unwrap();
    let lines: Vec<&str> = hello.lines().collect();
    assert_eq!(lines.len(), 8, "hello.jsonl changed shape");
    let mut out = vec![lines[0].to_string()];
    for copy in 0..copies {
        for line in &lines[1..6] {
            out.push(
                line.replace("msg_mock_", &format!("msg_c{copy}_"))
                    .replace("toolu_mock_", &format!("toolu_c{copy}_")),
            );
        }
    }
    out.extend(lines[6..].iter().map(|l| l.to_string()));
    out
}

/// Tool calls begun in `lines` (each `tool_use` block starts one).
fn tool_uses(lines: &[String]) -> usize {
    lines
        .iter()
        .map(|l| l.matches(r#""type":"tool_use""#).count())
        .sum()
}

/// A recording of `lines` (one `out` record each, the n-th at n ms) with `extra` records
/// after line `after` (1-based; 0 = before the first), then the exit.
fn recording(name: &str, lines: &[String], after: usize, extra: &[String]) -> PathBuf {
    let mut text = String::from(
        r#"{"format":"coder-eval-recording","version":1,"harness":"claude-code","argv":["claude"]}"#,
    );
    text.push('\n');
    let put_extra = |text: &mut String| {
        for record in extra {
            text.push_str(record);
            text.push('\n');
        }
    };
    if after == 0 {
        put_extra(&mut text);
    }
    for (i, line) in lines.iter().enumerate() {
        let n = i as u64 + 1;
        text.push_str(&serde_json::json!({"t": "out", "us": n * 1000, "text": line}).to_string());
        text.push('\n');
        if i + 1 == after {
            put_extra(&mut text);
        }
    }
    text.push_str(&format!(
        r#"{{"t":"exit","us":{},"code":0}}"#,
        (lines.len() as u64 + 1) * 1000
    ));
    text.push('\n');
    let path = scratch(name).join("recording.jsonl");
    std::fs::write(&path, text).unwrap();
    path
}

/// The last stdout line whose events count (in the trajectory: past the cut it keeps only
/// diagnostics).
fn last_counted_line(trajectory: &[StampedEvent]) -> u64 {
    trajectory
        .iter()
        .filter(|e| !matches!(e.event, Event::Diagnostic { .. }))
        .map(|e| e.line)
        .max()
        .unwrap_or(0)
}

fn kinds(record: &TurnRecord) -> Vec<&str> {
    record.diagnostics.iter().map(|d| d.kind.as_str()).collect()
}

/// A stop record between two lines freezes the turn there, wherever the batches of the
/// hand-over fall: at the end of the first batch, at the start of the second, just past it.
#[test]
fn a_stop_between_lines_freezes_at_its_place_across_batch_boundaries() {
    let lines = long_session(250);
    assert!(lines.len() > 4 * 256, "several batches");
    for after in [255, 256, 257, 700] {
        let r = stopped_after("stop", &lines, after);
        // Every line ends the turn where the host stopped it.
        assert_eq!(r.timing.turn_duration_ms, after as u64);
    }
}

/// Replays `lines` with a `turn_timeout` stop record after line `after` (1-based), and
/// checks the turn froze exactly there: line `after` counts, the next does not, and every
/// line still counts as read. Returns the record.
fn stopped_after(name: &str, lines: &[String], after: usize) -> TurnRecord {
    let stop = format!(
        r#"{{"t":"stop","us":{},"reason":"turn_timeout"}}"#,
        after as u64 * 1000 + 500
    );
    let path = recording(&format!("{name}-{after}"), lines, after, &[stop]);
    let (r, trajectory) =
        replay_with_trajectory(&path, &ReplayOptions::new("claude-code")).unwrap();
    assert_eq!(r.final_status, TurnStatus::Timeout, "after {after}");
    assert_eq!(
        last_counted_line(&trajectory),
        after as u64,
        "after {after}"
    );
    assert_eq!(
        r.tool_calls.len(),
        tool_uses(&lines[..after]),
        "the tool calls of the {after} lines before the stop"
    );
    assert_eq!(r.stdout_lines, lines.len() as u64);
    r
}

/// Long lines close a batch by size (256 KiB) before it has 256 items: a stop still
/// freezes the turn exactly at its place, whether the batches around it hold one line or
/// several.
#[test]
fn a_stop_between_long_lines_freezes_at_its_place() {
    // Each command prints 100 KB: three results fill a batch, with the model calls'
    // lines between them.
    let pad = "x".repeat(100_000);
    let lines: Vec<String> = long_session(40)
        .into_iter()
        .map(|line| {
            line.replace(
                r#""content":"Sun Nov 29 18:21:39 UTC 2026""#,
                &format!(r#""content":"Sun Nov 29 18:21:39 UTC 2026 {pad}""#),
            )
        })
        .collect();
    assert!(lines.iter().filter(|l| l.len() > 100_000).count() >= 40);
    for after in [1, 7, 8, 9, 100, 150] {
        stopped_after("long-stop", &lines, after);
    }
}

/// `coder-eval replay --json` (the record's lists written in segments of 256 on two
/// threads) prints exactly what the library's record gives through
/// `serde_json::to_string_pretty`, for lists shorter than a segment, one past it, and
/// several segments long.
#[test]
fn replay_json_prints_the_records_pretty_json_byte_for_byte() {
    for copies in [3, 129, 700] {
        let dir = scratch(&format!("print-{copies}"));
        let capture = dir.join("capture.jsonl");
        std::fs::write(&capture, long_session(copies).join("\n") + "\n").unwrap();
        let printed = std::process::Command::new(bin())
            .args(["replay", "--harness", "claude-code", "--json"])
            .arg(&capture)
            .output()
            .unwrap();
        assert!(printed.status.success(), "{printed:?}");
        let record = replay(&capture, &ReplayOptions::new("claude-code")).unwrap();
        assert_eq!(record.tool_calls.len(), copies * 2);
        let expected = serde_json::to_string_pretty(&record).unwrap() + "\n";
        let printed = String::from_utf8(printed.stdout).unwrap();
        assert!(
            printed == expected,
            "{copies} copies: the printed record differs from the library's (first at byte {})",
            printed
                .bytes()
                .zip(expected.bytes())
                .position(|(a, b)| a != b)
                .unwrap_or(printed.len().min(expected.len()))
        );
    }
}

/// A held call between two lines (the scripted model held call N + 1) fires the cap at
/// its place among the lines, past the first batch boundaries.
#[test]
fn a_held_call_between_lines_fires_at_its_place_in_a_long_stream() {
    let lines = long_session(200);
    // 1 init line + 120 copies of 5 lines: 240 model calls shown, in 601 lines.
    let after = 601;
    let calls_before = 240;
    let held = format!(
        r#"{{"t":"call","us":{},"turn":{calls_before}}}"#,
        after as u64 * 1000 + 500
    );
    let path = recording("held", &lines, after, &[held]);
    let (r, trajectory) =
        replay_with_trajectory(&path, &ReplayOptions::new("claude-code")).unwrap();
    assert_eq!(r.final_status, TurnStatus::MaxTurnsExhausted);
    assert_eq!(last_counted_line(&trajectory), after as u64);
    assert_eq!(r.num_turns, calls_before + 1, "the held call counts");
    assert_eq!(r.tool_calls.len(), tool_uses(&lines[..after]));
    assert!(
        r.tool_calls.len() < tool_uses(&lines),
        "later lines did not count"
    );
}

/// A reducer failing mid-stream (the test `late-panicker`, which reduces as Claude Code's
/// until a line holds `PANIC`) past the first batch, between lines over the cap and an
/// unreadable recording line: the turn keeps what came before, and every diagnostic is
/// at its line, in the order the collector gives them (the unreadable line's first).
#[test]
fn a_reducer_failing_mid_stream_and_lines_over_the_cap_keep_their_places() {
    let mut lines = long_session(60);
    let before = lines.len() - 2; // init + 60 copies: 301 lines, reduced
    let tail = lines.split_off(before);
    let too_large = format!(r#"{{"type":"x","pad":"{}"}}"#, "a".repeat(5000));
    lines.push(too_large.clone()); // line 302: over the cap
    lines.push(r#"{"type":"assistant","PANIC":true}"#.to_string()); // 303: the reducer fails
    lines.push(too_large); // 304: over the cap, after the failure
    lines.extend(tail); // 305-306: not reduced
    let path = recording(
        "mid-stream",
        &lines,
        302,
        &["not json at all".to_string()], // file line 304 (after the header and 302 lines)
    );
    let mut options = ReplayOptions::new("claude-code");
    options.max_line_bytes = 4096;
    options.components.overrides.insert(
        "claude-code".to_string(),
        test_component("test_late_panicker.wasm"),
    );
    let (r, trajectory) = replay_with_trajectory(&path, &options).unwrap();
    assert_eq!(
        last_counted_line(&trajectory),
        before as u64,
        "the last line reduced"
    );
    // The unreadable line leads (a diagnostic about the input as a whole), then the
    // lines' own, in stream order.
    assert_eq!(
        kinds(&r),
        [
            "recording_unreadable",
            "line_too_large",
            "reducer_failed",
            "line_too_large"
        ]
    );
    let at: Vec<u64> = r.diagnostics.iter().map(|d| d.line).collect();
    assert_eq!(
        at,
        [304, 302, 303, 304],
        "the bad one's file line, then out lines"
    );
    assert!(r.diagnostics[1].message.contains("5021 bytes"));
    let error = r.reducer_error.as_ref().expect("the reducer failed");
    assert_eq!(error.line, Some(303));
    assert!(
        error.message.contains("panicked on purpose"),
        "{}",
        error.message
    );
    // What came before the failure is kept; nothing after it was reduced.
    assert_eq!(r.tool_calls.len(), tool_uses(&lines[..before]));
    assert!(r.tool_calls.len() > 100);
    assert_eq!(r.final_status, TurnStatus::ReducerFailed);
    assert_eq!(r.stdout_lines, lines.len() as u64);
}

/// A recording given as a pipe (`/dev/stdin`, `<(…)`) replays as the file does: the
/// header, read first, is not lost to the replay's own read.
#[test]
fn a_recording_through_a_pipe_replays_as_the_file() {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let file = crate::support::root().join("tests/corpus/live/claude/bg2-2.1.332.recording.jsonl");
    let direct = Command::new(crate::support::bin())
        .args(["replay", "--json"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(direct.status.success(), "{direct:?}");
    let mut child = Command::new(crate::support::bin())
        .args(["replay", "--json", "/dev/stdin"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let bytes = std::fs::read(&file).unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let feeder = std::thread::spawn(move || stdin.write_all(&bytes));
    let piped = child.wait_with_output().unwrap();
    feeder.join().unwrap().unwrap();
    assert!(
        piped.status.success(),
        "{}",
        String::from_utf8_lossy(&piped.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&piped.stdout),
        String::from_utf8_lossy(&direct.stdout)
    );
}

/// Stdout that cannot take the record: a closed pipe (`| head`) ends the replay quietly
/// with 0, a full disk (`/dev/full`) with the error on stderr and exit 3 (the output is
/// incomplete), never a panic.
#[test]
fn replay_json_to_a_closed_pipe_or_a_full_disk() {
    let dir = scratch("print-failing");
    let capture = dir.join("capture.jsonl");
    std::fs::write(&capture, long_session(700).join("\n") + "\n").unwrap();
    let mut child = std::process::Command::new(bin())
        .args(["replay", "--harness", "claude-code", "--json"])
        .arg(&capture)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let closed = child.wait_with_output().unwrap();
    assert_eq!(closed.status.code(), Some(0), "{closed:?}");
    assert_eq!(String::from_utf8_lossy(&closed.stderr), "");
    let full = std::process::Command::new(bin())
        .args(["replay", "--harness", "claude-code", "--json"])
        .arg(&capture)
        .stdout(
            std::fs::OpenOptions::new()
                .write(true)
                .open("/dev/full")
                .unwrap(),
        )
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&full.stderr);
    assert_eq!(full.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains("could not write the output to stdout") && !stderr.contains("panicked"),
        "{stderr}"
    );
}
