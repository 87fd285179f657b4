use super::*;

#[test]
fn a_0_1_0_harness_refuses_new_fields_by_name() {
    let caps = HarnessCapabilities::harness_0_1_0();
    let mut agent = AgentSpec {
        model: Some("m".into()),
        system_prompt: Some("s".into()),
        ..AgentSpec::default()
    };
    assert!(check_agent_fields(&agent, "pi", &caps, "harness@0.1.0").is_ok());
    agent.thinking_level = Some(ThinkingLevel::High);
    let err = check_agent_fields(&agent, "pi", &caps, "harness@0.1.0").unwrap_err();
    assert_eq!(err.field, AgentField::ThinkingLevel);
    let text = err.to_string();
    assert!(text.contains("`agent.thinking_level`"), "{text}");
    assert!(text.contains("`pi` harness"), "{text}");
}

#[test]
fn plugins_pass_on_a_harness_with_skills() {
    let mut caps = HarnessCapabilities::harness_0_1_0();
    let agent = AgentSpec {
        plugins: vec![PluginSpec {
            kind: PluginKind::Local,
            path: "/x".into(),
        }],
        ..AgentSpec::default()
    };
    assert!(check_agent_fields(&agent, "codex", &caps, "c").is_err());
    caps.agent_fields.insert(AgentField::Skills);
    assert!(check_agent_fields(&agent, "codex", &caps, "c").is_ok());
}
