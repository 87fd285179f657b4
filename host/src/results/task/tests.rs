//! Tests of the parent module.

use super::*;

#[test]
fn error_kind_is_written_only_when_set() {
    let text = r#"{"result_version":1,"task_id":"t","harness":"h","status":"ERROR","error":"setup: x","description":null,"task_file":"/t.yaml","prompt":"p","requested_model":null,"cli":{"path":null,"version":null,"argv":[],"pgid":null,"caveats":[]},"run_limits":{"max_turns":null,"max_tool_calls":null,"turn_timeout_ms":null,"task_timeout_ms":null,"native":[]},"stop":null,"turn":null,"criteria":[],"weighted_score":null,"post_failure_criteria_results":[],"setup_ms":0,"grading_ms":0,"host_turn_work_us":0,"stderr_tail":"","scripted_model_requests":null,"paths":{"recording":"recording.jsonl","stderr":"stderr.log","workspace":"workspace"}}"#;
    // A task.json written before error_kind existed reads, and writes back without it.
    let mut result: TaskResult = serde_json::from_str(text).unwrap();
    assert_eq!(result.error_kind, None);
    assert!(
        !serde_json::to_string(&result)
            .unwrap()
            .contains("error_kind")
    );
    result.error_kind = Some("setup".into());
    let json = serde_json::to_value(&result).unwrap();
    assert_eq!(json["error_kind"], "setup");
    // It follows `error`; the fields before it keep their places.
    let keys: Vec<&String> = json.as_object().unwrap().keys().collect();
    assert_eq!(keys[4..6], ["error", "error_kind"]);
}

fn bare(status: &str) -> TaskResult {
    serde_json::from_str(&format!(r#"{{"result_version":1,"task_id":"t","harness":"claude-code","status":"{status}","error":null,"description":null,"task_file":"/t.yaml","prompt":"p","requested_model":null,"cli":{{"path":null,"version":null,"argv":[],"pgid":null,"caveats":[]}},"run_limits":{{"max_turns":null,"max_tool_calls":null,"turn_timeout_ms":null,"task_timeout_ms":null,"native":[]}},"stop":null,"turn":null,"criteria":[],"weighted_score":null,"post_failure_criteria_results":[],"setup_ms":0,"grading_ms":0,"host_turn_work_us":0,"stderr_tail":"","scripted_model_requests":null,"paths":{{"recording":"r","stderr":"s","workspace":"w"}}}}"#)).unwrap()
}

/// Trial 16u M8: the time-budget outcome is on the one-line notes (the summary line,
/// junit, the report's matrix) and in run.json's row.
#[test]
fn a_time_budget_runs_outcome_is_in_its_notes() {
    let mut r = bare("SUCCESS");
    assert_eq!(r.time_budget_note(), None);
    r.time_budget = Some(crate::results::TimeBudgetRecord {
        budget_ms: 12_000,
        min_resume_ms: 1_000,
        max_sessions: 5,
        ended: crate::results::SessionsEnd::DeadlineReached,
        ended_note: None,
        sessions: Vec::new(),
    });
    assert_eq!(
        r.time_budget_note().as_deref(),
        Some("time budget: 0 sessions, ended: deadline_reached")
    );
    assert!(
        r.notes().unwrap().contains("ended: deadline_reached"),
        "{:?}",
        r.notes()
    );
}

/// Trial 16u N1 and N13: a USD budget note without float noise, saying when the CLI's
/// own cap stopped it.
#[test]
fn a_usd_budget_note_rounds_and_names_the_clis_own_cap() {
    let (mut turn, _) = crate::turn::collect::Collector::new(Default::default())
        .finish(crate::turn::finish::TurnEnd::default());
    turn.budget = Some(crate::results::BudgetBreach {
        budget: crate::results::BudgetKind::MaxUsd,
        actual: 0.19207000000000002,
        limit: 0.15,
        event_index: 8,
        at_ms: 966,
        model_calls: 2,
        figures: None,
    });
    let mut r = bare("COST_BUDGET_EXCEEDED");
    r.turn = Some(turn.clone());
    assert_eq!(
        r.budget_note().as_deref(),
        Some("over max_usd: $0.19207 > $0.15 at model call 2")
    );
    turn.cli_result = Some(crate::results::CliResult {
        success: false,
        error_kind: Some("error_max_budget_usd".into()),
        error_message: None,
        max_turns_reached: false,
        num_turns: Some(2),
        cost_usd: Some(0.19207000000000002),
        duration_ms: None,
        text: None,
        usage: None,
    });
    r.turn = Some(turn);
    assert!(
        r.budget_note().unwrap().ends_with("(the CLI's own cap)"),
        "{:?}",
        r.budget_note()
    );
}

/// Trial of issue 10 (F1): a reducer slow on every line, within its deadline, made a turn
/// time out on a CLI that had finished, and nothing said the host's time was in it.
#[test]
fn a_timeout_the_hosts_own_work_took_a_quarter_of_is_noted() {
    let mut r = bare("TIMEOUT");
    r.stop = Some(super::StopRecord {
        reason: crate::results::StopReason::TurnTimeout,
        at_ms: Some(20_000),
    });
    r.host_turn_work_us = Some(4_000_000);
    assert_eq!(r.host_work_note(), None, "a fifth of the time: no note");
    r.host_turn_work_us = Some(16_200_000);
    assert_eq!(
        r.host_work_note().as_deref(),
        Some(
            "the host spent 16.2 s of the turn's 20.0 s reducing the stream (a slow reducer \
             component?): the turn_timeout counts that time"
        )
    );
    assert!(r.notes().unwrap().contains("the host spent 16.2 s"));
    // Not a timeout: the host's time stopped nothing.
    r.stop = Some(super::StopRecord {
        reason: crate::results::StopReason::MaxTurns,
        at_ms: Some(20_000),
    });
    assert_eq!(r.host_work_note(), None);
    r.stop = None;
    assert_eq!(r.host_work_note(), None);
}
