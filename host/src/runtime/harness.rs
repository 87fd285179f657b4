//! Harness components (`coder-eval:harness/harness@0.1.0`): checking the contract,
//! calling `launch` and driving a `stream-reducer`.

use super::contract;
use super::sandbox::{arm, classify, new_store};
use super::{Budget, ComponentError, HostState, LoadedComponent};
use harness_kit::{
    AgentSettings, Caveat, ConfigFile, Event, ExitCode, LaunchPlan, LimitKind, NeutralAction,
    PromptDelivery, ReducerConfig, RunLimits, ToolCall,
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

use super::events::{from_wit, wit};
use bindings::exports::coder_eval::harness::launch as wl;
use bindings::exports::coder_eval::harness::reducer as wr;

fn linker() -> &'static Linker<HostState> {
    static LINKER: OnceLock<Linker<HostState>> = OnceLock::new();
    LINKER.get_or_init(|| {
        let mut linker = Linker::new(super::engine());
        wasmtime_wasi::p2::add_to_linker_sync(&mut linker).expect("WASI links");
        linker
    })
}

/// Checks a component against the harness contract (see `runtime::contract`): it exports
/// `launch` and `reducer` of `coder-eval:harness@0.1.0`, and imports nothing but WASI and
/// the event types.
pub fn check(loaded: &LoadedComponent) -> Result<(), ComponentError> {
    contract::check(loaded, &contract::HARNESS).map(|_| ())
}

/// One instance of a harness component, for `launch` calls.
pub struct Launcher {
    name: Arc<str>,
    store: Store<HostState>,
    bindings: bindings::Harness,
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

    /// The launch plan, or the component's reason for refusing these settings.
    pub fn plan(
        &mut self,
        settings: &AgentSettings,
        limits: &RunLimits,
    ) -> Result<Result<LaunchPlan, String>, ComponentError> {
        let wsettings = wl::AgentSettings {
            model: settings.model.clone(),
            allowed_tools: settings.allowed_tools.clone(),
            disallowed_tools: settings.disallowed_tools.clone(),
            permission_mode: settings.permission_mode.clone(),
            system_prompt: settings.system_prompt.clone(),
            model_base_url: settings.model_base_url.clone(),
            api_key: settings.api_key.clone(),
            as_root: settings.as_root,
        };
        let wlimits = wl::RunLimits {
            max_turns: limits.max_turns,
            max_tool_calls: limits.max_tool_calls,
            turn_timeout_ms: limits.turn_timeout_ms,
        };
        let fuel = arm(&mut self.store, Budget::REDUCER, 0);
        let (bindings, store) = (&self.bindings, &mut self.store);
        let plan = super::off_runtime(|| {
            bindings
                .coder_eval_harness_launch()
                .call_plan(&mut *store, &wsettings, wlimits)
        })
        .map_err(|e| {
            classify(
                &mut self.store,
                e,
                &self.name,
                "plan",
                Budget::REDUCER,
                fuel,
            )
        })?;
        Ok(plan.map(|p| LaunchPlan {
            argv: p.argv,
            env: p.env,
            files: p
                .files
                .into_iter()
                .map(|f| ConfigFile {
                    path: f.path,
                    content: f.content,
                })
                .collect(),
            prompt: match p.prompt {
                wl::PromptDelivery::ArgvAt(i) => PromptDelivery::ArgvAt(i),
                wl::PromptDelivery::Stdin => PromptDelivery::Stdin,
            },
            native_limits: p.native_limits.into_iter().map(limit_kind).collect(),
            unsupported_limits: p.unsupported_limits.into_iter().map(limit_kind).collect(),
            caveats: p
                .caveats
                .into_iter()
                .map(|c| match c {
                    wl::Caveat::ParallelCallsSerialized => Caveat::ParallelCallsSerialized,
                    wl::Caveat::ShellFailuresUnreported => Caveat::ShellFailuresUnreported,
                    wl::Caveat::ToolStartFromCliDuration => Caveat::ToolStartFromCliDuration,
                    wl::Caveat::ToolStartReportedLate => Caveat::ToolStartReportedLate,
                })
                .collect(),
            exit_codes: p
                .exit_codes
                .into_iter()
                .map(|e| ExitCode {
                    code: e.code,
                    kind: e.kind,
                    meaning: e.meaning,
                })
                .collect(),
            // harness@0.1.0 has no side files.
            side_files: Vec::new(),
        }))
    }

    /// This CLI's tool call for a neutral scripted-model action.
    pub fn translate_action(
        &mut self,
        action: &NeutralAction,
        workspace: &str,
    ) -> Result<ToolCall, ComponentError> {
        let waction = match action.clone() {
            NeutralAction::WriteFile { path, content } => {
                wl::NeutralAction::WriteFile((path, content))
            }
            NeutralAction::Shell { command } => wl::NeutralAction::Shell(command),
            NeutralAction::ReadFile { path } => wl::NeutralAction::ReadFile(path),
        };
        let fuel = arm(&mut self.store, Budget::REDUCER, 0);
        let (bindings, store) = (&self.bindings, &mut self.store);
        let call = super::off_runtime(|| {
            bindings.coder_eval_harness_launch().call_translate_action(
                &mut *store,
                &waction,
                workspace,
            )
        })
        .map_err(|e| {
            classify(
                &mut self.store,
                e,
                &self.name,
                "translate-action",
                Budget::REDUCER,
                fuel,
            )
        })?;
        Ok(ToolCall {
            name: call.name,
            arguments_json: call.arguments_json,
        })
    }
}

fn limit_kind(kind: wl::LimitKind) -> LimitKind {
    match kind {
        wl::LimitKind::MaxTurns => LimitKind::MaxTurns,
        wl::LimitKind::MaxToolCalls => LimitKind::MaxToolCalls,
        wl::LimitKind::TurnTimeout => LimitKind::TurnTimeout,
    }
}

fn instantiate(
    loaded: &LoadedComponent,
) -> Result<(Store<HostState>, bindings::Harness), ComponentError> {
    let mut store = new_store(Budget::REDUCER, None).map_err(|source| ComponentError::Read {
        component: loaded.name.to_string(),
        path: Default::default(),
        source,
    })?;
    arm(&mut store, Budget::REDUCER, 0);
    let bindings = bindings::Harness::instantiate(&mut store, &loaded.component, linker())
        .map_err(|source| ComponentError::Instantiate {
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
    bindings: bindings::Harness,
    resource: ResourceAny,
    poisoned: bool,
}

impl Reducer {
    /// Instantiates the component and constructs its reducer.
    pub fn new(loaded: &LoadedComponent, config: ReducerConfig) -> Result<Reducer, ComponentError> {
        let (mut store, bindings) = super::off_runtime(|| instantiate(loaded))?;
        let fuel = arm(&mut store, Budget::REDUCER, 0);
        let resource = super::off_runtime(|| {
            bindings
                .coder_eval_harness_reducer()
                .stream_reducer()
                .call_constructor(
                    &mut store,
                    wr::ReducerConfig {
                        excerpt_bytes: config.excerpt_bytes,
                    },
                )
        })
        .map_err(|e| {
            classify(
                &mut store,
                e,
                &loaded.name,
                "stream-reducer.constructor",
                Budget::REDUCER,
                fuel,
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
        self.call("stream-reducer.feed", line.len(), |b, s, r| {
            b.coder_eval_harness_reducer()
                .stream_reducer()
                .call_feed(s, r, line, stamp_us)
        })
    }

    /// Ends the stream; `truncated` holds the bytes after the last newline, if any.
    pub fn finish(&mut self, truncated: Option<&[u8]>) -> Result<Vec<Event>, ComponentError> {
        let len = truncated.map_or(0, <[u8]>::len);
        self.call("stream-reducer.finish", len, |b, s, r| {
            b.coder_eval_harness_reducer()
                .stream_reducer()
                .call_finish(s, r, truncated)
        })
    }

    fn call(
        &mut self,
        call: &str,
        input_bytes: usize,
        f: impl FnOnce(
            &bindings::Harness,
            &mut Store<HostState>,
            ResourceAny,
        ) -> wasmtime::Result<Vec<wit::Event>>
        + Send,
    ) -> Result<Vec<Event>, ComponentError> {
        if self.poisoned {
            return Err(ComponentError::Poisoned {
                component: self.name.to_string(),
            });
        }
        let fuel = arm(&mut self.store, Budget::REDUCER, input_bytes);
        let (bindings, store, resource) = (&self.bindings, &mut self.store, self.resource);
        match super::off_runtime(|| f(bindings, store, resource)) {
            Ok(events) => Ok(events.into_iter().map(from_wit).collect()),
            Err(err) => {
                self.poisoned = true;
                Err(classify(
                    &mut self.store,
                    err,
                    &self.name,
                    call,
                    Budget::REDUCER,
                    fuel,
                ))
            }
        }
    }
}
