//! The host speaks harness@0.2.0 and the released harness@0.1.0: the built-in harnesses
//! export 0.2.0 (what they can do, how their totals add up, the new agent fields), and a
//! 0.1.0 component (the tagger test variant) still loads, plans and reduces, with 0.1.0's
//! meaning for what it cannot say.

use crate::support::{corpus, test_component};
use coder_eval::components::ComponentSource;
use coder_eval::runtime::harness::Launcher;
use coder_eval::turn::replay::{ReplayOptions, replay};
use harness_kit::{AgentField, AgentSettings, RunLimits, SessionRequest, TotalsScope};
use std::collections::BTreeMap;

fn launcher(name: &str, file: Option<&str>) -> Launcher {
    let source = ComponentSource {
        dir: None,
        overrides: file
            .map(|f| (name.to_string(), test_component(f)))
            .into_iter()
            .collect::<BTreeMap<_, _>>(),
    };
    Launcher::new(&source.harness(name).unwrap()).unwrap()
}

#[test]
fn the_builtin_harnesses_speak_0_2_0_and_declare_what_they_can_do() {
    let expect = [
        ("claude-code", true, true, TotalsScope::PerProcess),
        ("codex", true, false, TotalsScope::PerSession),
        ("pi", true, true, TotalsScope::PerCall),
        ("opencode", true, true, TotalsScope::PerCall),
        ("gemini-cli", true, false, TotalsScope::PerProcess),
        ("qwen-code", false, false, TotalsScope::PerProcess),
        ("kilo", true, true, TotalsScope::PerCall),
        ("cline", false, true, TotalsScope::PerCall),
        ("copilot", false, false, TotalsScope::PerProcess),
        ("letta", false, false, TotalsScope::PerProcess),
        ("grok-cli", false, false, TotalsScope::PerProcess),
        ("continue", false, false, TotalsScope::PerProcess),
    ];
    for (name, resume, cost, totals) in expect {
        let mut l = launcher(name, None);
        assert_eq!(l.version(), "0.2.0", "{name}");
        let caps = l.describe().unwrap();
        assert_eq!((caps.resume, caps.reports_cost), (resume, cost), "{name}");
        assert!(caps.agent_fields.contains(&AgentField::Model), "{name}");
        assert_eq!(l.totals(None).unwrap(), totals, "{name}");
    }
    // Claude Code's running total covers the whole session from 2.1.277 (field case B40).
    let mut claude = launcher("claude-code", None);
    assert_eq!(
        claude.totals(Some("2.1.278")).unwrap(),
        TotalsScope::PerSession
    );
    // The new fields reach the command line through the 0.2.0 boundary.
    let settings = AgentSettings {
        session: Some(SessionRequest::Resume("sess-1".into())),
        plugin_dirs: vec!["/plugins/p".into()],
        ..Default::default()
    };
    let plan = claude
        .plan(&settings, &RunLimits::default())
        .unwrap()
        .unwrap();
    let argv = plan.argv.join(" ");
    assert!(argv.contains("--resume sess-1") && argv.contains("--plugin-dir /plugins/p"));
    // A field the CLI does not honour is refused by name, before any agent starts.
    let thinking = AgentSettings {
        thinking_level: Some("high".into()),
        ..Default::default()
    };
    let err = claude
        .plan(&thinking, &RunLimits::default())
        .unwrap()
        .unwrap_err();
    assert!(err.contains("thinking-level"), "{err}");
}

#[test]
fn a_0_1_0_component_still_loads_with_0_1_0_meaning() {
    let mut tagger = launcher("claude-code", Some("test_tagger.wasm"));
    assert_eq!(tagger.version(), "0.1.0");
    let caps = tagger.describe().unwrap();
    assert!(!caps.resume && !caps.reports_cost);
    assert!(!caps.agent_fields.contains(&AgentField::Plugins));
    assert_eq!(
        tagger.totals(Some("2.1.278")).unwrap(),
        TotalsScope::PerProcess
    );
    let plan = tagger
        .plan(&AgentSettings::default(), &RunLimits::default())
        .unwrap();
    assert!(plan.unwrap().argv.starts_with(&["claude".to_string()]));
    for settings in [
        AgentSettings {
            plugin_dirs: vec!["/p".into()],
            ..Default::default()
        },
        AgentSettings {
            session: Some(SessionRequest::Start("s".into())),
            ..Default::default()
        },
    ] {
        let err = tagger
            .plan(&settings, &RunLimits::default())
            .unwrap()
            .unwrap_err();
        assert!(err.contains("harness@0.1.0"), "{err}");
    }
    // And its reducer runs: the tagger marks what it emits.
    let mut options = ReplayOptions::new("claude-code");
    options.components = ComponentSource {
        dir: None,
        overrides: [(
            "claude-code".to_string(),
            test_component("test_tagger.wasm"),
        )]
        .into_iter()
        .collect(),
    };
    let record = replay(&corpus("live/claude/hello.jsonl"), &options).unwrap();
    assert!(
        record
            .tool_calls
            .iter()
            .all(|t| t.name.starts_with("tagged:"))
    );
}
