//! A grader that reports, in its verdict's details (a JSON object), what its sandbox
//! shows it, so the host's tests can hold the sandbox to its promises:
//!
//! - `wall_ns`, `std_wall_ns`: the wall clock (WASI and `SystemTime`), ns since the epoch;
//! - `monotonic_ns`, `monotonic_after_ns`: the monotonic clock before and after burning
//!   fuel, and `std_elapsed_ns`, an `Instant`'s elapsed time across the same work;
//! - `random`, `insecure_random`: 16 bytes of each WASI randomness, hex;
//! - `calls`: how many times this instance's `grade` ran (a static counter);
//! - `burned`: the loop iterations run (`params.burn`, default 0), to use fuel on demand.

use grader_kit::{Criterion, GradingInput, Verdict};
use serde_json::{Value, json};
use std::sync::atomic::{AtomicU64, Ordering};

static CALLS: AtomicU64 = AtomicU64::new(0);

pub struct Probe;

#[cfg(target_arch = "wasm32")]
fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Runs `n` iterations of work the optimizer cannot remove.
fn burn(n: u64) -> u64 {
    let mut x: u64 = 1;
    for i in 0..n {
        x = std::hint::black_box(x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(i));
    }
    x
}

#[cfg(target_arch = "wasm32")]
fn sandbox_view(n: u64) -> serde_json::Map<String, Value> {
    use wasip2::clocks::{monotonic_clock, wall_clock};
    let mut report = serde_json::Map::new();
    let wall = wall_clock::now();
    report.insert(
        "wall_ns".into(),
        json!(u128::from(wall.seconds) * 1_000_000_000 + u128::from(wall.nanoseconds)),
    );
    let std_wall = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(u128::MAX, |d| d.as_nanos());
    report.insert("std_wall_ns".into(), json!(std_wall));
    let started = std::time::Instant::now();
    report.insert("monotonic_ns".into(), json!(monotonic_clock::now()));
    let result = burn(n);
    report.insert("monotonic_after_ns".into(), json!(monotonic_clock::now()));
    report.insert("std_elapsed_ns".into(), json!(started.elapsed().as_nanos()));
    report.insert("burned".into(), json!(n));
    report.insert("burn_result".into(), json!(result));
    report.insert(
        "random".into(),
        json!(hex(&wasip2::random::random::get_random_bytes(16))),
    );
    report.insert(
        "insecure_random".into(),
        json!(hex(&wasip2::random::insecure::get_insecure_random_bytes(
            16
        ))),
    );
    report
}

#[cfg(not(target_arch = "wasm32"))]
fn sandbox_view(n: u64) -> serde_json::Map<String, Value> {
    let mut report = serde_json::Map::new();
    report.insert("burned".into(), json!(n));
    report.insert("burn_result".into(), json!(burn(n)));
    report
}

impl Criterion for Probe {
    fn grade(input: &GradingInput) -> Result<Verdict, String> {
        let calls = CALLS.fetch_add(1, Ordering::SeqCst) + 1;
        let n = input
            .params
            .get("burn")
            .and_then(Value::as_u64)
            .unwrap_or(0);
        let mut report = sandbox_view(n);
        report.insert("calls".into(), json!(calls));
        Ok(Verdict::pass(Value::Object(report).to_string()))
    }
}

grader_kit::export_grader!(Probe);
