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

// Time-budget fields (`super::super::time_budget`), read and resolved.
mod time_budget {
    use super::super::AgentSpec;
    use crate::task::time_budget::{DEFAULT_MAX_SESSIONS, DEFAULT_MIN_RESUME, TimeBudget};
    use std::time::Duration;

    fn agent(yaml: &str) -> Result<AgentSpec, String> {
        serde_yaml_ng::from_str(yaml).map_err(|e| e.to_string())
    }

    #[test]
    fn a_huge_number_of_seconds_is_an_error_not_a_panic() {
        // Found by tests/all/fuzz_tasks.rs: 1e308 panicked in Duration::from_secs_f64.
        for field in ["timeout_seconds", "min_resume_seconds"] {
            for n in ["1e308", "1.0e20", "2592001"] {
                let err = agent(&format!("budget_mode: time\n{field}: {n}\n")).unwrap_err();
                assert!(
                    err.contains(&format!("agent.{field} must be at most 30 days")),
                    "{err}"
                );
            }
        }
    }

    #[test]
    fn time_mode_needs_a_budget_and_takes_defaults() {
        let a = agent("budget_mode: time\n").unwrap();
        let err = a.time_budget(None).unwrap_err();
        assert!(err.contains("agent.timeout_seconds"), "{err}");
        let b = a
            .time_budget(Some(Duration::from_secs(3600)))
            .unwrap()
            .unwrap();
        assert_eq!(b.budget, Duration::from_secs(3600));
        assert_eq!(b.min_resume, DEFAULT_MIN_RESUME);
        assert_eq!(b.max_sessions, DEFAULT_MAX_SESSIONS);
        let a = agent(
            "budget_mode: time\ntimeout_seconds: 30\nmin_resume_seconds: 1\nmax_sessions: 3\n",
        )
        .unwrap();
        let b = a
            .time_budget(Some(Duration::from_secs(90)))
            .unwrap()
            .unwrap();
        assert_eq!(
            b,
            TimeBudget {
                budget: Duration::from_secs(30),
                min_resume: Duration::from_secs(1),
                max_sessions: 3
            }
        );
        assert_eq!(
            agent("model: m\n").unwrap().time_budget(None).unwrap(),
            None
        );
    }

    #[test]
    fn zero_or_negative_values_are_refused_by_name() {
        for (yaml, field) in [
            ("min_resume_seconds: 0", "agent.min_resume_seconds"),
            ("min_resume_seconds: -5", "agent.min_resume_seconds"),
            ("max_sessions: 0", "agent.max_sessions"),
            ("max_sessions: -1", "agent.max_sessions"),
            ("max_sessions: 1.5", "agent.max_sessions"),
            ("timeout_seconds: 0", "agent.timeout_seconds"),
        ] {
            let err = agent(&format!("budget_mode: time\n{yaml}\n"))
                .or_else(|_| agent(&format!("{yaml}\n")))
                .unwrap_err();
            assert!(err.contains(field), "{yaml}: {err}");
        }
        let err = agent("max_sessions: 2\n")
            .unwrap()
            .time_budget(None)
            .unwrap_err();
        assert!(err.contains("agent.max_sessions"), "{err}");
    }
}
