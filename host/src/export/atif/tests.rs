//! The ATIF mapping on events fed by hand: sub-agents, repeated messages, per-call
//! usage, tool calls without their model call.

use super::*;
use harness_kit::Usage;

/// A finished task's result with no turn, for feeding events by hand.
fn task(harness: &str) -> TaskResult {
    serde_json::from_value(json!({
        "result_version": 1,
        "task_id": "t",
        "harness": harness,
        "status": "SUCCESS",
        "error": null,
        "description": null,
        "task_file": "t.yaml",
        "prompt": "do it",
        "requested_model": null,
        "cli": {"path": "x", "version": "1.0", "argv": [], "pgid": null, "mark": null,
                "leftover_processes": 0, "exit_code_meaning": null, "caveats": []},
        "run_limits": {"max_turns": null, "max_tool_calls": null, "turn_timeout_ms": null,
                       "task_timeout_ms": null, "native": []},
        "stop": null,
        "turn": null,
        "criteria": [],
        "weighted_score": null,
        "post_failure_criteria_results": [],
        "stderr_tail": "",
        "paths": {"recording": null, "stderr": null, "workspace": null, "reference": null},
    }))
    .unwrap()
}

fn at(ms: u64, event: Event) -> StampedEvent {
    StampedEvent {
        line: 0,
        stamp_us: ms * 1000,
        event,
    }
}

fn message(id: &str, parent: Option<&str>, text: &str, output: u64) -> Event {
    Event::AssistantMessage {
        message_id: id.into(),
        parent_call_id: parent.map(str::to_string),
        text: text.into(),
        usage: Some(Usage {
            input_tokens: 10,
            output_tokens: output,
            cache_read_tokens: 5,
            cache_write_tokens: Some(1),
        }),
        cost_usd: None,
    }
}

fn start(id: &str, parent: Option<&str>, name: &str, input: &str) -> Event {
    Event::ToolCallStarted {
        call_id: id.into(),
        name: name.into(),
        input_json: input.into(),
        parent_call_id: parent.map(str::to_string),
    }
}

fn end(id: &str, status: ToolStatus) -> Event {
    Event::ToolCallFinished {
        call_id: id.into(),
        status,
        output_excerpt: format!("out {id}"),
        exit_code: None,
        cli_duration_ms: None,
    }
}

#[test]
fn a_sub_agent_is_embedded_and_referenced_from_the_call_that_spawned_it() {
    let events = vec![
        at(1, message("m1", None, "delegating", 7)),
        at(
            2,
            start("task1", None, "Task", r#"{"prompt":"find the bug"}"#),
        ),
        at(3, message("s1", Some("task1"), "looking", 3)),
        at(
            4,
            start("grep1", Some("task1"), "Grep", r#""not an object""#),
        ),
        at(5, end("grep1", ToolStatus::Ok)),
        at(6, message("s2", Some("task1"), "found it", 2)),
        at(7, end("task1", ToolStatus::Ok)),
        at(8, message("m2", None, "do", 4)),
        // The same message again, its whole text so far: replaced, not added.
        at(8, message("m2", None, "done", 4)),
    ];
    let t = trajectory(&task("pi"), &events, "t/pi", None);
    let steps: Vec<(usize, &str, &str)> = t
        .steps
        .iter()
        .map(|s| (s.step_id, s.source, s.message.as_str()))
        .collect();
    assert_eq!(
        steps,
        [
            (1, "user", "do it"),
            (2, "agent", "delegating"),
            (3, "agent", "done")
        ]
    );
    let result = &t.steps[1].observation.as_ref().unwrap().results[0];
    assert_eq!(result.source_call_id, "task1");
    assert_eq!(
        result.subagent_trajectory_ref[0].trajectory_id,
        "t/pi/task1"
    );
    assert_eq!(t.subagent_trajectories.len(), 1);
    let sub = &t.subagent_trajectories[0];
    assert_eq!(sub.trajectory_id, "t/pi/task1");
    assert_eq!(sub.steps[0].message, "find the bug");
    assert_eq!(sub.steps.len(), 3);
    assert_eq!(
        sub.steps[1].tool_calls[0].arguments,
        Map::from_iter([("input".to_string(), json!("not an object"))])
    );
    assert_eq!(sub.final_metrics.total_completion_tokens, Some(5));
    assert_eq!(sub.final_metrics.total_prompt_tokens, Some(32));
    assert_eq!(
        t.steps[2].metrics.as_ref().unwrap().completion_tokens,
        Some(4)
    );
    // No turn, no cost record: the totals are absent, not 0.
    assert_eq!(t.final_metrics.total_prompt_tokens, None);
    assert_eq!(t.final_metrics.total_steps, 3);
}

#[test]
fn claude_codes_per_message_output_count_is_left_out() {
    let events = vec![at(1, message("m1", None, "hi", 1))];
    let t = trajectory(
        &task("claude-code"),
        &events,
        "t/claude-code",
        Some(1_796_077_147_394),
    );
    let m = t.steps[1].metrics.as_ref().unwrap();
    assert_eq!((m.prompt_tokens, m.completion_tokens), (16, None));
    assert_eq!(
        t.steps[0].timestamp.as_deref(),
        Some("2026-11-30T22:19:07.394Z")
    );
    assert_eq!(
        t.steps[1].timestamp.as_deref(),
        Some("2026-11-30T22:19:07.395Z")
    );
}

#[test]
fn a_tool_call_without_its_model_call_gets_its_own_step_without_metrics() {
    let events = vec![
        at(1, start("a", None, "bash", r#"{"command":"ls"}"#)),
        at(2, end("a", ToolStatus::Denied)),
    ];
    let t = trajectory(&task("pi"), &events, "t/pi", None);
    assert_eq!(t.steps.len(), 2);
    assert_eq!(t.steps[1].llm_call_count, None);
    assert!(t.steps[1].metrics.is_none());
    let r = &t.steps[1].observation.as_ref().unwrap().results[0];
    assert_eq!(r.extra["status"], "denied");
}
