//! Live criteria benchmark: `cargo bench --bench live_criteria`.
//!
//! The cost of watching a run live (`stop_early`): the early-stop watcher over a long
//! real-shaped trajectory (model calls, messages with usage, shell and file tool calls,
//! their ends) with 1, 2 and 4 armed criteria of the built-in `criteria-trajectory`
//! component (`command_executed` with a pattern, `skill_triggered`), none of which ever
//! decides, so every event goes to every watcher. Each armed criterion is its own
//! sandboxed instance; each call gets fresh fuel, as in a run.
//!
//! Figure: µs per event per armed criterion (the whole watcher: the host's conversion of
//! the event, the call into the component, the verdict). Target: under 5 µs in the release
//! build; the bench prints FAIL when missed.

use coder_eval::results::StampedEvent;
use coder_eval::runtime::ComponentCache;
use coder_eval::runtime::grader_v2::LiveInstance;
use coder_eval::turn::early_stop::{Arming, EarlyStop, LiveWatcher};
use coder_eval::{Event, ToolStatus, Usage};
use serde_json::json;
use std::path::Path;
use std::time::{Duration, Instant};

const TARGET_US: f64 = 5.0;

/// `calls` rounds of: model call, assistant message (usage), a tool call (alternately a
/// shell command and a file read), its end.
fn trajectory(calls: usize) -> Vec<StampedEvent> {
    let mut t = Vec::new();
    let mut stamp = 0u64;
    let mut push = |event: Event, t: &mut Vec<StampedEvent>| {
        stamp += 700;
        t.push(StampedEvent {
            line: t.len() as u64 + 1,
            stamp_us: stamp,
            event,
        });
    };
    for i in 0..calls {
        let id = format!("toolu_{i:08}");
        push(
            Event::ModelCallStarted {
                message_id: Some(format!("msg_{i}")),
                parent_call_id: None,
            },
            &mut t,
        );
        push(
            Event::AssistantMessage {
                message_id: format!("msg_{i}"),
                parent_call_id: None,
                text: "Let me look at the failing test and run the suite again.".into(),
                usage: Some(Usage {
                    input_tokens: 1200,
                    output_tokens: 180,
                    cache_read_tokens: 24_000,
                    cache_write_tokens: Some(300),
                }),
                cost_usd: None,
            },
            &mut t,
        );
        let (name, input) = if i % 2 == 0 {
            (
                "Bash",
                json!({"command": format!("cd /work/repo && python -m pytest tests/test_{i}.py -x -q 2>&1 | tail -40"),
                       "description": "Run the tests"}),
            )
        } else {
            (
                "Read",
                json!({"file_path": format!("/work/repo/src/module_{i}.py"), "limit": 200}),
            )
        };
        push(
            Event::ToolCallStarted {
                call_id: id.clone(),
                name: name.into(),
                input_json: input.to_string(),
                parent_call_id: None,
            },
            &mut t,
        );
        push(
            Event::ToolCallFinished {
                call_id: id,
                status: ToolStatus::Ok,
                output_excerpt: "....F..\n1 failed, 6 passed in 0.42s\n".repeat(8),
                exit_code: Some(0),
                cli_duration_ms: Some(420),
            },
            &mut t,
        );
    }
    t
}

/// The armed criteria: `n` of them, alternating a command pattern and a skill.
fn armed(n: usize) -> Vec<(serde_json::Value, Arming)> {
    (0..n)
        .map(|i| {
            let params = if i % 2 == 0 {
                json!({"type": "command_executed", "tool_name": "Bash",
                       "command_pattern": format!("^make deploy-{i}\\b"), "min_count": 1})
            } else {
                json!({"type": "skill_triggered", "skill_name": format!("release-notes-{i}")})
            };
            (
                params,
                Arming {
                    index: i,
                    label: format!("c{i}"),
                    weight: 1.0,
                    on_pass_stop: true,
                    decide_within: None,
                    decidability: Default::default(),
                },
            )
        })
        .collect()
}

fn run_once(
    loaded: &coder_eval::runtime::LoadedComponent,
    n: usize,
    events: &[StampedEvent],
) -> Duration {
    let mut arming = Vec::new();
    let mut watchers: Vec<Box<dyn LiveWatcher>> = Vec::new();
    for (params, mut a) in armed(n) {
        let w = LiveInstance::arm(loaded, &params.to_string(), "")
            .expect("instantiates")
            .expect("arms");
        a.decidability = w.decidability();
        arming.push(a);
        watchers.push(Box::new(w));
    }
    let mut stop = EarlyStop::new(arming, watchers, 1.0, None);
    let started = Instant::now();
    for e in events {
        assert!(stop.observe(e).is_none(), "nothing decides");
    }
    let took = started.elapsed();
    assert!(stop.disarmed().is_none(), "{:?}", stop.disarmed());
    took
}

fn main() {
    let path = Path::new(env!("CODER_EVAL_COMPONENTS_DIR")).join("criteria_trajectory.wasm");
    let cache = ComponentCache::new(None);
    let loaded = cache.load_file(&path).expect("criteria-trajectory loads");
    let events = trajectory(2_500);
    println!(
        "live criteria: {} events ({} tool calls), criteria-trajectory watchers",
        events.len(),
        events.len() / 4
    );
    let mut worst = 0.0f64;
    for n in [1usize, 2, 4] {
        let mut per = Vec::new();
        for _ in 0..5 {
            let took = run_once(&loaded, n, &events);
            per.push(took.as_secs_f64() * 1e6 / (events.len() * n) as f64);
        }
        per.sort_by(|a, b| a.total_cmp(b));
        let median = per[per.len() / 2];
        worst = worst.max(median);
        println!(
            "  {n} armed: median {median:.2} µs per event per armed criterion (min {:.2}, max {:.2}; 5 runs)",
            per[0],
            per[per.len() - 1]
        );
    }
    let release = !cfg!(debug_assertions);
    if worst < TARGET_US {
        println!("PASS: {worst:.2} µs < {TARGET_US} µs per event per armed criterion");
    } else if release {
        println!("FAIL: {worst:.2} µs ≥ {TARGET_US} µs per event per armed criterion");
        std::process::exit(1);
    } else {
        println!("(debug build: {worst:.2} µs; the target applies to the release build)");
    }
}
