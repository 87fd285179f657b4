//! llm_judge tests: verdict validation, params, cost and scrubbing.

use super::*;
use serde_json::json;

#[test]
fn verdicts_are_validated_like_coder_eval() {
    let v = JudgeVerdict::from_input(
        &json!({"score": 1.7, "rationale": "  good\n  work ", "findings": ["a.py:1 ok", "", null, 3]}),
    )
    .unwrap();
    assert_eq!(v.score, 1.0, "clamped");
    assert_eq!(v.rationale, "good work");
    assert_eq!(v.findings, ["a.py:1 ok", "3"]);
    assert_eq!(
        JudgeVerdict::from_input(&json!({"score": "0.25", "rationale": "r"}))
            .unwrap()
            .score,
        0.25
    );
    assert_eq!(
        JudgeVerdict::from_input(&json!({"score": -3, "rationale": "r"}))
            .unwrap()
            .score,
        0.0
    );
    for bad in [
        json!({"score": true, "rationale": "r"}),
        json!({"score": "high", "rationale": "r"}),
        json!({"score": "NaN", "rationale": "r"}),
        json!({"rationale": "r"}),
        json!({"score": 0.5, "rationale": "   "}),
        json!({"score": 0.5}),
        json!({"score": 0.5, "rationale": 7}),
        json!("0.5"),
    ] {
        assert!(JudgeVerdict::from_input(&bad).is_err(), "{bad}");
    }
}

#[test]
fn params() {
    let p = |v: Value| LlmJudge::parse(v.as_object().unwrap());
    let ok = p(json!({"prompt": "grade"})).unwrap();
    assert_eq!(ok.model, DEFAULT_JUDGE_MODEL);
    assert_eq!((ok.max_tokens, ok.max_file_chars), (2000, 20_000));
    assert!(ok.include_reference && ok.capture_transcript && ok.enabled);
    for (bad, want) in [
        (json!({}), "missing field `prompt`"),
        (json!({"prompt": " "}), "prompt is empty"),
        (json!({"prompt": "p", "temperature": 3}), "temperature"),
        (json!({"prompt": "p", "max_tokens": 0}), "max_tokens"),
        (json!({"prompt": "p", "files": ["../x"]}), "files[0]"),
        (
            json!({"prompt": "p", "files": ["$TASK_DIR/../x"]}),
            "files[0]",
        ),
        (
            json!({"prompt": "p", "verdict_channel": "text"}),
            "verdict_channel was removed",
        ),
        (
            json!({"prompt": "p", "capture_transcripts": true}),
            "unknown field",
        ),
    ] {
        let err = p(bad.clone()).expect_err(&bad.to_string());
        assert!(err.contains(want), "{bad}: {err}");
    }
    p(json!({"prompt": "p", "files": ["$REFERENCE_DIR/sol.py", "$TASK_DIR/rubric.md", "src/a.py"]})).unwrap();
}

#[test]
fn cost_and_scrubbing() {
    let usage = JudgeUsage {
        input_tokens: Some(1_000_000),
        output_tokens: Some(100_000),
        ..JudgeUsage::default()
    };
    assert_eq!(cost("claude-sonnet-4-6", &usage), Some(3.0 + 1.5));
    assert_eq!(
        cost("mock-model", &usage),
        None,
        "unknown price is absent, not zero"
    );
    let partial = JudgeUsage {
        input_tokens: Some(5),
        ..JudgeUsage::default()
    };
    assert_eq!(cost("claude-sonnet-4-6", &partial), None);
    let files = BTreeMap::from([(
        "sol.py".to_string(),
        "def solve(values):\n    return sorted(set(values))\n".to_string(),
    )]);
    let secrets = reference_secrets(&files);
    let text = "the agent wrote `return sorted(set(values))` like the reference";
    assert_eq!(
        scrub(text, &secrets),
        "the agent wrote `[reference redacted]` like the reference"
    );
}
