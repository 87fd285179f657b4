//! Replay throughput: the Claude Code reducer as a sandboxed WASM component (through the
//! host's runtime, sandbox and epoch deadline and all; harness components run without
//! fuel) against the same reducer code compiled natively
//! into this benchmark, over one large synthetic stream built from the real recordings.
//!
//! `cargo bench --bench replay` prints MB/s for both and the ratio. Target: WASM ≥ 0.5×
//! native. `REPLAY_BENCH_COMPONENT=PATH` measures another build of the component (an
//! unstripped one for `perf`, with `CODER_EVAL_PROFILE=perfmap`) instead of the embedded one.

use claude_code_harness::ClaudeReducer;
use coder_eval::components::ComponentSource;
use coder_eval::runtime::harness::Reducer as WasmReducer;
use harness_kit::{Reducer, ReducerConfig};
use std::path::Path;
use std::time::{Duration, Instant};

/// Size of the synthetic stream.
const TARGET_BYTES: usize = 64 << 20;

fn synthetic_stream() -> Vec<Vec<u8>> {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus");
    let mut lines: Vec<Vec<u8>> = Vec::new();
    for dir in ["live/claude", "public/claude-code"] {
        let mut files: Vec<_> = std::fs::read_dir(corpus.join(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| {
                p.extension().is_some_and(|e| e == "jsonl")
                    && !p.to_string_lossy().contains("requests")
            })
            .collect();
        files.sort();
        for file in files {
            let text = std::fs::read(&file).unwrap();
            lines.extend(
                text.split(|&b| b == b'\n')
                    .filter(|l| !l.is_empty())
                    .map(<[u8]>::to_vec),
            );
        }
    }
    // Repeat with fresh ids per copy, so the stream is a long run of distinct messages
    // and tool calls rather than the same few over and over.
    let mut out = Vec::new();
    let mut bytes = 0;
    let mut copy = 0usize;
    while bytes < TARGET_BYTES {
        let tag = format!("_c{copy}");
        for line in &lines {
            let text = String::from_utf8_lossy(line)
                .replace("msg_mock_", &format!("msg{tag}_"))
                .replace("toolu_mock_", &format!("toolu{tag}_"));
            bytes += text.len() + 1;
            out.push(text.into_bytes());
        }
        copy += 1;
    }
    out
}

fn best_of<F: FnMut() -> usize>(runs: usize, mut f: F) -> (Duration, usize) {
    let mut best = Duration::MAX;
    let mut events = 0;
    for _ in 0..runs {
        let start = Instant::now();
        events = f();
        best = best.min(start.elapsed());
    }
    (best, events)
}

fn main() {
    let lines = synthetic_stream();
    let total: usize = lines.iter().map(|l| l.len() + 1).sum();
    let mb = total as f64 / (1024.0 * 1024.0);
    println!("synthetic stream: {} lines, {mb:.1} MiB", lines.len());

    let (native, native_events) = best_of(3, || {
        let mut r = ClaudeReducer::new(ReducerConfig::default());
        let mut n = 0;
        for (i, line) in lines.iter().enumerate() {
            n += r.feed(line, i as u64 * 1000).len();
        }
        n + r.finish(None).len()
    });

    let mut source = ComponentSource::default();
    if let Some(path) = std::env::var_os("REPLAY_BENCH_COMPONENT") {
        source.overrides.insert("claude-code".into(), path.into());
    }
    let loaded = source.harness("claude-code").unwrap();
    let (wasm, wasm_events) = best_of(3, || {
        let mut r = WasmReducer::new(&loaded, ReducerConfig::default()).unwrap();
        let mut n = 0;
        for (i, line) in lines.iter().enumerate() {
            n += r.feed(line, i as u64 * 1000).unwrap().len();
        }
        n + r.finish(None).unwrap().len()
    });
    assert_eq!(
        native_events, wasm_events,
        "both reducers must emit the same events"
    );

    let native_rate = mb / native.as_secs_f64();
    let wasm_rate = mb / wasm.as_secs_f64();
    println!(
        "native reducer: {native_rate:8.1} MB/s ({:.0} ms, {native_events} events)",
        native.as_secs_f64() * 1e3
    );
    println!(
        "wasm reducer:   {wasm_rate:8.1} MB/s ({:.0} ms, {wasm_events} events)",
        wasm.as_secs_f64() * 1e3
    );
    let ratio = wasm_rate / native_rate;
    println!("ratio wasm/native: {ratio:.2}x (target >= 0.50x)");
    // Checked at the end, after every figure is printed.
    let missed = ratio < 0.5;

    // The fixed cost of one `feed` across the component boundary, apart from parsing:
    // the same number of calls, each with a blank line (which the reducer skips).
    let (calls, _) = best_of(3, || {
        let mut r = WasmReducer::new(&loaded, ReducerConfig::default()).unwrap();
        for i in 0..lines.len() {
            r.feed(b"", i as u64 * 1000).unwrap();
        }
        0
    });
    println!(
        "of which the call boundary: {:.2} us per line, {:.0} ms in all ({:.0}% of the wasm time)",
        calls.as_secs_f64() * 1e6 / lines.len() as f64,
        calls.as_secs_f64() * 1e3,
        calls.as_secs_f64() / wasm.as_secs_f64() * 100.0
    );
    if missed {
        println!("FAIL: wasm/native {ratio:.2}x is under the 0.50x target");
        std::process::exit(1);
    }
    println!("PASS: wasm/native {ratio:.2}x >= 0.50x");
}
