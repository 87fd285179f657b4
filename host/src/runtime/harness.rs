//! Harness components (`coder-eval:harness/harness@0.2.0` and the released `@0.1.0`):
//! checking the contract, calling `launch` and driving a `stream-reducer`. Both versions
//! are converted to the host's one model (harness-kit's, which is 0.2.0's) here, at the
//! boundary; what 0.1.0 lacks gets the meaning 0.1.0 had (see [`Launcher::describe`],
//! [`Launcher::totals`], [`Reducer::side_file`]).

use super::contract::{self, Version};
use super::sandbox::{arm, classify, new_store};
use super::{Budget, ComponentError, HostState, LoadedComponent};
use harness_kit::{
    AgentSettings, Capabilities, Event, LaunchPlan, NeutralAction, ReducerConfig, RunLimits,
    ToolCall, TotalsScope,
};
use std::sync::{Arc, OnceLock};
use wasmtime::Store;
use wasmtime::component::{Linker, ResourceAny};

mod bindings {
    wasmtime::component::bindgen!({
        path: ["../wit/events@0.1.0", "../wit/harness@0.1.0"],
        world: "coder-eval:harness/harness@0.1.0",
        with: { "coder-eval:events/types": crate::runtime::events::wit },
    });
}

mod bindings_v0_2 {
    wasmtime::component::bindgen!({
        path: ["../wit/events@0.2.0", "../wit/harness@0.2.0"],
        world: "coder-eval:harness/harness@0.2.0",
        with: { "coder-eval:events/types": crate::runtime::events::wit_v0_2 },
    });
}

use super::events::{from_wit, from_wit_v0_2};
use convert::*;

mod convert;
use bindings::exports::coder_eval::harness::launch as wl;
use bindings::exports::coder_eval::harness::reducer as wr;
use bindings_v0_2::exports::coder_eval::harness::launch as wl2;
use bindings_v0_2::exports::coder_eval::harness::reducer as wr2;

/// A harness instance's bindings, by the contract version it exports.
enum Bindings {
    V0_1(bindings::Harness),
    V0_2(bindings_v0_2::Harness),
}

fn linker() -> &'static Linker<HostState> {
    static LINKER: OnceLock<Linker<HostState>> = OnceLock::new();
    LINKER.get_or_init(|| {
        let mut linker = Linker::new(super::engine(super::CpuBound::Deadline));
        super::sandbox::link_wasi(&mut linker);
        linker
    })
}

/// Checks a component against the harness contract (see `runtime::contract`): it exports
/// `launch` and `reducer` of `coder-eval:harness@0.2.0` or `@0.1.0`, and imports nothing
/// but WASI and the event types.
pub fn check(loaded: &LoadedComponent) -> Result<(), ComponentError> {
    contract::check(loaded, &contract::HARNESS).map(|_| ())
}

/// One instance of a harness component, for `launch` calls.
pub struct Launcher {
    name: Arc<str>,
    store: Store<HostState>,
    bindings: Bindings,
}

impl Launcher {
    /// Instantiates the component (after [`check`]).
    pub fn new(loaded: &LoadedComponent) -> Result<Launcher, ComponentError> {
        let (store, bindings) = super::off_runtime(|| instantiate(loaded))?;
        Ok(Launcher {
            name: loaded.name.clone(),
            store,
            bindings,
        })
    }

    /// The contract version the component exports.
    pub fn version(&self) -> &'static str {
        match self.bindings {
            Bindings::V0_1(_) => Version::V0_1_0.as_str(),
            Bindings::V0_2(_) => Version::V0_2_0.as_str(),
        }
    }

    /// What the harness can do (harness@0.2.0 `describe`); a 0.1.0 component gets the
    /// 0.1.0 agent fields, no resume, no cost, no per-call usage.
    pub fn describe(&mut self) -> Result<Capabilities, ComponentError> {
        let Bindings::V0_2(b) = &self.bindings else {
            return Ok(capabilities_v0_1());
        };
        let armed = arm(&mut self.store, Budget::REDUCER, 0);
        let store = &mut self.store;
        let caps = super::off_runtime(|| b.coder_eval_harness_launch().call_describe(&mut *store))
            .map_err(|e| {
                classify(
                    &mut self.store,
                    e,
                    &self.name,
                    "describe",
                    Budget::REDUCER,
                    armed,
                )
            })?;
        Ok(Capabilities {
            agent_fields: caps.agent_fields.into_iter().map(agent_field).collect(),
            resume: caps.resume,
            reports_cost: caps.reports_cost,
            usage_per_call: caps.usage_per_call,
        })
    }

    /// How the CLI's reported cost accumulates for `cli_version` (harness@0.2.0
    /// `totals`); a 0.1.0 component's is taken as per process, as the host always did.
    pub fn totals(&mut self, cli_version: Option<&str>) -> Result<TotalsScope, ComponentError> {
        self.scope_of(cli_version, false)
    }

    /// How the CLI's reported token usage accumulates for `cli_version` (harness@0.2.0
    /// `usage-totals`); a 0.1.0 component's is taken as per process.
    pub(crate) fn usage_totals(
        &mut self,
        cli_version: Option<&str>,
    ) -> Result<TotalsScope, ComponentError> {
        self.scope_of(cli_version, true)
    }

    fn scope_of(
        &mut self,
        cli_version: Option<&str>,
        usage: bool,
    ) -> Result<TotalsScope, ComponentError> {
        let Bindings::V0_2(b) = &self.bindings else {
            return Ok(TotalsScope::PerProcess);
        };
        let armed = arm(&mut self.store, Budget::REDUCER, 0);
        let store = &mut self.store;
        let scope = super::off_runtime(|| {
            let launch = b.coder_eval_harness_launch();
            if usage {
                launch.call_usage_totals(&mut *store, cli_version)
            } else {
                launch.call_totals(&mut *store, cli_version)
            }
        })
        .map_err(|e| {
            classify(
                &mut self.store,
                e,
                &self.name,
                if usage { "usage-totals" } else { "totals" },
                Budget::REDUCER,
                armed,
            )
        })?;
        Ok(match scope {
            wl2::TotalsScope::PerCall => TotalsScope::PerCall,
            wl2::TotalsScope::PerProcess => TotalsScope::PerProcess,
            wl2::TotalsScope::PerSession => TotalsScope::PerSession,
        })
    }

    /// The launch plan, or the component's reason for refusing these settings. A 0.1.0
    /// component refuses the agent fields it cannot receive, by name.
    pub fn plan(
        &mut self,
        settings: &AgentSettings,
        limits: &RunLimits,
    ) -> Result<Result<LaunchPlan, String>, ComponentError> {
        if let Bindings::V0_1(_) = self.bindings {
            if let Err(why) = capabilities_v0_1().check(settings) {
                return Ok(Err(format!("{why} (a harness@0.1.0 component)")));
            }
            if settings.session.is_some() {
                return Ok(Err(
                    "a harness@0.1.0 component cannot start or resume a session".into(),
                ));
            }
        }
        let armed = arm(&mut self.store, Budget::REDUCER, 0);
        let (bindings, store) = (&self.bindings, &mut self.store);
        let plan = super::off_runtime(|| match bindings {
            Bindings::V0_1(b) => b
                .coder_eval_harness_launch()
                .call_plan(&mut *store, &settings_v0_1(settings), limits_v0_1(limits))
                .map(|r| r.map(plan_v0_1)),
            Bindings::V0_2(b) => b
                .coder_eval_harness_launch()
                .call_plan(&mut *store, &settings_v0_2(settings), limits_v0_2(limits))
                .map(|r| r.map(plan_v0_2)),
        })
        .map_err(|e| {
            classify(
                &mut self.store,
                e,
                &self.name,
                "plan",
                Budget::REDUCER,
                armed,
            )
        })?;
        Ok(plan)
    }

    /// This CLI's tool call for a neutral scripted-model action.
    pub(crate) fn translate_action(
        &mut self,
        action: &NeutralAction,
        workspace: &str,
    ) -> Result<ToolCall, ComponentError> {
        let armed = arm(&mut self.store, Budget::REDUCER, 0);
        let (bindings, store) = (&self.bindings, &mut self.store);
        let call = super::off_runtime(|| match bindings {
            Bindings::V0_1(b) => {
                let waction = match action.clone() {
                    NeutralAction::WriteFile { path, content } => {
                        wl::NeutralAction::WriteFile((path, content))
                    }
                    NeutralAction::Shell { command } => wl::NeutralAction::Shell(command),
                    NeutralAction::ReadFile { path } => wl::NeutralAction::ReadFile(path),
                };
                b.coder_eval_harness_launch()
                    .call_translate_action(&mut *store, &waction, workspace)
                    .map(|c| (c.name, c.arguments_json))
            }
            Bindings::V0_2(b) => {
                let waction = match action.clone() {
                    NeutralAction::WriteFile { path, content } => {
                        wl2::NeutralAction::WriteFile((path, content))
                    }
                    NeutralAction::Shell { command } => wl2::NeutralAction::Shell(command),
                    NeutralAction::ReadFile { path } => wl2::NeutralAction::ReadFile(path),
                };
                b.coder_eval_harness_launch()
                    .call_translate_action(&mut *store, &waction, workspace)
                    .map(|c| (c.name, c.arguments_json))
            }
        })
        .map_err(|e| {
            classify(
                &mut self.store,
                e,
                &self.name,
                "translate-action",
                Budget::REDUCER,
                armed,
            )
        })?;
        Ok(ToolCall {
            name: call.0,
            arguments_json: call.1,
        })
    }
}

fn instantiate(loaded: &LoadedComponent) -> Result<(Store<HostState>, Bindings), ComponentError> {
    let version = contract::check(loaded, &contract::HARNESS)?;
    let mut store =
        new_store(loaded, Budget::REDUCER, None).map_err(|source| ComponentError::Read {
            component: loaded.name.to_string(),
            path: Default::default(),
            source,
        })?;
    arm(&mut store, Budget::REDUCER, 0);
    let instantiated = match version {
        Version::V0_1_0 => bindings::Harness::instantiate(&mut store, &loaded.component, linker())
            .map(Bindings::V0_1),
        Version::V0_2_0 => {
            bindings_v0_2::Harness::instantiate(&mut store, &loaded.component, linker())
                .map(Bindings::V0_2)
        }
    };
    let bindings = instantiated.map_err(|source| ComponentError::Instantiate {
        component: loaded.name.to_string(),
        source,
    })?;
    Ok((store, bindings))
}

/// A running `stream-reducer`: one instance, one owner. After any failure the instance
/// is unusable and every later call returns [`ComponentError::Poisoned`].
pub struct Reducer {
    name: Arc<str>,
    store: Store<HostState>,
    bindings: Bindings,
    resource: ResourceAny,
    poisoned: bool,
}

impl Reducer {
    /// Instantiates the component and constructs its reducer.
    pub fn new(loaded: &LoadedComponent, config: ReducerConfig) -> Result<Reducer, ComponentError> {
        let (mut store, bindings) = super::off_runtime(|| instantiate(loaded))?;
        let armed = arm(&mut store, Budget::REDUCER, 0);
        let resource = super::off_runtime(|| match &bindings {
            Bindings::V0_1(b) => b
                .coder_eval_harness_reducer()
                .stream_reducer()
                .call_constructor(
                    &mut store,
                    wr::ReducerConfig {
                        excerpt_bytes: config.excerpt_bytes,
                    },
                ),
            Bindings::V0_2(b) => b
                .coder_eval_harness_reducer()
                .stream_reducer()
                .call_constructor(
                    &mut store,
                    wr2::ReducerConfig {
                        excerpt_bytes: config.excerpt_bytes,
                    },
                ),
        })
        .map_err(|e| {
            classify(
                &mut store,
                e,
                &loaded.name,
                "stream-reducer.constructor",
                Budget::REDUCER,
                armed,
            )
        })?;
        Ok(Reducer {
            name: loaded.name.clone(),
            store,
            bindings,
            resource,
            poisoned: false,
        })
    }

    /// Feeds one line (without its newline) received at `stamp_us` µs into the turn.
    pub fn feed(&mut self, line: &[u8], stamp_us: u64) -> Result<Vec<Event>, ComponentError> {
        self.call("stream-reducer.feed", line.len(), |b, s, r| match b {
            Bindings::V0_1(b) => b
                .coder_eval_harness_reducer()
                .stream_reducer()
                .call_feed(s, r, line, stamp_us)
                .map(|e| e.into_iter().map(from_wit).collect()),
            Bindings::V0_2(b) => b
                .coder_eval_harness_reducer()
                .stream_reducer()
                .call_feed(s, r, line, stamp_us)
                .map(|e| e.into_iter().map(from_wit_v0_2).collect()),
        })
    }

    /// A side file the launch plan named, read after the CLI exited (`None` when the CLI
    /// did not write it): the events it adds. A harness@0.1.0 component names none and is
    /// never asked.
    pub fn side_file(
        &mut self,
        path: &str,
        content: Option<&[u8]>,
    ) -> Result<Vec<Event>, ComponentError> {
        let len = content.map_or(0, <[u8]>::len);
        self.call("stream-reducer.side-file", len, |b, s, r| match b {
            Bindings::V0_1(_) => Ok(Vec::new()),
            Bindings::V0_2(b) => b
                .coder_eval_harness_reducer()
                .stream_reducer()
                .call_side_file(s, r, path, content)
                .map(|e| e.into_iter().map(from_wit_v0_2).collect()),
        })
    }

    /// Ends the stream; `truncated` holds the bytes after the last newline, if any.
    pub fn finish(&mut self, truncated: Option<&[u8]>) -> Result<Vec<Event>, ComponentError> {
        let len = truncated.map_or(0, <[u8]>::len);
        self.call("stream-reducer.finish", len, |b, s, r| match b {
            Bindings::V0_1(b) => b
                .coder_eval_harness_reducer()
                .stream_reducer()
                .call_finish(s, r, truncated)
                .map(|e| e.into_iter().map(from_wit).collect()),
            Bindings::V0_2(b) => b
                .coder_eval_harness_reducer()
                .stream_reducer()
                .call_finish(s, r, truncated)
                .map(|e| e.into_iter().map(from_wit_v0_2).collect()),
        })
    }

    fn call(
        &mut self,
        call: &str,
        input_bytes: usize,
        f: impl FnOnce(&Bindings, &mut Store<HostState>, ResourceAny) -> wasmtime::Result<Vec<Event>>
        + Send,
    ) -> Result<Vec<Event>, ComponentError> {
        if self.poisoned {
            return Err(ComponentError::Poisoned {
                component: self.name.to_string(),
            });
        }
        let armed = arm(&mut self.store, Budget::REDUCER, input_bytes);
        let (bindings, store, resource) = (&self.bindings, &mut self.store, self.resource);
        match super::off_runtime(|| f(bindings, store, resource)) {
            Ok(events) => Ok(events),
            Err(err) => {
                self.poisoned = true;
                Err(classify(
                    &mut self.store,
                    err,
                    &self.name,
                    call,
                    Budget::REDUCER,
                    armed,
                ))
            }
        }
    }
}
