//! Grader components (`coder-eval:grader/grader@0.1.0`, and `@0.2.0` through
//! [`super::grader_v2`]): checking the contract, and
//! calling `grade` in a sandbox that preopens the workspace read-only at `/workspace` and
//! grants nothing else. Also the contract check shared with harness components.
//!
//! Each call gets a fresh store and instance (a grader keeps no state between runs), a
//! fuel budget that depends only on the input's size (so re-grading the same run cuts a
//! looping grader off at the same instruction), the epoch deadline only as a wall-clock
//! backstop, and the grader memory cap. Of the verdict's strings the host keeps at most
//! `MAX_VERDICT_TEXT` bytes; copying one out of the guest briefly costs its full size,
//! which the guest's memory cap bounds (256 MiB).

use super::sandbox::{arm, classify, new_store};
use super::{Budget, ComponentError, CpuBound, HostState, LoadedComponent, engine};
use crate::results::StampedEvent;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use wasmtime::component::{ComponentType, Linker, Lower};

mod bindings {
    wasmtime::component::bindgen!({
        path: ["../wit/events@0.1.0", "../wit/grader@0.1.0"],
        world: "coder-eval:grader/grader@0.1.0",
        with: { "coder-eval:events/types": crate::runtime::events::wit },
    });
}

use super::contract::{self, GRADER};
use super::events::to_wit;
pub(crate) use super::verdict::GraderVerdict;
use super::verdict::{GUEST_WORKSPACE, GradeResult, kept};
use bindings::coder_eval::grader::types as wg;

/// Checks a component against the grader contract (see [`contract`]): it exports
/// `criterion` of `coder-eval:grader@0.1.0` or `@0.2.0` and imports nothing but WASI and
/// the contract's types. Returns the version.
pub(crate) fn check(loaded: &LoadedComponent) -> Result<contract::Version, ComponentError> {
    contract::check(loaded, &GRADER)
}

/// A run's trajectory for graders, converted to each contract version's WIT types once,
/// when a grader of that version first asks, and shared by every criterion of the run.
#[derive(Clone)]
pub(crate) struct Trajectory {
    source: Arc<Vec<StampedEvent>>,
    v1: Arc<OnceLock<(Vec<wg::StampedEvent>, usize)>>,
    v2: Arc<OnceLock<super::grader_v2::Trajectory>>,
}

impl Trajectory {
    /// The host's trajectory (converted later, per version).
    pub(crate) fn new(events: &[StampedEvent]) -> Trajectory {
        Trajectory {
            source: Arc::new(events.to_vec()),
            v1: Arc::default(),
            v2: Arc::default(),
        }
    }

    /// As events@0.1.0, with its approximate size in bytes.
    fn v1(&self) -> &(Vec<wg::StampedEvent>, usize) {
        self.v1.get_or_init(|| {
            let mut bytes = 0usize;
            let events = self
                .source
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
            (events, bytes)
        })
    }

    /// As events@0.2.0.
    fn v2(&self) -> &super::grader_v2::Trajectory {
        self.v2
            .get_or_init(|| super::grader_v2::Trajectory::new(&self.source))
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

#[derive(ComponentType, Lower)]
#[component(record)]
struct GradingInputRef<'a> {
    #[component(name = "params-json")]
    params_json: &'a str,
    trajectory: &'a [wg::StampedEvent],
    prompt: &'a str,
    workspace: &'a str,
}

fn linker() -> &'static Linker<HostState> {
    static LINKER: OnceLock<Linker<HostState>> = OnceLock::new();
    LINKER.get_or_init(|| {
        let mut linker = Linker::new(engine(CpuBound::Fuel));
        super::sandbox::link_wasi(&mut linker);
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
    if check(loaded)? == contract::Version::V0_2_0 {
        return super::grader_v2::grade(
            loaded,
            &input.params_json,
            input.trajectory.v2(),
            &input.prompt,
            &input.workspace,
        );
    }
    let name = loaded.name.to_string();
    let budget = Budget::GRADER;
    let mut store = new_store(loaded, budget, Some(&input.workspace)).map_err(|source| {
        ComponentError::Read {
            component: name.clone(),
            path: input.workspace.clone(),
            source,
        }
    })?;
    let init_armed = arm(&mut store, budget, 0);
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
                init_armed,
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
        trajectory: &input.trajectory.v1().0,
        prompt: &input.prompt,
        workspace: GUEST_WORKSPACE,
    };
    let input_bytes = input.params_json.len() + input.prompt.len() + input.trajectory.v1().1;
    let armed = arm(&mut store, budget, input_bytes);
    let (result,) = func
        .call(&mut store, (args,))
        .map_err(|e| classify(&mut store, e, &name, "criterion.grade", budget, armed))?;
    Ok(kept(result))
}
