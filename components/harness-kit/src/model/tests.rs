//! Tests of the event and launch model.

use super::*;

#[test]
fn check_names_each_field_set_but_not_honoured() {
    let caps = Capabilities {
        agent_fields: vec![AgentField::Model, AgentField::SystemPrompt],
        resume: false,
        reports_cost: false,
        usage_per_call: false,
    };
    let plain = AgentSettings {
        model: Some("m".into()),
        system_prompt: Some("p".into()),
        // The host's own settings are no agent fields.
        model_base_url: Some("http://127.0.0.1:1".into()),
        as_root: true,
        session: Some(SessionRequest::Start("s".into())),
        ..Default::default()
    };
    assert_eq!(caps.check(&plain), Ok(()));
    let more = AgentSettings {
        system_prompt_mode: SystemPromptMode::Replace,
        pure: true,
        setting_sources: Some(Vec::new()),
        ..plain
    };
    assert_eq!(
        caps.check(&more),
        Err(
            "this harness does not honour the agent field(s) system-prompt-replace, pure, \
             setting-sources"
                .into()
        )
    );
    // `replace` without a prompt asks for nothing.
    let no_prompt = AgentSettings {
        system_prompt_mode: SystemPromptMode::Replace,
        ..Default::default()
    };
    assert!(AgentField::used_by(&no_prompt).is_empty());
}

#[test]
fn new_events_go_down_as_diagnostics() {
    let retry = Event::ModelCallRetried {
        call_started: true,
        abandoned_message_id: Some("m1".into()),
        parent_call_id: None,
        attempt: Some(1),
        delay_ms: Some(600),
        status: Some(529),
        error: Some("overloaded".into()),
        announced: true,
    };
    assert_eq!(
        down_to_diagnostic(&retry),
        Some((
            "model_call_retried".into(),
            "the CLI retried a model request; abandoned attempt `m1` is not a model call; \
             attempt 1; waiting 600 ms; HTTP 529; error: overloaded"
                .into()
        ))
    );
    let gap = Event::Unreported {
        kind: UnreportedKind::SubagentWork,
        call_id: Some("t1".into()),
        reason: "nothing printed".into(),
    };
    assert_eq!(
        down_to_diagnostic(&gap),
        Some((
            "unreported_subagent_work".into(),
            "nothing printed (call `t1`)".into()
        ))
    );
    assert_eq!(down_to_diagnostic(&Event::diagnostic("x", "y", b"")), None);
}
