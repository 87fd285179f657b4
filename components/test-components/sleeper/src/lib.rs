//! A reducer that sleeps an hour (a WASI `subscribe-duration` through `std::thread::sleep`)
//! before reducing each line as the Claude Code reducer does: a sleep must not hold the
//! host (sleeps are virtual in the sandbox, whose clocks are frozen).

use claude_code_harness::ClaudeCode;
use harness_kit::{
    AgentSettings, Event, Harness, LaunchPlan, NeutralAction, Reducer, ReducerConfig, RunLimits,
    ToolCall,
};
use std::time::Duration;

pub struct Sleeper;
pub struct SleepingReducer(<ClaudeCode as Harness>::Reducer);

impl Harness for Sleeper {
    type Reducer = SleepingReducer;
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

impl Reducer for SleepingReducer {
    fn new(config: ReducerConfig) -> Self {
        SleepingReducer(<ClaudeCode as Harness>::Reducer::new(config))
    }
    fn feed(&mut self, line: &[u8], stamp_us: u64) -> Vec<Event> {
        std::thread::sleep(Duration::from_secs(3600));
        self.0.feed(line, stamp_us)
    }
    fn finish(&mut self, truncated: Option<&[u8]>) -> Vec<Event> {
        self.0.finish(truncated)
    }
}

harness_kit::export_harness!(Sleeper);
