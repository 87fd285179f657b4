//! Every reducer (Claude Code, Codex, Pi, OpenCode, Gemini CLI) against arbitrary and
//! mutated real stream lines, through the host's runtime exactly as `replay` runs it:
//! a reducer never traps (a trap would be a `reducer_error` in the record), whatever the
//! CLI writes. The lines come from the recorded corpus (`tests/corpus`); mutations are
//! JSON-aware (a value anywhere replaced by null, a wrong type, an extreme number, a huge
//! string) as well as byte-level (cut, flip, splice). Bounded for CI (`PROPTEST_CASES`
//! raises the count: see the README); failures proptest finds are kept in
//! `tests/proptest-regressions/fuzz_reducers.txt` (committed) and replayed first.

use crate::support::scratch;
use coder_eval::turn::replay::{ReplayOptions, replay};
use proptest::prelude::*;
use serde_json::Value;
use std::collections::BTreeMap;

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

/// The harnesses and the corpus folders of their captures.
const HARNESSES: &[(&str, &[&str])] = &[
    (
        "claude-code",
        &["live/claude", "public/claude-code", "field2/claude-code"],
    ),
    ("codex", &["live/codex", "public/codex", "field2/codex"]),
    ("pi", &["live/pi", "public/pi", "field2/pi"]),
    (
        "opencode",
        &["live/opencode", "public/opencode", "field2/opencode"],
    ),
    ("gemini-cli", &["live/gemini", "public/gemini-cli"]),
    ("qwen-code", &["live/qwen"]),
    ("kilo", &["live/kilo"]),
    ("cline", &["live/cline"]),
    ("copilot", &["live/copilot"]),
    ("letta", &["live/letta"]),
    ("grok-cli", &["live/grok"]),
];

/// The harnesses whose recordings hold fewer distinct lines than the rest: grok-cli's four
/// transcripts have 17 (one chat message a line, nothing else).
const FEW_LINES: &[&str] = &["grok-cli"];

/// Every distinct stdout line of a harness's captures.
fn real_lines(harness: &str) -> &'static [Vec<u8>] {
    static LINES: OnceLock<BTreeMap<&'static str, Vec<Vec<u8>>>> = OnceLock::new();
    let all = LINES.get_or_init(|| {
        HARNESSES
            .iter()
            .map(|&(name, dirs)| {
                let mut lines: Vec<Vec<u8>> = dirs
                    .iter()
                    .flat_map(|dir| crate::support::captures(dir))
                    .flat_map(|path| {
                        let bytes = std::fs::read(&path).unwrap();
                        bytes
                            .split(|&b| b == b'\n')
                            .filter(|l| !l.is_empty())
                            .map(<[u8]>::to_vec)
                            .collect::<Vec<_>>()
                    })
                    .collect();
                lines.sort();
                lines.dedup();
                let least = if FEW_LINES.contains(&name) { 15 } else { 20 };
                assert!(lines.len() > least, "{name}: too few corpus lines");
                (name, lines)
            })
            .collect()
    });
    &all[harness]
}

/// A replacement for a JSON value: what a CLI update or a broken stream might put there.
fn odd_value(pick: u32, rng: u64) -> Value {
    match pick % 12 {
        0 => Value::Null,
        1 => Value::from(-1),
        2 => Value::from(u64::MAX),
        3 => serde_json::json!(1e308),
        4 => Value::from(""),
        5 => Value::from("x".repeat((rng % 70_000) as usize)),
        6 => serde_json::json!([]),
        7 => serde_json::json!({}),
        8 => Value::Bool(rng.is_multiple_of(2)),
        9 => Value::from(i64::MIN),
        10 => Value::from("\u{0}\u{ffff}\u{1F600}"),
        _ => serde_json::json!([null, {"type": null}]),
    }
}

/// Replaces the value at a random path of `v` (chosen by `path`) with `odd`.
fn mutate_json(v: &mut Value, path: &[u32], odd: Value) {
    let Some((&step, rest)) = path.split_first() else {
        *v = odd;
        return;
    };
    let child = match v {
        Value::Object(map) if !map.is_empty() => {
            let key = map.keys().nth(step as usize % map.len()).unwrap().clone();
            map.get_mut(&key)
        }
        Value::Array(items) if !items.is_empty() => {
            let i = step as usize % items.len();
            items.get_mut(i)
        }
        _ => None,
    };
    match child {
        Some(child) => mutate_json(child, rest, odd),
        None => *v = odd,
    }
}

/// One line given to a reducer.
#[derive(Debug, Clone)]
enum Line {
    /// A real line (by index).
    Real(usize),
    /// A real line with a value somewhere replaced.
    Json {
        line: usize,
        path: Vec<u32>,
        pick: u32,
        rng: u64,
    },
    /// A real line with a key dropped.
    Drop { line: usize, path: Vec<u32> },
    /// A real line cut at a byte.
    Cut { line: usize, at: usize },
    /// A real line with bytes overwritten at a point.
    Splice {
        line: usize,
        at: usize,
        bytes: Vec<u8>,
    },
    /// Arbitrary bytes.
    Bytes(Vec<u8>),
}

fn render(harness: &str, line: &Line) -> Vec<u8> {
    let real = real_lines(harness);
    let pick = |i: usize| real[i % real.len()].clone();
    match line {
        Line::Real(i) => pick(*i),
        Line::Json {
            line,
            path,
            pick: p,
            rng,
        } => {
            let raw = pick(*line);
            match serde_json::from_slice::<Value>(&raw) {
                Ok(mut v) => {
                    mutate_json(&mut v, path, odd_value(*p, *rng));
                    serde_json::to_vec(&v).unwrap()
                }
                Err(_) => raw,
            }
        }
        Line::Drop { line, path } => {
            let raw = pick(*line);
            match serde_json::from_slice::<Value>(&raw) {
                Ok(mut v) => {
                    drop_key(&mut v, path);
                    serde_json::to_vec(&v).unwrap()
                }
                Err(_) => raw,
            }
        }
        Line::Cut { line, at } => {
            let mut raw = pick(*line);
            raw.truncate(at % (raw.len() + 1));
            raw
        }
        Line::Splice { line, at, bytes } => {
            let mut raw = pick(*line);
            let at = at % (raw.len() + 1);
            raw.splice(at..(at + bytes.len()).min(raw.len()), bytes.iter().copied());
            raw.retain(|&b| b != b'\n');
            raw
        }
        Line::Bytes(bytes) => bytes.iter().copied().filter(|&b| b != b'\n').collect(),
    }
}

/// Removes one key somewhere along `path`.
fn drop_key(v: &mut Value, path: &[u32]) {
    let mut node = v;
    for (depth, &step) in path.iter().enumerate() {
        match node {
            Value::Object(map) if !map.is_empty() => {
                let key = map.keys().nth(step as usize % map.len()).unwrap().clone();
                if depth + 1 == path.len() || !map[&key].is_object() && !map[&key].is_array() {
                    map.shift_remove(&key);
                    return;
                }
                node = map.get_mut(&key).unwrap();
            }
            Value::Array(items) if !items.is_empty() => {
                let i = step as usize % items.len();
                node = &mut items[i];
            }
            _ => return,
        }
    }
}

fn line() -> impl Strategy<Value = Line> {
    let path = || prop::collection::vec(any::<u32>(), 0..6);
    prop_oneof![
        3 => any::<usize>().prop_map(Line::Real),
        6 => (any::<usize>(), path(), any::<u32>(), any::<u64>())
            .prop_map(|(line, path, pick, rng)| Line::Json { line, path, pick, rng }),
        2 => (any::<usize>(), path()).prop_map(|(line, path)| Line::Drop { line, path }),
        1 => (any::<usize>(), any::<usize>()).prop_map(|(line, at)| Line::Cut { line, at }),
        1 => (any::<usize>(), any::<usize>(), prop::collection::vec(any::<u8>(), 1..16))
            .prop_map(|(line, at, bytes)| Line::Splice { line, at, bytes }),
        1 => prop::collection::vec(any::<u8>(), 0..256).prop_map(Line::Bytes),
    ]
}

/// Replays `lines` (and an unterminated `rest`) as a plain capture through `harness`'s
/// built-in reducer; fails the case when the reducer trapped.
fn check(harness: &str, lines: &[Line], rest: Option<&Line>) -> Result<(), TestCaseError> {
    static N: AtomicU64 = AtomicU64::new(0);
    let dir = scratch(&format!(
        "fuzz-{harness}-{}",
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let path = dir.join("capture.jsonl");
    let mut bytes = Vec::new();
    for line in lines {
        bytes.extend(render(harness, line));
        bytes.push(b'\n');
    }
    if let Some(rest) = rest {
        bytes.extend(render(harness, rest));
    }
    std::fs::write(&path, &bytes).unwrap();
    let record = replay(&path, &ReplayOptions::new(harness));
    let _ = std::fs::remove_dir_all(&dir);
    let record = record.map_err(|e| TestCaseError::fail(format!("replay failed: {e}")))?;
    prop_assert!(
        record.reducer_error.is_none(),
        "the {} reducer failed: {:?}\ninput:\n{}",
        harness,
        record.reducer_error,
        String::from_utf8_lossy(&bytes)
    );
    Ok(())
}

fn cases() -> ProptestConfig {
    // 48 cases of up to 10 lines per reducer keeps the five well under a minute in a debug
    // build; PROPTEST_CASES overrides it.
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(48);
    ProptestConfig {
        cases,
        failure_persistence: Some(Box::new(
            proptest::test_runner::FileFailurePersistence::SourceParallel("proptest-regressions"),
        )),
        ..ProptestConfig::default()
    }
}

macro_rules! fuzz_reducer {
    ($name:ident, $harness:literal) => {
        proptest! {
            #![proptest_config(cases())]
            #[test]
            fn $name(
                lines in prop::collection::vec(line(), 1..10),
                rest in prop::option::weighted(0.2, line()),
            ) {
                check($harness, &lines, rest.as_ref())?;
            }
        }
    };
}

fuzz_reducer!(claude_code_reducer_never_traps, "claude-code");
fuzz_reducer!(codex_reducer_never_traps, "codex");
fuzz_reducer!(pi_reducer_never_traps, "pi");
fuzz_reducer!(opencode_reducer_never_traps, "opencode");
fuzz_reducer!(gemini_cli_reducer_never_traps, "gemini-cli");
fuzz_reducer!(qwen_code_reducer_never_traps, "qwen-code");
fuzz_reducer!(kilo_reducer_never_traps, "kilo");
fuzz_reducer!(cline_reducer_never_traps, "cline");
fuzz_reducer!(copilot_reducer_never_traps, "copilot");
fuzz_reducer!(letta_reducer_never_traps, "letta");
fuzz_reducer!(grok_cli_reducer_never_traps, "grok-cli");

/// Continue's stdout is only its final reply; its reducer reads the session file, the
/// launch plan's side file. A recorded session file with a value replaced or a key dropped
/// (or cut short) never traps the reducer.
fn check_continue_session(
    file: usize,
    path: &[u32],
    pick: u32,
    rng: u64,
    how: u8,
) -> Result<(), TestCaseError> {
    const SCENARIOS: [&str; 4] = ["hello", "parallel", "tool_error", "probe_hello"];
    let scenario = SCENARIOS[file % SCENARIOS.len()];
    let capture = crate::support::corpus(&format!("live/continue/{scenario}.jsonl"));
    let raw = std::fs::read(capture.with_extension("session.json")).unwrap();
    let mut session: Value = serde_json::from_slice(&raw).unwrap();
    let bytes = match how % 3 {
        0 => {
            mutate_json(&mut session, path, odd_value(pick, rng));
            serde_json::to_vec(&session).unwrap()
        }
        1 => {
            drop_key(&mut session, path);
            serde_json::to_vec(&session).unwrap()
        }
        _ => raw[..(rng as usize % (raw.len() + 1))].to_vec(),
    };
    let options = ReplayOptions {
        side_files: vec![(
            "{{home}}/.continue/sessions/coder-eval.json".to_string(),
            Some(bytes),
        )],
        ..ReplayOptions::new("continue")
    };
    let record = replay(&capture, &options)
        .map_err(|e| TestCaseError::fail(format!("replay failed: {e}")))?;
    prop_assert!(
        record.reducer_error.is_none(),
        "the continue reducer failed: {:?}",
        record.reducer_error
    );
    Ok(())
}

proptest! {
    #![proptest_config(cases())]
    #[test]
    fn continue_session_file_never_traps(
        file in any::<usize>(),
        path in prop::collection::vec(any::<u32>(), 0..8),
        pick in any::<u32>(),
        rng in any::<u64>(),
        how in any::<u8>(),
    ) {
        check_continue_session(file, &path, pick, rng, how)?;
    }
}

/// The corpus lines themselves reduce without a trap (the base the mutations start from).
#[test]
fn every_corpus_line_alone_reduces() {
    for &(harness, _) in HARNESSES {
        let lines: Vec<Line> = (0..real_lines(harness).len()).map(Line::Real).collect();
        check(harness, &lines, None).unwrap();
    }
}
