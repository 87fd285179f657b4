//! A hostile reducer that panics on the first line it is fed, and a translator that panics
//! on a shell action whose command contains `PANIC`.
//! Launch plans come from the Claude Code harness, so only those two misbehave.

use claude_code_harness::ClaudeCode;
use harness_kit::{
    AgentSettings, Event, Harness, LaunchPlan, NeutralAction, Reducer, ReducerConfig, RunLimits,
    ToolCall,
};

pub struct Hostile;
pub struct HostileReducer;

impl Harness for Hostile {
    type Reducer = HostileReducer;
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
        if let NeutralAction::Shell { command } = action
            && command.contains("PANIC")
        {
            panic!("translate_action panicked on purpose at `{command}`")
        }
        ClaudeCode::translate_action(action, workspace)
    }
}

impl Reducer for HostileReducer {
    fn new(_config: ReducerConfig) -> Self {
        HostileReducer
    }
    #[allow(unreachable_code, unused_variables)]
    fn feed(&mut self, _line: &[u8], stamp_us: u64) -> Vec<Event> {
        panic!("reducer panicked on purpose at {stamp_us} us")
    }
    fn finish(&mut self, _truncated: Option<&[u8]>) -> Vec<Event> {
        Vec::new()
    }
}

harness_kit::export_harness!(Hostile);
