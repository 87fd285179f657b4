//! Binds a [`Criterion`] and its live [`Watch`] to the WIT world
//! `coder-eval:grader/live-grader@0.2.0` (events@0.2.0). Only built for wasm32;
//! [`export_live_grader!`](crate::export_live_grader) is the entry point.

use crate::{
    Criterion, Decidability, Event, GradingInput, LiveVerdict, StampedEvent, ToolStatus,
    UnreportedKind, Usage, Watch,
};
use std::cell::RefCell;
use std::marker::PhantomData;

wit_bindgen::generate!({
    path: ["../../wit/events@0.2.0", "../../wit/grader@0.2.0"],
    world: "coder-eval:grader/live-grader@0.2.0",
    pub_export_macro: true,
    export_macro_name: "export_live",
    default_bindings_module: "grader_kit::wasm_live",
    generate_all,
});

use coder_eval::events::types as wit;
use exports::coder_eval::grader::{criterion, live};

/// The component type a live criterion is exported as: `C` grades, `W` watches.
pub struct Component<C, W>(PhantomData<(C, W)>);

/// One armed watcher; the host calls it one event at a time.
pub struct Watcher<W>(RefCell<W>);

fn params(json: &str) -> Result<serde_json::Value, String> {
    if json.trim().is_empty() {
        return Ok(serde_json::Value::Object(Default::default()));
    }
    serde_json::from_str(json).map_err(|e| format!("params are not valid JSON: {e}"))
}

impl<C: Criterion, W: Watch> criterion::Guest for Component<C, W> {
    fn grade(
        input: criterion::GradingInput,
    ) -> Result<criterion::Verdict, criterion::GradingError> {
        let params =
            params(&input.params_json).map_err(|message| criterion::GradingError { message })?;
        let input = GradingInput {
            params,
            trajectory: input.trajectory.into_iter().map(stamped).collect(),
            prompt: input.prompt,
            workspace: input.workspace,
        };
        match C::grade(&input) {
            Ok(v) => Ok(criterion::Verdict {
                score: v.score,
                pass: v.pass,
                details: v.details,
            }),
            Err(message) => Err(criterion::GradingError { message }),
        }
    }
}

impl<C: Criterion, W: Watch> live::Guest for Component<C, W> {
    type Watcher = Watcher<W>;
}

impl<W: Watch> live::GuestWatcher for Watcher<W> {
    fn arm(params_json: String, prompt: String) -> Result<live::Watcher, live::GradingError> {
        let params = params(&params_json).map_err(|message| live::GradingError { message })?;
        let watcher = W::arm(&params, &prompt).map_err(|message| live::GradingError { message })?;
        Ok(live::Watcher::new(Watcher(RefCell::new(watcher))))
    }

    fn decidability(&self) -> live::Decidability {
        let Decidability { can_pass, can_fail } = self.0.borrow().decidability();
        live::Decidability { can_pass, can_fail }
    }

    fn observe(&self, event: live::StampedEvent) -> live::LiveVerdict {
        match self.0.borrow_mut().observe(&stamped(event)) {
            LiveVerdict::Undecided => live::LiveVerdict::Undecided,
            LiveVerdict::Passed(score) => live::LiveVerdict::Passed(score),
            LiveVerdict::Failed(why) => live::LiveVerdict::Failed(why),
        }
    }
}

fn stamped(s: coder_eval::grader::types::StampedEvent) -> StampedEvent {
    StampedEvent {
        stamp_us: s.stamp_us,
        event: event(s.event),
    }
}

fn usage(u: wit::Usage) -> Usage {
    Usage {
        input_tokens: u.input_tokens,
        output_tokens: u.output_tokens,
        cache_read_tokens: u.cache_read_tokens,
        cache_write_tokens: u.cache_write_tokens,
    }
}

fn event(e: wit::Event) -> Event {
    match e {
        wit::Event::SessionStarted(s) => Event::SessionStarted {
            session_id: s.session_id,
            cli_version: s.cli_version,
            model: s.model,
            tools: s.tools,
        },
        wit::Event::ModelCallStarted(m) => Event::ModelCallStarted {
            message_id: m.message_id,
            parent_call_id: m.parent_call_id,
        },
        wit::Event::AssistantMessage(m) => Event::AssistantMessage {
            message_id: m.message_id,
            parent_call_id: m.parent_call_id,
            text: m.text,
            usage: m.usage.map(usage),
            cost_usd: m.cost_usd,
        },
        wit::Event::ToolCallStarted(t) => Event::ToolCallStarted {
            call_id: t.call_id,
            name: t.name,
            input_json: t.input_json,
            parent_call_id: t.parent_call_id,
        },
        wit::Event::ToolCallFinished(t) => Event::ToolCallFinished {
            call_id: t.call_id,
            status: match t.status {
                wit::ToolStatus::Ok => ToolStatus::Ok,
                wit::ToolStatus::Error => ToolStatus::Error,
                wit::ToolStatus::Unknown => ToolStatus::Unknown,
                wit::ToolStatus::Denied => ToolStatus::Denied,
            },
            output_excerpt: t.output_excerpt,
            exit_code: t.exit_code,
            cli_duration_ms: t.cli_duration_ms,
        },
        wit::Event::FinalResult(r) => Event::FinalResult {
            success: r.success,
            error_kind: r.error_kind,
            error_message: r.error_message,
            max_turns_reached: r.max_turns_reached,
            num_turns: r.num_turns,
            cost_usd: r.cost_usd,
            duration_ms: r.duration_ms,
            text: r.text,
            usage: r.usage.map(usage),
        },
        wit::Event::Diagnostic(d) => Event::Diagnostic {
            kind: d.kind,
            message: d.message,
            raw: d.raw,
        },
        wit::Event::ModelCallRetried(r) => Event::ModelCallRetried {
            call_started: r.call_started,
            abandoned_message_id: r.abandoned_message_id,
            parent_call_id: r.parent_call_id,
            attempt: r.attempt,
            delay_ms: r.delay_ms,
            status: r.status,
            error: r.error,
            announced: r.announced,
        },
        wit::Event::Unreported(u) => Event::Unreported {
            kind: match u.kind {
                wit::UnreportedKind::Usage => UnreportedKind::Usage,
                wit::UnreportedKind::Cost => UnreportedKind::Cost,
                wit::UnreportedKind::SubagentWork => UnreportedKind::SubagentWork,
            },
            call_id: u.call_id,
            reason: u.reason,
        },
    }
}
