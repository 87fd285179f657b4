//! suite_thresholds tests: metrics, labels from details, groups, validation.

use super::*;

fn result(kind: &str, score: f64, details: &str) -> CriterionResult {
    CriterionResult {
        kind: kind.into(),
        description: kind.into(),
        weight: 1.0,
        pass_threshold: 0.9,
        score,
        passed: score >= 0.9,
        details: details.into(),
        duration_ms: 0,
        error: None,
        judge: None,
        advisory: false,
    }
}

#[test]
fn metrics_match_sklearn_conventions() {
    let p = |e: &str, o: &str| (e.to_string(), o.to_string());
    // expected/observed: pos/pos, pos/neg, neg/neg, neg/neg
    let m = classification_metrics(&[
        p("pos", "pos"),
        p("pos", "neg"),
        p("neg", "neg"),
        p("neg", "neg"),
    ]);
    assert_eq!(m["accuracy"], 0.75);
    assert_eq!(m["precision.pos"], 1.0);
    assert_eq!(m["recall.pos"], 0.5);
    assert!((m["f1.pos"] - 2.0 / 3.0).abs() < 1e-12);
    assert!((m["precision.neg"] - 2.0 / 3.0).abs() < 1e-12);
    assert_eq!(m["recall.neg"], 1.0);
    assert!((m["f1.neg"] - 0.8).abs() < 1e-12);
    assert!((m["macro_f1"] - (2.0 / 3.0 + 0.8) / 2.0).abs() < 1e-12);
    assert_eq!(m["f1.macro"], m["macro_f1"]);
    assert!((m["micro_f1"] - 0.75).abs() < 1e-12);
    assert!(classification_metrics(&[]).is_empty());
}

#[test]
fn labels_from_details() {
    let r = result(
        "classification_match",
        0.0,
        r#"observed="neg, really", expected="pos" (from final text: "x")"#,
    );
    assert_eq!(labels(&r), Some(("pos".into(), "neg, really".into())));
    let r = result(
        "skill_triggered",
        1.0,
        "skill `s`: observed=yes, expected=yes; skills engaged: s",
    );
    assert_eq!(labels(&r), Some(("yes".into(), "yes".into())));
    assert_eq!(
        labels(&result("file_exists", 1.0, "observed=a, expected=b")),
        None
    );
}

#[test]
fn groups_pass_and_fail() {
    let t = BTreeMap::from([
        ("accuracy".to_string(), 0.7),
        ("recall.pos".to_string(), 0.9),
    ]);
    let rs = [
        result(
            "classification_match",
            1.0,
            r#"observed="pos", expected="pos""#,
        ),
        result(
            "classification_match",
            0.0,
            r#"observed="neg", expected="pos""#,
        ),
        result(
            "classification_match",
            1.0,
            r#"observed="neg", expected="neg""#,
        ),
        result(
            "classification_match",
            1.0,
            r#"observed="neg", expected="neg""#,
        ),
    ];
    let rows: Vec<RowCriterion> = rs
        .iter()
        .map(|r| RowCriterion {
            task_id: "sentiment",
            harness: "claude-code",
            criterion_index: 0,
            thresholds: &t,
            result: r,
        })
        .collect();
    let out = evaluate(&rows);
    assert_eq!(out.len(), 1);
    let g = &out[0];
    assert_eq!(g.rows, 4);
    assert_eq!(g.metrics["pass_rate"], 0.75);
    let acc = g
        .thresholds
        .iter()
        .find(|c| c.metric == "accuracy")
        .unwrap();
    assert!(acc.passed && acc.value == Some(0.75));
    let recall = g
        .thresholds
        .iter()
        .find(|c| c.metric == "recall.pos")
        .unwrap();
    assert_eq!((recall.value, recall.passed), (Some(0.5), false));
    assert!(!g.passed);
    // A label that never occurs scores 0, not "unknown".
    let t2 = BTreeMap::from([("recall.maybe".to_string(), 0.0)]);
    let rows2: Vec<RowCriterion> = rs
        .iter()
        .map(|r| RowCriterion {
            task_id: "s",
            harness: "h",
            criterion_index: 1,
            thresholds: &t2,
            result: r,
        })
        .collect();
    assert!(evaluate(&rows2)[0].passed);
}

#[test]
fn validation() {
    let t = |pairs: &[(&str, f64)]| -> BTreeMap<String, f64> {
        pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
    };
    validate(
        "classification_match",
        1.0,
        &t(&[("accuracy", 0.8), ("recall.yes", 0.7), ("f1.macro", 0.5)]),
    )
    .unwrap();
    validate("file_exists", 1.0, &t(&[("pass_rate", 0.8), ("mean", 0.5)])).unwrap();
    for (kind, w, th, want) in [
        (
            "classification_match",
            0.0,
            t(&[("accuracy", 0.8)]),
            "informational",
        ),
        (
            "classification_match",
            1.0,
            t(&[("accuracy", 1.5)]),
            "between 0 and 1",
        ),
        (
            "file_exists",
            1.0,
            t(&[("accuracy", 0.8)]),
            "emits no labels",
        ),
        (
            "skill_triggered",
            1.0,
            t(&[("acuracy", 0.8)]),
            "unknown metric `acuracy`",
        ),
        (
            "skill_triggered",
            1.0,
            t(&[("recall.", 0.8)]),
            "unknown metric",
        ),
        ("file_exists", 1.0, t(&[]), "empty"),
    ] {
        let err = validate(kind, w, &th).expect_err(want);
        assert!(err.contains(want), "{err}");
    }
}
