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
use crate::results::StampedEvent;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use wasmtime::component::{ComponentType, Lift, Linker, Lower};

mod bindings {
    wasmtime::component::bindgen!({
        path: ["../wit/events@0.1.0", "../wit/grader@0.1.0"],
        world: "coder-eval:grader/grader@0.1.0",
        with: { "coder-eval:events/types": crate::runtime::events::wit },
    });
}

use super::contract::{self, GRADER};
use super::events::to_wit;
use bindings::coder_eval::grader::types as wg;

/// Bytes of a verdict's `details` (or an error's `message`) the host keeps.
pub(crate) const MAX_VERDICT_TEXT: usize = 64 * 1024;
/// The guest path of the workspace.
pub(crate) const GUEST_WORKSPACE: &str = "/workspace";

/// Checks a component against the grader contract (see [`contract`]): it exports
/// `criterion` of `coder-eval:grader@0.1.0` and imports nothing but WASI and the
/// contract's types.
pub(crate) fn check(loaded: &LoadedComponent) -> Result<(), ComponentError> {
    contract::check(loaded, &GRADER).map(|_| ())
}

/// A trajectory converted once to the WIT types, shared by every criterion of a run.
#[derive(Clone)]
pub(crate) struct Trajectory {
    events: Arc<Vec<wg::StampedEvent>>,
    bytes: usize,
}

impl Trajectory {
    /// Converts the host's trajectory.
    pub(crate) fn new(events: &[StampedEvent]) -> Trajectory {
        let mut bytes = 0usize;
        let events = events
            .iter()
            .filter_map(|s| {
                let (event, size) = to_wit(&s.event)?;
                bytes += size + 16;
                Some(wg::StampedEvent {
                    stamp_us: s.stamp_us,
                    event,
                })
            })
            .collect();
        Trajectory {
            events: Arc::new(events),
            bytes,
        }
    }
}

/// What one `grade` call receives.
#[derive(Clone)]
pub(crate) struct GradingInput {
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
pub(crate) struct GraderVerdict {
    /// As returned (the caller checks the range).
    pub score: f64,
    /// At most [`MAX_VERDICT_TEXT`] bytes of the details, with a note when cut.
    pub details: String,
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
    /// The grader's own view of whether it is met: advisory, the host judges by the
    /// criterion's threshold.
    #[allow(dead_code)]
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
pub(crate) fn grade(
    loaded: &LoadedComponent,
    input: &GradingInput,
) -> Result<Result<GraderVerdict, String>, ComponentError> {
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
    let version = contract::Version::V0_1_0.as_str();
    let interface = format!("{}/criterion@{version}", GRADER.package);
    let missing = || ComponentError::WrongWorld {
        component: name.clone(),
        world: format!("{}/grader@{version}", GRADER.package),
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
        Ok(raw) => Ok(GraderVerdict {
            score: raw.score,
            details: grader_text(&raw.details),
        }),
        Err(raw) => Err(grader_text(&raw.message)),
    })
}

/// `text` cut to [`MAX_VERDICT_TEXT`] bytes on a character boundary, with a note.
pub(crate) fn grader_text(text: &str) -> String {
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
