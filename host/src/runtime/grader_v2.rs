//! Graders of `coder-eval:grader@0.2.0` (events@0.2.0): batch grading as for 0.1.0, and
//! live watchers (the `live` interface of the `live-grader` world) for `stop_early`.
//!
//! A live watcher is one component instance in its own store, armed once with the
//! criterion's parameters and the prompt, then called once per event. It runs in the
//! graders' sandbox (no network, no environment, frozen clocks, seeded randomness, the
//! memory cap) without the workspace (a live verdict decides from the events alone), and
//! each call gets fresh fuel that depends only on the event's size, so a replay of the
//! recording traps, or decides, at the same event.

use super::contract;
use super::sandbox::{arm, classify, new_store};
use super::{Budget, ComponentError, CpuBound, HostState, LoadedComponent, engine};
use crate::results::StampedEvent;
use serde::{Deserialize, Serialize};
use std::sync::{Arc, OnceLock};
use wasmtime::Store;
use wasmtime::component::{ComponentType, Linker, Lower, ResourceAny};

mod bindings {
    wasmtime::component::bindgen!({
        path: ["../wit/events@0.2.0", "../wit/grader@0.2.0"],
        world: "coder-eval:grader/live-grader@0.2.0",
        with: { "coder-eval:events/types": crate::runtime::events::wit_v0_2 },
    });
}

use super::events::to_wit_v0_2 as to_wit;
use bindings::coder_eval::grader::types as wg;
use bindings::exports::coder_eval::grader::live as wl;

use super::verdict::{GUEST_WORKSPACE, GradeResult, GraderVerdict, grader_text, kept};

/// Which verdicts an armed criterion instance can reach live (`live.decidability`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Decidability {
    pub can_pass: bool,
    pub can_fail: bool,
}

/// A live watcher's answer after one event (`live.live-verdict`).
#[derive(Debug, Clone, PartialEq)]
pub enum LiveVerdict {
    Undecided,
    /// Met, with this score (0.0 to 1.0).
    Passed(f64),
    /// Not met; the reason, for people.
    Failed(String),
}

/// One armed criterion's live watcher, as the early stop (`turn::early_stop`) drives it:
/// the component instance in the host ([`LiveInstance`]), a scripted double in tests. `Err` is a failure of the watcher (a trap, out of fuel): it disarms
/// the early stop.
pub trait LiveWatcher {
    fn observe(&mut self, event: &StampedEvent) -> Result<LiveVerdict, String>;
}

impl<T: LiveWatcher + ?Sized> LiveWatcher for Box<T> {
    fn observe(&mut self, event: &StampedEvent) -> Result<LiveVerdict, String> {
        (**self).observe(event)
    }
}

/// A watcher's call budget: fuel for one event (a regex over a long command stays far
/// inside it; a loop stops in well under a second), the wall-clock backstop, the memory
/// cap of graders.
pub(crate) const WATCHER: Budget = Budget {
    fuel: Some(super::Fuel {
        base: 50_000_000,
        per_byte: 100,
    }),
    deadline: std::time::Duration::from_secs(10),
    deadline_per_mib: std::time::Duration::ZERO,
    memory_bytes: 256 << 20,
};

fn linker() -> &'static Linker<HostState> {
    static LINKER: OnceLock<Linker<HostState>> = OnceLock::new();
    LINKER.get_or_init(|| {
        let mut linker = Linker::new(engine(CpuBound::Fuel));
        super::sandbox::link_wasi(&mut linker);
        linker
    })
}

/// Whether the component exports the `live` interface of grader@0.2.0.
pub(crate) fn exports_live(loaded: &LoadedComponent) -> bool {
    let ty = loaded.component.component_type();
    let wanted = format!("{}/live@0.2.0", contract::GRADER.package);
    ty.exports(loaded.component.engine())
        .any(|(n, _)| n == wanted)
}

/// A trajectory converted once to the 0.2.0 WIT types.
#[derive(Clone)]
pub(crate) struct Trajectory {
    events: Arc<Vec<wg::StampedEvent>>,
    bytes: usize,
}

impl Trajectory {
    pub(crate) fn new(events: &[StampedEvent]) -> Trajectory {
        let mut bytes = 0usize;
        let events = events
            .iter()
            .map(|s| {
                let (event, size) = to_wit(&s.event);
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

/// Runs a 0.2.0 grader's `grade` once, in a fresh sandboxed instance (as
/// `grader::grade` does for 0.1.0).
pub(crate) fn grade(
    loaded: &LoadedComponent,
    params_json: &str,
    trajectory: &Trajectory,
    prompt: &str,
    workspace: &std::path::Path,
) -> Result<Result<GraderVerdict, String>, ComponentError> {
    let name = loaded.name.to_string();
    let budget = Budget::GRADER;
    let mut store =
        new_store(loaded, budget, Some(workspace)).map_err(|source| ComponentError::Read {
            component: name.clone(),
            path: workspace.to_path_buf(),
            source,
        })?;
    let instance = instantiate(&mut store, loaded, budget)?;
    let interface = format!("{}/criterion@0.2.0", contract::GRADER.package);
    let missing = || ComponentError::WrongWorld {
        component: name.clone(),
        world: format!("{}/grader@0.2.0", contract::GRADER.package),
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
        .map_err(|source| ComponentError::Instantiate {
            component: name.clone(),
            source,
        })?;
    let args = GradingInputRef {
        params_json,
        trajectory: &trajectory.events,
        prompt,
        workspace: GUEST_WORKSPACE,
    };
    let armed = arm(
        &mut store,
        budget,
        params_json.len() + prompt.len() + trajectory.bytes,
    );
    let (result,) = func
        .call(&mut store, (args,))
        .map_err(|e| classify(&mut store, e, &name, "criterion.grade", budget, armed))?;
    Ok(kept(result))
}

fn instantiate(
    store: &mut Store<HostState>,
    loaded: &LoadedComponent,
    budget: Budget,
) -> Result<wasmtime::component::Instance, ComponentError> {
    let name = loaded.name.to_string();
    let init_armed = arm(store, budget, 0);
    match linker().instantiate(&mut *store, &loaded.component) {
        Ok(instance) => Ok(instance),
        Err(e) if e.downcast_ref::<wasmtime::Trap>().is_some() => {
            Err(classify(store, e, &name, "instantiate", budget, init_armed))
        }
        Err(source) => Err(ComponentError::Instantiate {
            component: name,
            source,
        }),
    }
}

/// One armed live watcher: its own store and instance, and the watcher resource.
pub struct LiveInstance {
    name: String,
    store: Store<HostState>,
    live: wl::Guest,
    watcher: ResourceAny,
    decidability: Decidability,
}

impl LiveInstance {
    /// Arms a watcher of `loaded` for these parameters and prompt. `Ok(Err(message))` is
    /// the grader's own refusal (these parameters cannot be watched); `Err` a failure of
    /// the component (it does not export `live`, it trapped).
    pub fn arm(
        loaded: &LoadedComponent,
        params_json: &str,
        prompt: &str,
    ) -> Result<Result<LiveInstance, String>, ComponentError> {
        let name = loaded.name.to_string();
        let mut store =
            new_store(loaded, WATCHER, None).map_err(|source| ComponentError::Read {
                component: name.clone(),
                path: Default::default(),
                source,
            })?;
        let instance = instantiate(&mut store, loaded, WATCHER)?;
        let wrong = |source| ComponentError::Instantiate {
            component: name.clone(),
            source,
        };
        let world = bindings::LiveGrader::new(&mut store, &instance).map_err(wrong)?;
        let live = world.coder_eval_grader_live().clone();
        let armed = arm(&mut store, WATCHER, params_json.len() + prompt.len());
        let armed = live
            .watcher()
            .call_arm(&mut store, params_json, prompt)
            .map_err(|e| classify(&mut store, e, &name, "live.watcher.arm", WATCHER, armed))?;
        let watcher = match armed {
            Ok(w) => w,
            Err(e) => return Ok(Err(grader_text(&e.message))),
        };
        let armed = arm(&mut store, WATCHER, 0);
        let d = live
            .watcher()
            .call_decidability(&mut store, watcher)
            .map_err(|e| {
                classify(
                    &mut store,
                    e,
                    &name,
                    "live.watcher.decidability",
                    WATCHER,
                    armed,
                )
            })?;
        Ok(Ok(LiveInstance {
            name,
            store,
            live,
            watcher,
            decidability: Decidability {
                can_pass: d.can_pass,
                can_fail: d.can_fail,
            },
        }))
    }

    /// What this instance can decide live.
    pub fn decidability(&self) -> Decidability {
        self.decidability
    }

    /// One event, converted to the WIT types by the caller ([`to_wit`]).
    pub(crate) fn observe_wit(
        &mut self,
        event: &wg::StampedEvent,
        bytes: usize,
    ) -> Result<LiveVerdict, ComponentError> {
        let armed = arm(&mut self.store, WATCHER, bytes);
        let verdict = self
            .live
            .watcher()
            .call_observe(&mut self.store, self.watcher, event)
            .map_err(|e| {
                classify(
                    &mut self.store,
                    e,
                    &self.name,
                    "live.watcher.observe",
                    WATCHER,
                    armed,
                )
            })?;
        Ok(match verdict {
            wl::LiveVerdict::Undecided => LiveVerdict::Undecided,
            wl::LiveVerdict::Passed(s) => LiveVerdict::Passed(s),
            wl::LiveVerdict::Failed(why) => LiveVerdict::Failed(grader_text(&why)),
        })
    }
}

impl LiveWatcher for LiveInstance {
    fn observe(&mut self, event: &StampedEvent) -> Result<LiveVerdict, String> {
        let (wit_event, size) = to_wit(&event.event);
        let stamped = wg::StampedEvent {
            stamp_us: event.stamp_us,
            event: wit_event,
        };
        super::off_runtime(|| self.observe_wit(&stamped, size + 16)).map_err(|e| {
            let mut text = e.to_string();
            let mut source = std::error::Error::source(&e);
            while let Some(cause) = source {
                text.push_str(&format!(": {cause}"));
                source = cause.source();
            }
            text
        })
    }
}
