//! A hostile harness whose `describe` and every reducer call (`feed`, `side_file`,
//! `finish`) recurse without bound: Rust's shadow stack runs off the bottom of linear
//! memory, which the host sees as an out-of-bounds memory access (not wasmtime's own
//! stack-overflow trap). An empty recording reaches `finish`; a side file, `side_file`.
//! Launch plans, totals and translations come from the Claude Code harness.

use claude_code_harness::ClaudeCode;
use harness_kit::{
    AgentSettings, Event, Harness, LaunchPlan, NeutralAction, Reducer, ReducerConfig, RunLimits,
    ToolCall,
};

pub struct Hostile;
pub struct HostileReducer;

/// Recurses `depth` times, each frame keeping 128 bytes on the shadow stack.
#[inline(never)]
fn recurse(depth: u64) -> u64 {
    if depth == 0 {
        return std::hint::black_box(1);
    }
    let buf = std::hint::black_box([depth; 16]);
    recurse(depth - 1).wrapping_add(buf[3])
}

impl Harness for Hostile {
    type Reducer = HostileReducer;
    fn describe() -> harness_kit::Capabilities {
        std::hint::black_box(recurse(u64::MAX));
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

impl Reducer for HostileReducer {
    fn new(_config: ReducerConfig) -> Self {
        HostileReducer
    }
    fn feed(&mut self, _line: &[u8], _stamp_us: u64) -> Vec<Event> {
        std::hint::black_box(recurse(u64::MAX));
        Vec::new()
    }
    fn side_file(&mut self, _path: &str, _content: Option<&[u8]>) -> Vec<Event> {
        std::hint::black_box(recurse(u64::MAX));
        Vec::new()
    }
    fn finish(&mut self, _truncated: Option<&[u8]>) -> Vec<Event> {
        std::hint::black_box(recurse(u64::MAX));
        Vec::new()
    }
}

harness_kit::export_harness!(Hostile);
