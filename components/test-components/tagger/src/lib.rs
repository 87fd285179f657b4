//! A variant of the Claude Code reducer that tags what it emits: tool names get a
//! `tagged:` prefix and message text a `[tagged] ` prefix. The host's hot-swap test
//! passes it with `--components` and expects the output to change.

use claude_code_harness::{ClaudeCode, ClaudeReducer};
use harness_kit::{
    AgentSettings, Event, Harness, LaunchPlan, NeutralAction, Reducer, ReducerConfig, RunLimits,
    ToolCall,
};

pub struct Tagger;
pub struct TaggedReducer(ClaudeReducer);

impl Harness for Tagger {
    type Reducer = TaggedReducer;
    fn describe() -> harness_kit::Capabilities {
        ClaudeCode::describe()
    }
    fn totals(cli_version: Option<&str>) -> harness_kit::TotalsScope {
        ClaudeCode::totals(cli_version)
    }
    fn usage_totals(cli_version: Option<&str>) -> harness_kit::TotalsScope {
        ClaudeCode::usage_totals(cli_version)
    }
    fn plan(settings: &AgentSettings, limits: &RunLimits) -> Result<LaunchPlan, String> {
        ClaudeCode::plan(settings, limits)
    }
    fn translate_action(action: &NeutralAction, workspace: &str) -> ToolCall {
        ClaudeCode::translate_action(action, workspace)
    }
}

fn tag(event: Event) -> Event {
    match event {
        Event::ToolCallStarted {
            call_id,
            name,
            input_json,
            parent_call_id,
        } => Event::ToolCallStarted {
            call_id,
            name: format!("tagged:{name}"),
            input_json,
            parent_call_id,
        },
        Event::AssistantMessage {
            message_id,
            parent_call_id,
            text,
            usage,
            cost_usd,
        } => Event::AssistantMessage {
            message_id,
            parent_call_id,
            text: format!("[tagged] {text}"),
            usage,
            cost_usd,
        },
        other => other,
    }
}

impl Reducer for TaggedReducer {
    fn new(config: ReducerConfig) -> Self {
        TaggedReducer(ClaudeReducer::new(config))
    }
    fn feed(&mut self, line: &[u8], stamp_us: u64) -> Vec<Event> {
        self.0.feed(line, stamp_us).into_iter().map(tag).collect()
    }
    fn finish(&mut self, truncated: Option<&[u8]>) -> Vec<Event> {
        self.0.finish(truncated).into_iter().map(tag).collect()
    }
}

// Stays on the released harness@0.1.0 world: the host's tests load it to prove that a
// 0.1.0 component still runs beside 0.2.0 ones.
harness_kit::export_harness_v0_1!(Tagger);
