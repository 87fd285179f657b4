//! Grader components (`coder-eval:grader/grader@0.1.0`): checking the contract, and
//! calling `grade` in a sandbox that preopens the workspace read-only at `/workspace` and
//! grants nothing else. Also the contract check shared with harness components.
//!
//! Each call gets a fresh store and instance (a grader keeps no state between runs), a
//! fuel budget that depends only on the input's size (so re-grading the same run cuts a
//! looping grader off at the same instruction), the epoch deadline only as a wall-clock
//! backstop, and the grader memory cap. Of the verdict's strings the host keeps at most
//! [`MAX_VERDICT_TEXT`] bytes; copying one out of the guest briefly costs its full size,
//! which the guest's memory cap bounds (256 MiB).

use super::sandbox::{arm, classify, new_store};
use super::{Budget, ComponentError, HostState, LoadedComponent, engine};
use crate::record::StampedEvent;
use harness_kit::{Event, ToolStatus, Usage};
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use wasmtime::component::{ComponentType, Lift, Linker, Lower};

mod bindings {
    wasmtime::component::bindgen!({
        path: ["../wit/events@0.1.0", "../wit/grader@0.1.0"],
        world: "coder-eval:grader/grader@0.1.0",
    });
}

use bindings::coder_eval::events::types as wit;
use bindings::coder_eval::grader::types as wg;

/// The grader contract this host speaks.
pub const GRADER_PACKAGE: &str = "coder-eval:grader";
/// Its version.
pub const GRADER_VERSION: &str = "0.1.0";
/// Bytes of a verdict's `details` (or an error's `message`) the host keeps.
pub const MAX_VERDICT_TEXT: usize = 64 * 1024;
/// The guest path of the workspace.
pub const GUEST_WORKSPACE: &str = "/workspace";

/// Checks a component against the grader contract: it exports `criterion` of
/// `coder-eval:grader@0.1.0` and imports nothing but WASI and the contract's types.
pub fn check(loaded: &LoadedComponent) -> Result<(), ComponentError> {
    check_contract(
        loaded,
        GRADER_PACKAGE,
        GRADER_VERSION,
        &["criterion"],
        "grader",
    )
}

/// A trajectory converted once to the WIT types, shared by every criterion of a run.
#[derive(Clone)]
pub struct Trajectory {
    events: Arc<Vec<wg::StampedEvent>>,
    bytes: usize,
}

impl Trajectory {
    /// Converts the host's trajectory.
    pub fn new(events: &[StampedEvent]) -> Trajectory {
        let mut bytes = 0usize;
        let events = events
            .iter()
            .map(|s| {
                let (event, size) = event(&s.event);
                bytes += size + 16;
                wg::StampedEvent {
                    stamp_us: s.stamp_us,
                    event,
                }
            })
            .collect();
        Trajectory {
            events: Arc::new(events),
            bytes,
        }
    }

    /// Events in it.
    pub fn len(&self) -> usize {
        self.events.len()
    }

    /// Whether it has no events.
    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }
}

/// What one `grade` call receives.
#[derive(Clone)]
pub struct GradingInput {
    /// The criterion's parameters as a JSON object.
    pub params_json: String,
    /// The run's events (see [`Trajectory::new`]).
    pub trajectory: Trajectory,
    /// The task's prompt.
    pub prompt: String,
    /// The host folder preopened read-only at `/workspace`.
    pub workspace: PathBuf,
}

/// A grader's judgement, as the host keeps it.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    /// As returned (the caller checks the range).
    pub score: f64,
    /// The grader's own view of whether it is met (advisory).
    pub pass: bool,
    /// At most [`MAX_VERDICT_TEXT`] bytes of the details, with a note when cut.
    pub details: String,
    /// The full size of the details the grader returned, bytes.
    pub details_bytes: usize,
}

#[derive(ComponentType, Lower)]
#[component(record)]
struct GradingInputRef<'a> {
    #[component(name = "params-json")]
    params_json: &'a str,
    trajectory: &'a [wg::StampedEvent],
    prompt: &'a str,
    workspace: &'a str,
}

#[derive(ComponentType, Lift)]
#[component(record)]
struct RawVerdict {
    score: f64,
    pass: bool,
    details: String,
}

#[derive(ComponentType, Lift)]
#[component(record)]
struct RawError {
    message: String,
}

type GradeResult = (Result<RawVerdict, RawError>,);

fn linker() -> &'static Linker<HostState> {
    static LINKER: OnceLock<Linker<HostState>> = OnceLock::new();
    LINKER.get_or_init(|| {
        let mut linker = Linker::new(engine());
        wasmtime_wasi::p2::add_to_linker_sync(&mut linker).expect("WASI links");
        linker
    })
}

/// Runs the grader's `grade` once, in a fresh sandboxed instance. `Ok(Err(message))` is
/// the grader's own error value (it could not judge); `Err` is a failure: it could not be
/// instantiated, ran out of fuel or memory, or trapped (a panic).
pub fn grade(
    loaded: &LoadedComponent,
    input: &GradingInput,
) -> Result<Result<Verdict, String>, ComponentError> {
    let name = loaded.name.to_string();
    let budget = Budget::GRADER;
    let mut store =
        new_store(budget, Some(&input.workspace)).map_err(|source| ComponentError::Read {
            component: name.clone(),
            path: input.workspace.clone(),
            source,
        })?;
    let init_fuel = arm(&mut store, budget, 0);
    let instantiate = |source| ComponentError::Instantiate {
        component: name.clone(),
        source,
    };
    let instance = match linker().instantiate(&mut store, &loaded.component) {
        Ok(instance) => instance,
        // A trap while initializing (fuel, memory, a panic) is classified like one in
        // `grade`; anything else (a missing import) is an instantiation error.
        Err(e) if e.downcast_ref::<wasmtime::Trap>().is_some() => {
            return Err(classify(
                &mut store,
                e,
                &name,
                "instantiate",
                budget,
                init_fuel,
            ));
        }
        Err(e) => return Err(instantiate(e)),
    };
    let interface = format!("{GRADER_PACKAGE}/criterion@{GRADER_VERSION}");
    let missing = || ComponentError::WrongWorld {
        component: name.clone(),
        world: format!("{GRADER_PACKAGE}/grader@{GRADER_VERSION}"),
        exports: format!("no `grade` in `{interface}`"),
    };
    let iface = instance
        .get_export_index(&mut store, None, &interface)
        .ok_or_else(missing)?;
    let func = instance
        .get_export_index(&mut store, Some(&iface), "grade")
        .ok_or_else(missing)?;
    let func = instance
        .get_typed_func::<(GradingInputRef<'_>,), GradeResult>(&mut store, &func)
        .map_err(instantiate)?;
    let args = GradingInputRef {
        params_json: &input.params_json,
        trajectory: &input.trajectory.events,
        prompt: &input.prompt,
        workspace: GUEST_WORKSPACE,
    };
    let input_bytes = input.params_json.len() + input.prompt.len() + input.trajectory.bytes;
    let fuel = arm(&mut store, budget, input_bytes);
    let (result,) = func
        .call(&mut store, (args,))
        .map_err(|e| classify(&mut store, e, &name, "criterion.grade", budget, fuel))?;
    Ok(match result {
        Ok(raw) => Ok(Verdict {
            score: raw.score,
            pass: raw.pass,
            details: grader_text(&raw.details),
            details_bytes: raw.details.len(),
        }),
        Err(raw) => Err(grader_text(&raw.message)),
    })
}

/// `text` cut to [`MAX_VERDICT_TEXT`] bytes on a character boundary, with a note.
pub fn grader_text(text: &str) -> String {
    if text.len() <= MAX_VERDICT_TEXT {
        return text.to_string();
    }
    let mut end = MAX_VERDICT_TEXT;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!(
        "{}… [truncated: the grader returned {} bytes, {MAX_VERDICT_TEXT} kept]",
        &text[..end],
        text.len()
    )
}

fn usage(u: &Usage) -> wit::Usage {
    wit::Usage {
        input_tokens: u.input_tokens,
        output_tokens: u.output_tokens,
        cache_read_tokens: u.cache_read_tokens,
        cache_write_tokens: u.cache_write_tokens,
    }
}

fn len(s: &Option<String>) -> usize {
    s.as_ref().map_or(0, String::len)
}

/// The host event as the WIT event, and its approximate size in bytes (for fuel).
fn event(e: &Event) -> (wit::Event, usize) {
    match e.clone() {
        Event::SessionStarted {
            session_id,
            cli_version,
            model,
            tools,
        } => {
            let size = len(&session_id)
                + len(&cli_version)
                + len(&model)
                + tools.iter().map(String::len).sum::<usize>();
            let event = wit::SessionStarted {
                session_id,
                cli_version,
                model,
                tools,
            };
            (wit::Event::SessionStarted(event), size)
        }
        Event::ModelCallStarted {
            message_id,
            parent_call_id,
        } => {
            let size = len(&message_id) + len(&parent_call_id);
            let event = wit::ModelCallStarted {
                message_id,
                parent_call_id,
            };
            (wit::Event::ModelCallStarted(event), size)
        }
        Event::AssistantMessage {
            message_id,
            parent_call_id,
            text,
            usage: u,
            cost_usd,
        } => {
            let size = message_id.len() + len(&parent_call_id) + text.len();
            let event = wit::AssistantMessage {
                message_id,
                parent_call_id,
                text,
                usage: u.as_ref().map(usage),
                cost_usd,
            };
            (wit::Event::AssistantMessage(event), size)
        }
        Event::ToolCallStarted {
            call_id,
            name,
            input_json,
            parent_call_id,
        } => {
            let size = call_id.len() + name.len() + input_json.len() + len(&parent_call_id);
            let event = wit::ToolCallStarted {
                call_id,
                name,
                input_json,
                parent_call_id,
            };
            (wit::Event::ToolCallStarted(event), size)
        }
        Event::ToolCallFinished {
            call_id,
            status,
            output_excerpt,
            exit_code,
            cli_duration_ms,
        } => {
            let size = call_id.len() + output_excerpt.len();
            let event = wit::ToolCallFinished {
                call_id,
                status: match status {
                    ToolStatus::Ok => wit::ToolStatus::Ok,
                    ToolStatus::Error => wit::ToolStatus::Error,
                    ToolStatus::Unknown => wit::ToolStatus::Unknown,
                },
                output_excerpt,
                exit_code,
                cli_duration_ms,
            };
            (wit::Event::ToolCallFinished(event), size)
        }
        Event::FinalResult {
            success,
            error_kind,
            error_message,
            max_turns_reached,
            num_turns,
            cost_usd,
            duration_ms,
            text,
            usage: u,
        } => {
            let size = len(&error_kind) + len(&error_message) + len(&text);
            let event = wit::FinalResult {
                success,
                error_kind,
                error_message,
                max_turns_reached,
                num_turns,
                cost_usd,
                duration_ms,
                text,
                usage: u.as_ref().map(usage),
            };
            (wit::Event::FinalResult(event), size)
        }
        Event::Diagnostic { kind, message, raw } => {
            let size = kind.len() + message.len() + raw.len();
            let event = wit::Diagnostic { kind, message, raw };
            (wit::Event::Diagnostic(event), size)
        }
    }
}

/// Checks that `loaded` exports `interfaces` of `package@version` and imports nothing but
/// WASI and the contract's own type interfaces. A component built against another version
/// of the package is refused before it is instantiated.
pub fn check_contract(
    loaded: &LoadedComponent,
    package: &str,
    version: &str,
    interfaces: &[&str],
    world: &str,
) -> Result<(), ComponentError> {
    let ty = loaded.component.component_type();
    let exports: Vec<String> = ty.exports(engine()).map(|(n, _)| n.to_string()).collect();
    let prefix = format!("{package}/");
    for name in exports.iter().filter(|n| n.starts_with(&prefix)) {
        let found = name.rsplit_once('@').map_or("(none)", |(_, v)| v);
        if found != version {
            return Err(ComponentError::UnsupportedVersion {
                component: loaded.name.to_string(),
                package: package.to_string(),
                package_dir: package.rsplit(':').next().unwrap_or(package).to_string(),
                found: found.to_string(),
                supported: version.to_string(),
            });
        }
    }
    for interface in interfaces {
        let wanted = format!("{package}/{interface}@{version}");
        if !exports.contains(&wanted) {
            return Err(ComponentError::WrongWorld {
                component: loaded.name.to_string(),
                world: format!("{package}/{world}@{version}"),
                exports: if exports.is_empty() {
                    "none".into()
                } else {
                    exports.join(", ")
                },
            });
        }
    }
    let own_types = format!("{package}/types@");
    for (import, _) in ty.imports(engine()) {
        let granted = import.starts_with("wasi:")
            || import.starts_with("coder-eval:events/types@")
            || import.starts_with(&own_types);
        if !granted {
            return Err(ComponentError::ForbiddenImport {
                component: loaded.name.to_string(),
                import: import.to_string(),
            });
        }
    }
    Ok(())
}
