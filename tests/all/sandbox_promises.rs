//! The sandbox's promises (`runtime/mod.rs`), each held by a test that fails when it
//! breaks: frozen clocks, seeded randomness, a fresh instance per grader call, imports
//! the world does not grant refused, and a component built against an events version the
//! host does not speak refused naming it. The probes are test components
//! (`components/test-components/`): `grader-probe` reports what it sees,
//! `forbidden-import` and `wrong-events` are built against contracts the host must refuse.
//! (A reducer's CPU bound, its deadline, is held by `sandbox.rs`.)

use crate::support::{scratch, test_component};
use coder_eval::grading::{CriterionSpec, GradeContext, grade_all};
use coder_eval::results::CriterionResult;
use serde_json::{Value, json};

fn component(file: &str, params: Value) -> CriterionSpec {
    let path = test_component(file);
    assert!(
        path.exists(),
        "{} is missing (host/build.rs builds it)",
        path.display()
    );
    CriterionSpec::new(
        "component",
        json!({"component": path.to_str().unwrap(), "params": params}),
    )
    .unwrap()
}

async fn grade(criteria: &[CriterionSpec]) -> Vec<CriterionResult> {
    let ws = scratch("sandbox-promises").join("workspace");
    std::fs::create_dir_all(&ws).unwrap();
    let ctx = GradeContext::new(&ws, &ws, &[], "probe the sandbox", None);
    grade_all(criteria, &ctx).await
}

/// The probe's report (its verdict's details).
fn report(result: &CriterionResult) -> Value {
    assert!(result.error.is_none(), "the probe failed: {result:?}");
    serde_json::from_str(&result.details).unwrap_or_else(|e| panic!("{e}: {}", result.details))
}

#[tokio::test]
async fn a_component_sees_frozen_clocks() {
    // The probe reads both clocks before and after 20 M loop iterations (milliseconds of
    // real time): they must not move, and the wall clock must be the epoch.
    let results = grade(&[component(
        "test_grader_probe.wasm",
        json!({"burn": 20_000_000}),
    )])
    .await;
    let r = report(&results[0]);
    assert_eq!(r["burned"], 20_000_000, "{r}");
    assert_eq!(r["wall_ns"], 0, "the WASI wall clock is the epoch: {r}");
    assert_eq!(r["std_wall_ns"], 0, "SystemTime::now() is the epoch: {r}");
    assert_eq!(r["monotonic_ns"], 0, "{r}");
    assert_eq!(
        r["monotonic_after_ns"], 0,
        "the monotonic clock never moves: {r}"
    );
    assert_eq!(r["std_elapsed_ns"], 0, "Instant::elapsed() is zero: {r}");
}

#[tokio::test]
async fn randomness_is_seeded_the_same_on_every_run() {
    let probe = component("test_grader_probe.wasm", json!({}));
    let first = report(&grade(std::slice::from_ref(&probe)).await[0]);
    let second = report(&grade(std::slice::from_ref(&probe)).await[0]);
    for key in ["random", "insecure_random"] {
        let bytes = first[key].as_str().unwrap();
        assert_eq!(bytes.len(), 32, "16 bytes, hex: {first}");
        assert_eq!(
            first[key], second[key],
            "{key}: the same seed gives the same bytes"
        );
    }
    // Not a constant: the generator runs (16 zero bytes would be no randomness at all).
    assert_ne!(first["random"], "0".repeat(32), "{first}");
}

#[tokio::test]
async fn every_grader_call_gets_a_fresh_instance() {
    // The probe counts its calls in a static: a reused instance would count past 1.
    let probe = component("test_grader_probe.wasm", json!({}));
    let results = grade(&[probe.clone(), probe.clone(), probe]).await;
    assert_eq!(results.len(), 3);
    for r in &results {
        assert_eq!(report(r)["calls"], 1, "state survived a call: {r:?}");
    }
    assert_eq!(
        report(&grade(&[component("test_grader_probe.wasm", json!({}))]).await[0])["calls"],
        1
    );
}

#[tokio::test]
async fn an_import_the_world_does_not_grant_is_refused() {
    let results = grade(&[component("test_forbidden_import.wasm", json!({}))]).await;
    let error = results[0].error.as_ref().expect("refused");
    assert_eq!(error.kind, "forbidden_import", "{error:?}");
    assert!(
        error.message.contains("coder-eval:backdoor/files@0.1.0")
            && error.message.contains("test_forbidden_import.wasm"),
        "names the import and the component: {}",
        error.message
    );
    assert!(!results[0].passed);
}

#[tokio::test]
async fn an_unknown_events_version_is_refused_naming_it() {
    let results = grade(&[component("test_wrong_events.wasm", json!({}))]).await;
    let error = results[0].error.as_ref().expect("refused");
    assert_eq!(error.kind, "unsupported_version", "{error:?}");
    assert!(
        error.message.contains("coder-eval:events@9.0.0")
            && error.message.contains("wit/events@0.1.0"),
        "names the version found and the one to rebuild against: {}",
        error.message
    );
}
