//! A reducer that reduces as the Claude Code reducer does until it is fed a line
//! containing `PANIC`, and panics there: a reducer failing mid-stream, after it emitted
//! events (the turn keeps them; the lines after it are not reduced).

use claude_code_harness::ClaudeCode;
use harness_kit::{
    AgentSettings, Event, Harness, LaunchPlan, NeutralAction, Reducer, ReducerConfig, RunLimits,
    ToolCall,
};

pub struct LatePanicker;
pub struct LatePanickingReducer(<ClaudeCode as Harness>::Reducer);

impl Harness for LatePanicker {
    type Reducer = LatePanickingReducer;
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

impl Reducer for LatePanickingReducer {
    fn new(config: ReducerConfig) -> Self {
        LatePanickingReducer(<ClaudeCode as Harness>::Reducer::new(config))
    }
    fn feed(&mut self, line: &[u8], stamp_us: u64) -> Vec<Event> {
        if line.windows(5).any(|w| w == b"PANIC") {
            panic!("reducer panicked on purpose at {stamp_us} us, mid-stream")
        }
        self.0.feed(line, stamp_us)
    }
    fn finish(&mut self, truncated: Option<&[u8]>) -> Vec<Event> {
        self.0.finish(truncated)
    }
}

harness_kit::export_harness!(LatePanicker);
