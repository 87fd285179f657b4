//! A harness component built against `coder-eval:harness@9.0.0` (a version the host does
//! not speak). The host must refuse it by reading its exports, before instantiating it.
#![cfg(target_arch = "wasm32")]

wit_bindgen::generate!({
    path: ["../../../wit/events@0.1.0", "wit"],
    world: "coder-eval:harness/harness@9.0.0",
    generate_all,
});

use coder_eval::events::types::Event;
use exports::coder_eval::harness::{launch, reducer};

struct Wrong;
struct WrongReducer;

impl launch::Guest for Wrong {
    fn plan(_: launch::AgentSettings, _: launch::RunLimits) -> Result<launch::LaunchPlan, String> {
        Err("wrong version".into())
    }
    fn translate_action(_: launch::NeutralAction, _: String) -> launch::ToolCall {
        launch::ToolCall {
            name: String::new(),
            arguments_json: "{}".into(),
        }
    }
}

impl reducer::Guest for Wrong {
    type StreamReducer = WrongReducer;
}

impl reducer::GuestStreamReducer for WrongReducer {
    fn new(_: reducer::ReducerConfig) -> Self {
        WrongReducer
    }
    fn feed(&self, _: Vec<u8>, _: u64) -> Vec<Event> {
        Vec::new()
    }
    fn finish(&self, _: Option<Vec<u8>>) -> Vec<Event> {
        Vec::new()
    }
}

export!(Wrong);
