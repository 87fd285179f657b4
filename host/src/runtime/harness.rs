//! Harness components (`coder-eval:harness/harness@0.2.0` and the released `@0.1.0`):
//! checking the contract, calling `launch` and driving a `stream-reducer`. Both versions
//! are converted to the host's one model (harness-kit's, which is 0.2.0's) here, at the
//! boundary; what 0.1.0 lacks gets the meaning 0.1.0 had (see [`Launcher::describe`],
//! [`Launcher::totals`], [`Reducer::side_file`]).

use super::contract::{self, Version};
use super::sandbox::{arm, classify, new_store};
use super::{Budget, ComponentError, HostState, LoadedComponent};
use harness_kit::{
    AgentField, AgentSettings, Capabilities, Caveat, ConfigFile, Event, ExitCode, LaunchPlan,
    LimitKind, NeutralAction, PromptDelivery, ReducerConfig, RunLimits, SessionRequest,
    SystemPromptMode, ToolCall, TotalsScope,
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
use bindings::exports::coder_eval::harness::launch as wl;
use bindings::exports::coder_eval::harness::reducer as wr;
use bindings_v0_2::exports::coder_eval::harness::launch as wl2;
use bindings_v0_2::exports::coder_eval::harness::reducer as wr2;

/// A harness instance's bindings, by the contract version it exports.
enum Bindings {
    V0_1(bindings::Harness),
    V0_2(bindings_v0_2::Harness),
}

/// What a harness@0.1.0 component can do, since it cannot say: the agent fields of 0.1.0,
/// no resume, and (not knowing) no cost or per-call usage it could promise.
fn capabilities_v0_1() -> Capabilities {
    Capabilities {
        agent_fields: vec![
            AgentField::Model,
            AgentField::AllowedTools,
            AgentField::DisallowedTools,
            AgentField::PermissionMode,
            AgentField::SystemPrompt,
        ],
        resume: false,
        reports_cost: false,
        usage_per_call: false,
    }
}

fn linker() -> &'static Linker<HostState> {
    static LINKER: OnceLock<Linker<HostState>> = OnceLock::new();
    LINKER.get_or_init(|| {
        let mut linker = Linker::new(super::engine());
        wasmtime_wasi::p2::add_to_linker_sync(&mut linker).expect("WASI links");
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
        let fuel = arm(&mut self.store, Budget::REDUCER, 0);
        let store = &mut self.store;
        let caps = super::off_runtime(|| b.coder_eval_harness_launch().call_describe(&mut *store))
            .map_err(|e| {
                classify(
                    &mut self.store,
                    e,
                    &self.name,
                    "describe",
                    Budget::REDUCER,
                    fuel,
                )
            })?;
        Ok(Capabilities {
            agent_fields: caps.agent_fields.into_iter().map(agent_field).collect(),
            resume: caps.resume,
            reports_cost: caps.reports_cost,
            usage_per_call: caps.usage_per_call,
        })
    }

    /// How the CLI's reported totals accumulate for `cli_version` (harness@0.2.0
    /// `totals`); a 0.1.0 component's are taken as per process, as the host always did.
    pub fn totals(&mut self, cli_version: Option<&str>) -> Result<TotalsScope, ComponentError> {
        let Bindings::V0_2(b) = &self.bindings else {
            return Ok(TotalsScope::PerProcess);
        };
        let fuel = arm(&mut self.store, Budget::REDUCER, 0);
        let store = &mut self.store;
        let scope = super::off_runtime(|| {
            b.coder_eval_harness_launch()
                .call_totals(&mut *store, cli_version)
        })
        .map_err(|e| {
            classify(
                &mut self.store,
                e,
                &self.name,
                "totals",
                Budget::REDUCER,
                fuel,
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
        let fuel = arm(&mut self.store, Budget::REDUCER, 0);
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
                fuel,
            )
        })?;
        Ok(plan)
    }

    /// This CLI's tool call for a neutral scripted-model action.
    pub fn translate_action(
        &mut self,
        action: &NeutralAction,
        workspace: &str,
    ) -> Result<ToolCall, ComponentError> {
        let fuel = arm(&mut self.store, Budget::REDUCER, 0);
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
                fuel,
            )
        })?;
        Ok(ToolCall {
            name: call.0,
            arguments_json: call.1,
        })
    }
}

fn settings_v0_1(s: &AgentSettings) -> wl::AgentSettings {
    wl::AgentSettings {
        model: s.model.clone(),
        allowed_tools: s.allowed_tools.clone(),
        disallowed_tools: s.disallowed_tools.clone(),
        permission_mode: s.permission_mode.clone(),
        system_prompt: s.system_prompt.clone(),
        model_base_url: s.model_base_url.clone(),
        api_key: s.api_key.clone(),
        as_root: s.as_root,
    }
}

fn limits_v0_1(l: &RunLimits) -> wl::RunLimits {
    wl::RunLimits {
        max_turns: l.max_turns,
        max_tool_calls: l.max_tool_calls,
        turn_timeout_ms: l.turn_timeout_ms,
    }
}

fn plan_v0_1(p: wl::LaunchPlan) -> LaunchPlan {
    LaunchPlan {
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
    }
}

fn limit_kind(kind: wl::LimitKind) -> LimitKind {
    match kind {
        wl::LimitKind::MaxTurns => LimitKind::MaxTurns,
        wl::LimitKind::MaxToolCalls => LimitKind::MaxToolCalls,
        wl::LimitKind::TurnTimeout => LimitKind::TurnTimeout,
    }
}

fn settings_v0_2(s: &AgentSettings) -> wl2::AgentSettings {
    wl2::AgentSettings {
        model: s.model.clone(),
        allowed_tools: s.allowed_tools.clone(),
        disallowed_tools: s.disallowed_tools.clone(),
        permission_mode: s.permission_mode.clone(),
        system_prompt: s.system_prompt.clone(),
        model_base_url: s.model_base_url.clone(),
        api_key: s.api_key.clone(),
        as_root: s.as_root,
        system_prompt_mode: match s.system_prompt_mode {
            SystemPromptMode::Append => wl2::SystemPromptMode::Append,
            SystemPromptMode::Replace => wl2::SystemPromptMode::Replace,
        },
        thinking_level: s.thinking_level.clone(),
        model_variant: s.model_variant.clone(),
        pure: s.pure,
        setting_sources: s.setting_sources.clone(),
        settings_json: s.settings_json.clone(),
        plugin_dirs: s.plugin_dirs.clone(),
        skill_dirs: s.skill_dirs.clone(),
        sdk_options_json: s.sdk_options_json.clone(),
        session: s.session.clone().map(|r| match r {
            SessionRequest::Start(id) => wl2::SessionRequest::Start(id),
            SessionRequest::Resume(id) => wl2::SessionRequest::Resume(id),
        }),
    }
}

fn limits_v0_2(l: &RunLimits) -> wl2::RunLimits {
    wl2::RunLimits {
        max_turns: l.max_turns,
        max_tool_calls: l.max_tool_calls,
        turn_timeout_ms: l.turn_timeout_ms,
    }
}

fn plan_v0_2(p: wl2::LaunchPlan) -> LaunchPlan {
    LaunchPlan {
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
            wl2::PromptDelivery::ArgvAt(i) => PromptDelivery::ArgvAt(i),
            wl2::PromptDelivery::Stdin => PromptDelivery::Stdin,
        },
        native_limits: p.native_limits.into_iter().map(limit_kind_v0_2).collect(),
        unsupported_limits: p
            .unsupported_limits
            .into_iter()
            .map(limit_kind_v0_2)
            .collect(),
        caveats: p
            .caveats
            .into_iter()
            .map(|c| match c {
                wl2::Caveat::ParallelCallsSerialized => Caveat::ParallelCallsSerialized,
                wl2::Caveat::ShellFailuresUnreported => Caveat::ShellFailuresUnreported,
                wl2::Caveat::ToolStartFromCliDuration => Caveat::ToolStartFromCliDuration,
                wl2::Caveat::ToolStartReportedLate => Caveat::ToolStartReportedLate,
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
        side_files: p.side_files,
    }
}

fn limit_kind_v0_2(kind: wl2::LimitKind) -> LimitKind {
    match kind {
        wl2::LimitKind::MaxTurns => LimitKind::MaxTurns,
        wl2::LimitKind::MaxToolCalls => LimitKind::MaxToolCalls,
        wl2::LimitKind::TurnTimeout => LimitKind::TurnTimeout,
    }
}

fn agent_field(f: wl2::AgentField) -> AgentField {
    use wl2::AgentField as W;
    match f {
        W::Model => AgentField::Model,
        W::AllowedTools => AgentField::AllowedTools,
        W::DisallowedTools => AgentField::DisallowedTools,
        W::PermissionMode => AgentField::PermissionMode,
        W::SystemPrompt => AgentField::SystemPrompt,
        W::SystemPromptReplace => AgentField::SystemPromptReplace,
        W::ThinkingLevel => AgentField::ThinkingLevel,
        W::ModelVariant => AgentField::ModelVariant,
        W::Pure => AgentField::Pure,
        W::SettingSources => AgentField::SettingSources,
        W::Settings => AgentField::Settings,
        W::Plugins => AgentField::Plugins,
        W::Skills => AgentField::Skills,
        W::SdkOptions => AgentField::SdkOptions,
    }
}

fn instantiate(loaded: &LoadedComponent) -> Result<(Store<HostState>, Bindings), ComponentError> {
    let version = contract::check(loaded, &contract::HARNESS)?;
    let mut store = new_store(Budget::REDUCER, None).map_err(|source| ComponentError::Read {
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
        let fuel = arm(&mut store, Budget::REDUCER, 0);
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
        let fuel = arm(&mut self.store, Budget::REDUCER, input_bytes);
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
                    fuel,
                ))
            }
        }
    }
}
