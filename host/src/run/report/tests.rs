//! The unit tests of `report.html`.

use super::*;

fn result(variant: Option<&str>, replicate: u32, status: TaskStatus) -> TaskResult {
    let mut r: TaskResult = serde_json::from_str(r#"{"result_version":1,"task_id":"t","harness":"claude-code","status":"SUCCESS","error":null,"description":null,"task_file":"/t.yaml","prompt":"p","requested_model":null,"cli":{"path":null,"version":null,"argv":[],"pgid":null,"caveats":[]},"run_limits":{"max_turns":null,"max_tool_calls":null,"turn_timeout_ms":null,"task_timeout_ms":null,"native":[]},"stop":null,"turn":null,"criteria":[],"weighted_score":null,"post_failure_criteria_results":[],"setup_ms":0,"grading_ms":0,"host_turn_work_us":0,"stderr_tail":"","scripted_model_requests":null,"paths":{"recording":"recording.jsonl","stderr":"stderr.log","workspace":"workspace"}}"#).unwrap();
    r.variant = variant.map(String::from);
    r.replicate = Some(replicate);
    r.status = status;
    r
}

/// 2 variants × 1 task × 3 replicates on one harness; variant a passes 2 of 3.
fn suite() -> Vec<TaskResult> {
    let mut rs = Vec::new();
    for (v, statuses) in [
        (
            "a",
            [
                TaskStatus::Success,
                TaskStatus::Failure,
                TaskStatus::Success,
            ],
        ),
        ("b", [TaskStatus::Failure; 3]),
    ] {
        for (i, s) in statuses.into_iter().enumerate() {
            rs.push(result(Some(v), i as u32, s));
        }
    }
    rs
}

#[test]
fn the_header_counts_harnesses_and_variants_and_the_matrix_counts_replicates() {
    let html = render(&suite(), &[], &[]);
    assert!(
        html.contains("6 runs: 1 task on 1 harness, 2 variants, up to 3 replicates each"),
        "{html}"
    );
    assert!(
        html.contains("2/3 passed") && html.contains("0/3 passed"),
        "{html}"
    );
}

#[test]
fn junit_cases_of_replicates_and_variants_differ() {
    let xml = crate::run::junit::report(&suite(), &[])
        .to_string()
        .unwrap();
    let mut cases: Vec<(String, String)> = xml
        .lines()
        .filter(|l| l.contains("<testcase"))
        .map(|l| {
            let attr = |a: &str| {
                let from = l.find(&format!("{a}=\"")).unwrap() + a.len() + 2;
                l[from..from + l[from..].find('"').unwrap()].to_string()
            };
            (attr("name"), attr("classname"))
        })
        .collect();
    assert_eq!(cases.len(), 6, "{xml}");
    assert!(cases.contains(&("t [r02]".into(), "coder-eval.b.claude-code".into())));
    cases.sort();
    cases.dedup();
    assert_eq!(cases.len(), 6, "{xml}");
}
