//! A reducer that uses fuel on demand: a line `burn N` runs N loop iterations; any other
//! line is reduced by the Claude Code reducer. One instance reads every line of a turn, so
//! the host's tests can tell whether its fuel is re-armed before every `feed` (a few lines
//! that each use most of one call's budget) or given once (they would run out).
//! Launch plans come from the Claude Code harness.

use claude_code_harness::{ClaudeCode, ClaudeReducer};
use harness_kit::{
    AgentSettings, Event, Harness, LaunchPlan, NeutralAction, Reducer, ReducerConfig, RunLimits,
    ToolCall,
};

pub struct Burner;
pub struct BurnerReducer(ClaudeReducer);

impl Harness for Burner {
    type Reducer = BurnerReducer;
    fn describe() -> harness_kit::Capabilities {
        ClaudeCode::describe()
    }
    fn totals(cli_version: Option<&str>) -> harness_kit::TotalsScope {
        ClaudeCode::totals(cli_version)
    }
    fn plan(settings: &AgentSettings, limits: &RunLimits) -> Result<LaunchPlan, String> {
        ClaudeCode::plan(settings, limits)
    }
    fn translate_action(action: &NeutralAction, workspace: &str) -> ToolCall {
        ClaudeCode::translate_action(action, workspace)
    }
}

/// Runs `n` iterations of work the optimizer cannot remove.
fn burn(n: u64) -> u64 {
    let mut x: u64 = 1;
    for i in 0..n {
        x = std::hint::black_box(x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(i));
    }
    x
}

impl Reducer for BurnerReducer {
    fn new(config: ReducerConfig) -> Self {
        BurnerReducer(ClaudeReducer::new(config))
    }
    fn feed(&mut self, line: &[u8], stamp_us: u64) -> Vec<Event> {
        if let Some(n) = std::str::from_utf8(line)
            .ok()
            .and_then(|l| l.strip_prefix("burn "))
            .and_then(|n| n.trim().parse::<u64>().ok())
        {
            std::hint::black_box(burn(n));
            return Vec::new();
        }
        self.0.feed(line, stamp_us)
    }
    fn finish(&mut self, truncated: Option<&[u8]>) -> Vec<Event> {
        self.0.finish(truncated)
    }
}

harness_kit::export_harness!(Burner);
