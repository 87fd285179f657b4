//! The workspace-level tests: one binary that lists its modules. A guard test fails when a
//! test file in this folder is not listed here.

mod agent_fields;
mod bad_input;
mod browser;
mod cache;
mod cli_env;
mod coder_eval_compat;
mod contracts;
mod criteria_coder_eval;
mod docker;
mod docker_tasks;
mod export_atif;
mod export_otlp;
mod framing;
mod fuzz_reducers;
mod fuzz_tasks;
mod grade_cmd;
mod graders;
mod hot_swap;
mod hygiene;
mod live_budget_native;
mod live_claude;
mod live_cost;
mod live_criteria;
mod live_early_stop;
mod live_gateway;
mod live_gateway_price;
mod live_load_errors;
mod live_max_tool_calls;
mod live_scenarios;
mod live_unknown_tool;
mod out_of_tree_harness;
mod reliability;
mod reliability_attack;
mod reliability_edges;
mod replay_claude_follow_up;
mod replay_cline;
mod replay_codex_pi;
mod replay_continue;
mod replay_copilot;
mod replay_corpus;
mod replay_field2;
mod replay_grok;
mod replay_letta;
mod replay_opencode_gemini;
mod replay_qwen_kilo;
mod replay_threaded;
mod retries;
mod sandbox;
mod sandbox_promises;
mod shards;
mod sleeping_components;
mod suites;
mod suites_more;
mod support;
mod time_budget;
mod tmpdir;

#[test]
fn every_test_file_is_listed() {
    let main = include_str!("main.rs");
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/all");
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "rs") {
            let stem = path.file_stem().unwrap().to_str().unwrap();
            if stem != "main" {
                assert!(
                    main.contains(&format!("mod {stem};")),
                    "tests/all/{stem}.rs is not listed in main.rs"
                );
            }
        }
    }
}
