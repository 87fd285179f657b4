//! What the CLI is started with: the agent settings a launch plan is asked for, the
//! argv, environment, files and stdin built from the plan ([`launch_spec`]), and the
//! launch stage itself ([`launch`]: the plan stage's [`Planned`] and one [`Attempt`] in,
//! a [`Launched`] CLI ready to run out), shared by `one` and `sessions`.

use super::error::{Cause, RunError};
use super::probe::cli_version;
use super::setup::Dirs;
use super::{Prepared, RunOptions};
use crate::limits::budget::Budgets;
use crate::locate::find_cli;
use crate::results::CliInfo;
use crate::runtime::LoadedComponent;
use crate::runtime::harness::Launcher;
use crate::task::Task;
use crate::task::agent::{AgentField, ClaudeSettings, HarnessCapabilities, SystemPromptMode};
use crate::turn::collect::TotalsBasis;
use crate::turn::live::LaunchSpec;
use crate::turn::pipeline::Pipeline;
use crate::turn::recording::{BudgetsHeader, Header, RecordingWriter, SessionHeader};
use coder_eval_scripted_model::ScriptedModel;
use harness_kit::{AgentSettings, LaunchPlan, PromptDelivery, RunLimits};
use std::path::Path;
use std::time::{Duration, Instant};

/// The settings a harness's launch plan is asked for; `model_base_url` = the scripted
/// model's address, when one plays the task. The agent fields of harness@0.2.0 are filled
/// from the task (checked at load against `caps`, the harness's `describe()`); plugins go
/// as plugin folders to a harness that honours plugins, else as the skill folders they
/// hold. No session is requested (`run::sessions` sets one in time-budget mode).
pub(super) fn agent_settings(
    task: &Task,
    caps: &HarnessCapabilities,
    model_base_url: Option<String>,
) -> AgentSettings {
    let agent = &task.agent;
    let name = |v: serde_json::Value| v.as_str().map(String::from);
    let plugins = caps.agent_fields.contains(&AgentField::Plugins);
    let skills = !plugins && caps.agent_fields.contains(&AgentField::Skills);
    AgentSettings {
        model: agent.model.clone(),
        allowed_tools: agent.allowed_tools.clone(),
        disallowed_tools: agent.disallowed_tools.clone(),
        permission_mode: agent.permission_mode.clone(),
        system_prompt: agent.system_prompt.clone(),
        api_key: model_base_url.as_ref().map(|_| "sk-test".to_string()),
        model_base_url,
        // SAFETY: geteuid has no preconditions.
        as_root: unsafe { libc::geteuid() } == 0,
        system_prompt_mode: match agent.system_prompt_mode {
            Some(SystemPromptMode::Replace) => harness_kit::SystemPromptMode::Replace,
            _ => harness_kit::SystemPromptMode::Append,
        },
        thinking_level: agent
            .thinking_level
            .and_then(|t| serde_json::to_value(t).ok().and_then(name)),
        model_variant: agent.variant.clone(),
        pure: agent.pure.unwrap_or(false),
        setting_sources: agent.setting_sources.as_ref().map(|list| {
            list.iter()
                .filter_map(|s| serde_json::to_value(s).ok().and_then(name))
                .collect()
        }),
        settings_json: match &agent.claude_settings {
            Some(ClaudeSettings::Object(map)) => serde_json::to_string(map).ok(),
            // Resolved to the object at load.
            Some(ClaudeSettings::Path(_)) | None => None,
        },
        plugin_dirs: if plugins {
            agent.plugins.iter().map(|p| p.path.clone()).collect()
        } else {
            Vec::new()
        },
        skill_dirs: if skills {
            agent
                .skill_dirs()
                .iter()
                .map(|d| d.display().to_string())
                .collect()
        } else {
            Vec::new()
        },
        sdk_options_json: (!agent.sdk_options.is_empty())
            .then(|| serde_json::to_string(&agent.sdk_options).ok())
            .flatten(),
        session: None,
    }
}

/// argv, environment and stdin for the CLI, `prompt` being the task's (or a
/// continuation's in time-budget mode). The environment is built from nothing:
/// PATH, HOME, LANG, TERM, TMPDIR (the task's own, see [`super::setup::Dirs::tmp`]), the plan's variables, loopback proxies when the scripted
/// model is used (so phone-home attempts reach it and are refused), and `--pass-env`.
pub(super) fn launch_spec(
    prompt: &str,
    plan: &LaunchPlan,
    setup: &Dirs,
    model: Option<&ScriptedModel>,
    options: &RunOptions,
) -> Result<LaunchSpec, String> {
    let program =
        find_cli(&plan.argv[0], options.cli_override.as_deref()).map_err(|e| e.to_string())?;
    let subst = |s: &str| {
        s.replace("{{home}}", &setup.home.display().to_string())
            .replace("{{workspace}}", &setup.workspace.display().to_string())
    };
    for file in &plan.files {
        let path = setup.home.join(&file.path);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
        }
        std::fs::write(&path, subst(&file.content))
            .map_err(|e| format!("{}: {e}", path.display()))?;
    }
    let mut args: Vec<String> = plan.argv[1..].iter().map(|a| subst(a)).collect();
    let stdin = match plan.prompt {
        PromptDelivery::ArgvAt(i) => {
            let i = (i as usize).clamp(1, plan.argv.len()) - 1;
            args.insert(i, prompt.to_string());
            None
        }
        PromptDelivery::Stdin => Some(prompt.to_string()),
    };
    let mut path = crate::workspace::host_path();
    if let Some(dir) = program.parent() {
        path = format!("{}:{path}", dir.display());
    }
    // The task's mock commands and `.venv` come first, before the CLI's own folder.
    let workspace_vars = setup.env.vars(&path);
    let path = setup.env.path(&path).unwrap_or(path);
    let mut env: Vec<(String, String)> = vec![
        ("PATH".into(), path),
        ("HOME".into(), setup.home.display().to_string()),
        ("LANG".into(), "C.UTF-8".into()),
        ("TERM".into(), "dumb".into()),
    ];
    for key in ["TMPDIR", "TMP", "TEMP"] {
        env.push((key.into(), setup.tmp.display().to_string()));
    }
    if let Some(model) = model {
        let proxy = model.base_url();
        for key in ["HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy"] {
            env.push((key.into(), proxy.clone()));
        }
        for key in ["NO_PROXY", "no_proxy"] {
            env.push((key.into(), "127.0.0.1,localhost".into()));
        }
    }
    env.extend(workspace_vars.into_iter().filter(|(k, _)| k != "PATH"));
    env.extend(plan.env.iter().map(|(k, v)| (k.clone(), subst(v))));
    // With the gateway, the keys go to the gateway (or nowhere), never to the agent, nor
    // any other variable whose name looks like a secret (`gateway::to_agent`).
    for key in &options.pass_env {
        if !crate::gateway::to_agent(key, options.gateway) {
            continue;
        }
        if let Ok(value) = std::env::var(key) {
            env.push((key.clone(), value));
        }
    }
    Ok(LaunchSpec {
        program,
        args,
        env,
        cwd: setup.workspace.clone(),
        stdin,
        pid_namespace: options.pid_namespace,
        side_files: crate::turn::live::side_files(&plan.side_files, &setup.home, &setup.workspace),
        turn_limit_codes: plan
            .exit_codes
            .iter()
            .filter(|e| e.kind == "turn_limit")
            .map(|e| e.code)
            .collect(),
    })
}

/// The plan stage's product: the component, the scripted model and the launch plan, with
/// the settings and limits it was made from (time-budget mode plans again to resume).
pub(super) struct Planned {
    pub(super) loaded: LoadedComponent,
    pub(super) model: Option<ScriptedModel>,
    /// The scripted model's translator, asked after the turn whether a translation
    /// failed (which makes the task an ERROR).
    pub(super) translator: Option<std::sync::Arc<crate::runtime::translator::ComponentTranslator>>,
    /// The model gateway the CLI is pointed at (`--gateway`), in front of the scripted
    /// model or the real API.
    pub(super) gateway: Option<crate::gateway::Gateway>,
    pub(super) plan: LaunchPlan,
    pub(super) settings: AgentSettings,
    pub(super) limits: RunLimits,
    /// Time-budget mode: the id the first session was started with, when the harness
    /// takes one (else the stream's session id is resumed).
    pub(super) started: Option<String>,
}

/// The launch stage's product: what to start, and where its stream goes.
pub(super) struct Launched {
    pub(super) spec: LaunchSpec,
    pub(super) cli: CliInfo,
    /// The CLI's own `--version` start-up, which is CLI time, not setup.
    pub(super) version_time: Duration,
    pub(super) recording: RecordingWriter,
    /// Where `recording` writes (the gateway's calls are appended after the turn).
    pub(super) recording_path: std::path::PathBuf,
    pub(super) stderr_log: std::fs::File,
    pub(super) pipeline: Pipeline,
}

/// One launch of the CLI: its prompt and the files its stream goes to (relative to the
/// task's result folder).
pub(super) struct Attempt<'a> {
    pub(super) prompt: &'a str,
    pub(super) recording: &'a str,
    pub(super) stderr: &'a str,
    /// A fresh session, or a resumed one with what its earlier launches spent: how the
    /// collector reads the CLI's running totals (and what the recording's header says).
    pub(super) session: SessionHeader,
}

/// Launch: the CLI's argv, environment and files, its version, the recording (with its
/// header), `stderr.log`, and the reduce→collect pipeline.
pub(super) async fn launch(
    p: &Prepared,
    options: &RunOptions,
    planned: &Planned,
    dirs: &Dirs,
    dir: &Path,
    attempt: &Attempt<'_>,
) -> Result<Launched, RunError> {
    let plan = &planned.plan;
    let spec = launch_spec(attempt.prompt, plan, dirs, planned.model.as_ref(), options)
        .map_err(|e| RunError::Launch(Cause(e)))?;
    let version_start = Instant::now();
    let version = cli_version(&spec.program).await;
    let version_time = version_start.elapsed();
    let cli = CliInfo {
        path: Some(spec.program.display().to_string()),
        version,
        argv: std::iter::once(plan.argv[0].clone())
            .chain(spec.args.iter().cloned())
            .collect(),
        // With the gateway, `num_turns` is counted from the requests themselves: a reply's
        // parallel calls that the stream shows as separate replies count once.
        caveats: plan
            .caveats
            .iter()
            .filter(|c| {
                planned.gateway.is_none() || **c != harness_kit::Caveat::ParallelCallsSerialized
            })
            .cloned()
            .collect(),
        ..CliInfo::default()
    };
    // The caps count every session of a time-budget run: a continuation gets what its
    // session's earlier launches left.
    let caps = attempt.session.remaining(p.task.run_limits.caps());
    let header = Header {
        harness: Some(p.harness.clone()),
        cli_version: cli.version.clone(),
        argv: cli.argv.clone(),
        max_turns: caps.max_turns,
        max_tool_calls: caps.max_tool_calls,
        early_stop: p.live.clone(),
        budgets: BudgetsHeader::of(p.task.run_limits.budgets()),
        session: Some(attempt.session),
        started_unix_ms: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .ok()
            .map(|d| d.as_millis() as u64),
        gateway: planned.gateway.is_some(),
        price_table: planned
            .gateway
            .as_ref()
            .and_then(|g| g.price_table())
            .map(|t| t.path.display().to_string()),
        ..Default::default()
    };
    let recording_path = dir.join(attempt.recording);
    let recording =
        RecordingWriter::create(&recording_path, &header).map_err(RunError::Recording)?;
    let stderr_log =
        std::fs::File::create(dir.join(attempt.stderr)).map_err(RunError::StderrLog)?;
    let stream_caps = caps.on_stream(planned.gateway.is_some());
    let mut pipeline =
        Pipeline::new(&p.harness, &planned.loaded, stream_caps).map_err(RunError::Component)?;
    pipeline
        .collector
        .resumed_after(attempt.session.earlier_turns.unwrap_or(0));
    // Fresh watchers for this run (failing open, as `Pipeline::watch` says).
    // With the gateway, its figures hold the token budgets (`gateway::budget_breach`): the
    // stream's meter keeps `max_usd` (the CLI's cost).
    // With a price table the gateway holds `max_usd` too (on its priced cost).
    let budgets = match &planned.gateway {
        Some(g) if g.price_table().is_some() => Budgets {
            max_usd: None,
            ..p.task.run_limits.budgets().without_tokens()
        },
        Some(_) => p.task.run_limits.budgets().without_tokens(),
        None => p.task.run_limits.budgets(),
    };
    pipeline.watch(p.live.as_ref(), budgets);
    let (scope, usage_scope) = Launcher::new(&planned.loaded)
        .and_then(|mut l| {
            let version = cli.version.as_deref();
            Ok((l.totals(version)?, l.usage_totals(version)?))
        })
        .map_err(RunError::Component)?;
    pipeline.collector.totals_basis(TotalsBasis {
        scope,
        usage_scope,
        launch: attempt.session.launch(),
    });
    Ok(Launched {
        spec,
        cli,
        version_time,
        recording,
        recording_path,
        stderr_log,
        pipeline,
    })
}

/// Before a local turn (`container`: `None`), that `spec.program` names an executable
/// file; else [`RunError::Launch`] ("no such executable", "not executable"). The CLI not
/// found by name ([`launch_spec`]) and a `--cli` path that is not there are one condition
/// with one `error_kind`, `launch`. In a container the program is the container's, looked
/// up by its exec.
pub(super) fn runnable(
    spec: &LaunchSpec,
    container: Option<&crate::sandbox::docker::DockerSandbox>,
) -> Result<(), RunError> {
    if container.is_some() {
        return Ok(());
    }
    crate::turn::live::runnable(spec)
        .map_err(|e| RunError::Launch(Cause(format!("launching the CLI: {e}"))))
}
