//! `coder-eval run`: tasks × harnesses, each in a fresh workspace with a private HOME,
//! against the scripted model or a real one; then grading and `task.json`.
//!
//! Everything that can be checked is checked before any agent starts ([`prepare`]): the
//! task files, the harness components, and each launch plan (a harness that cannot
//! honour a limit rejects the task here).

pub mod cli;
mod grade;
pub mod junit;
pub mod live;
pub mod output;
pub mod regrade;
pub mod report;
mod setup;

use crate::collect::Caps;
use crate::components::{ComponentSource, ResolveError};
use crate::pipeline::Pipeline;
use crate::recording::{Header, RecordingWriter};
use crate::runtime::LoadedComponent;
use crate::runtime::harness::Launcher;
use crate::task::Task;
use coder_eval_scripted_model::{
    ActionTranslator, NeutralAction as ScriptAction, Script, ScriptedModel, ServerConfig,
    ToolCallSpec,
};
use harness_kit::{AgentSettings, LaunchPlan, LimitKind, NeutralAction, PromptDelivery, RunLimits};
use live::{Deadlines, LaunchSpec, StopReason};
use output::*;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::watch;

/// How to run.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Where results go.
    pub out_dir: PathBuf,
    /// Replacement components.
    pub components: ComponentSource,
    /// Use this CLI binary instead of the pinned install or PATH.
    pub cli_override: Option<PathBuf>,
    /// Play this script instead of the task's `agent.scripted_model`.
    pub script_override: Option<PathBuf>,
    /// Pass limits the CLI enforces natively to it (true), or rely on the host's backstop
    /// alone (false: the launch plan is asked for without them).
    pub native_limits: bool,
    /// SIGTERM → SIGKILL grace when stopping a CLI.
    pub kill_grace: Duration,
    /// Host environment variables passed to the CLI (e.g. a real API key).
    pub pass_env: Vec<String>,
}

impl RunOptions {
    pub fn new(out_dir: PathBuf) -> RunOptions {
        RunOptions {
            out_dir,
            components: ComponentSource::default(),
            cli_override: None,
            script_override: None,
            native_limits: true,
            kill_grace: crate::process::DEFAULT_GRACE,
            pass_env: Vec::new(),
        }
    }
}

/// A task × harness pair, checked and ready.
pub struct Prepared {
    pub task: Task,
    pub harness: String,
    loaded: LoadedComponent,
    script: Option<Script>,
}

/// Why a run could not start. Nothing has been run when one of these is returned.
#[derive(Debug, thiserror::Error)]
pub enum PrepareError {
    #[error(transparent)]
    Task(#[from] crate::task::TaskError),
    #[error("task `{task}`: harness `{harness}` (from {from})")]
    Harness {
        task: String,
        harness: String,
        /// Where the name came from: `--harness`, or the task file's `agent.type`.
        from: String,
        #[source]
        source: Box<ResolveError>,
    },
    #[error("task `{task}`: the `{harness}` harness refuses it: {reason}")]
    Refused {
        task: String,
        harness: String,
        reason: String,
    },
    #[error("task `{task}`: the `{harness}` harness cannot honour `{limit}`")]
    UnsupportedLimit {
        task: String,
        harness: String,
        limit: String,
    },
    #[error("task `{task}`: scripted model script")]
    Script {
        task: String,
        #[source]
        source: coder_eval_scripted_model::ScriptError,
    },
    #[error("task `{task}`: no harness given (set agent.type or pass --harness)")]
    NoHarness { task: String },
    /// Two runs would share one result folder.
    #[error(
        "task `{task}` on `{harness}` is given twice (task ids must differ: results go to \
         <out>/<task_id>/<harness>/)"
    )]
    Duplicate { task: String, harness: String },
}

/// Checks every task on every harness before anything runs. `harnesses` empty = each
/// task's own `agent.type`.
pub fn prepare(
    tasks: Vec<Task>,
    harnesses: &[String],
    options: &RunOptions,
) -> Result<Vec<Prepared>, PrepareError> {
    let mut prepared = Vec::new();
    for task in tasks {
        let names: Vec<String> = if harnesses.is_empty() {
            vec![
                task.agent
                    .harness
                    .clone()
                    .ok_or_else(|| PrepareError::NoHarness {
                        task: task.task_id.clone(),
                    })?,
            ]
        } else {
            harnesses.to_vec()
        };
        let script_path = options
            .script_override
            .clone()
            .or(task.agent.scripted_model.clone());
        let script = match script_path {
            Some(path) => Some(Script::load(&path).map_err(|source| PrepareError::Script {
                task: task.task_id.clone(),
                source,
            })?),
            None => None,
        };
        for harness in names {
            let fail = |source: ResolveError| PrepareError::Harness {
                task: task.task_id.clone(),
                harness: harness.clone(),
                from: if harnesses.is_empty() {
                    format!("{}: agent.type", task.path.display())
                } else {
                    "--harness".into()
                },
                source: Box::new(source),
            };
            let loaded = options.components.harness(&harness).map_err(fail)?;
            // A dry plan with placeholder URL: refusals and unsupported limits surface now.
            let mut launcher = Launcher::new(&loaded).map_err(|e| fail(e.into()))?;
            let settings = agent_settings(&task, Some("http://127.0.0.1:9".into()));
            let plan = launcher
                .plan(&settings, &run_limits(&task, true))
                .map_err(|e| fail(e.into()))?
                .map_err(|reason| PrepareError::Refused {
                    task: task.task_id.clone(),
                    harness: harness.clone(),
                    reason,
                })?;
            if let Some(limit) = plan
                .unsupported_limits
                .iter()
                .find(|l| limit_is_set(&task, **l))
            {
                return Err(PrepareError::UnsupportedLimit {
                    task: task.task_id.clone(),
                    harness,
                    limit: limit_name(*limit).into(),
                });
            }
            if prepared
                .iter()
                .any(|p: &Prepared| p.task.task_id == task.task_id && p.harness == harness)
            {
                return Err(PrepareError::Duplicate {
                    task: task.task_id.clone(),
                    harness,
                });
            }
            prepared.push(Prepared {
                task: task.clone(),
                harness,
                loaded,
                script: script.clone(),
            });
        }
    }
    Ok(prepared)
}

fn limit_is_set(task: &Task, kind: LimitKind) -> bool {
    match kind {
        LimitKind::MaxTurns => task.run_limits.max_turns.is_some(),
        LimitKind::MaxToolCalls => task.run_limits.max_tool_calls.is_some(),
        LimitKind::TurnTimeout => task.run_limits.turn_timeout.is_some(),
    }
}

/// The WIT name of a limit, as task files spell it.
pub fn limit_name(kind: LimitKind) -> &'static str {
    match kind {
        LimitKind::MaxTurns => "max_turns",
        LimitKind::MaxToolCalls => "max_tool_calls",
        LimitKind::TurnTimeout => "turn_timeout",
    }
}

fn agent_settings(task: &Task, model_base_url: Option<String>) -> AgentSettings {
    AgentSettings {
        model: task.agent.model.clone(),
        allowed_tools: task.agent.allowed_tools.clone(),
        disallowed_tools: task.agent.disallowed_tools.clone(),
        permission_mode: task.agent.permission_mode.clone(),
        system_prompt: task.agent.system_prompt.clone(),
        api_key: model_base_url.as_ref().map(|_| "sk-test".to_string()),
        model_base_url,
        // SAFETY: geteuid has no preconditions.
        as_root: unsafe { libc::geteuid() } == 0,
    }
}

fn run_limits(task: &Task, native: bool) -> RunLimits {
    let l = &task.run_limits;
    if !native {
        // Backstop only: the CLI is told of no limit; the host enforces them all.
        return RunLimits::default();
    }
    RunLimits {
        max_turns: l.max_turns,
        max_tool_calls: l.max_tool_calls,
        turn_timeout_ms: l.turn_timeout.map(|d| d.as_millis() as u64),
    }
}

/// Runs the prepared pairs, `jobs` at a time; Ctrl-C (`cancel`) stops every running CLI
/// and still writes what was recorded. Writes `run.json`, `junit.xml` and `report.html`
/// at the end.
pub async fn run_all(
    prepared: Vec<Prepared>,
    options: &RunOptions,
    jobs: usize,
    cancel: watch::Receiver<bool>,
    mut on_done: impl FnMut(&TaskResult),
) -> std::io::Result<Vec<TaskResult>> {
    std::fs::create_dir_all(&options.out_dir)?;
    let semaphore = Arc::new(tokio::sync::Semaphore::new(jobs.max(1)));
    let mut set = tokio::task::JoinSet::new();
    for (index, p) in prepared.into_iter().enumerate() {
        let options = options.clone();
        let cancel = cancel.clone();
        let semaphore = semaphore.clone();
        set.spawn(async move {
            let _permit = semaphore.acquire_owned().await;
            (index, run_one(p, &options, cancel).await)
        });
    }
    let mut results = Vec::new();
    while let Some(joined) = set.join_next().await {
        let (index, result) = joined.map_err(std::io::Error::other)?;
        on_done(&result);
        results.push((index, result));
    }
    results.sort_by_key(|(i, _)| *i);
    let results: Vec<TaskResult> = results.into_iter().map(|(_, r)| r).collect();
    let summary = RunSummary {
        result_version: TASK_RESULT_VERSION,
        rows: results
            .iter()
            .map(|r| RunRow {
                task_id: r.task_id.clone(),
                harness: r.harness.clone(),
                status: r.status,
                weighted_score: r.weighted_score,
                num_turns: r.turn.as_ref().map(|t| t.num_turns),
                tool_calls: r.turn.as_ref().map(|t| t.tool_calls.len()),
                duration_ms: r.turn.as_ref().map(|t| t.timing.turn_duration_ms),
                capped: r.cap_note(),
                result: format!("{}/{}/task.json", r.task_id, r.harness),
            })
            .collect(),
    };
    write_json_atomically(&options.out_dir.join("run.json"), &summary)?;
    write_suite_reports(&options.out_dir, &results)?;
    Ok(results)
}

/// Writes a suite's `junit.xml` and `report.html` into `dir` (beside its `run.json`).
pub fn write_suite_reports(dir: &std::path::Path, results: &[TaskResult]) -> std::io::Result<()> {
    junit::write(&dir.join("junit.xml"), results)?;
    report::write(&dir.join("report.html"), results)
}

/// Runs one task on one harness and writes its `task.json`. Never fails: a problem
/// becomes status ERROR with its reason.
pub async fn run_one(
    p: Prepared,
    options: &RunOptions,
    cancel: watch::Receiver<bool>,
) -> TaskResult {
    let dir = options.out_dir.join(&p.task.task_id).join(&p.harness);
    let mut result = TaskResult {
        result_version: TASK_RESULT_VERSION,
        task_id: p.task.task_id.clone(),
        harness: p.harness.clone(),
        status: TaskStatus::Error,
        error: None,
        description: p.task.description.clone(),
        task_file: p.task.path.display().to_string(),
        prompt: p.task.prompt.clone(),
        requested_model: p.task.agent.model.clone(),
        cli: CliInfo::default(),
        run_limits: LimitsRecord {
            max_turns: p.task.run_limits.max_turns,
            max_tool_calls: p.task.run_limits.max_tool_calls,
            turn_timeout_ms: p.task.run_limits.turn_timeout.map(|d| d.as_millis() as u64),
            task_timeout_ms: p.task.run_limits.task_timeout.map(|d| d.as_millis() as u64),
            native: Vec::new(),
        },
        stop: None,
        turn: None,
        criteria: Vec::new(),
        weighted_score: None,
        post_failure_criteria_results: Vec::new(),
        setup_ms: 0,
        grading_ms: 0,
        host_turn_work_us: 0,
        stderr_tail: String::new(),
        scripted_model_requests: None,
        paths: Paths::default(),
    };
    if let Err(message) = execute(&p, options, cancel, &dir, &mut result).await {
        result.status = TaskStatus::Error;
        result.error = Some(message);
    }
    if let Err(err) = write_json_atomically(&dir.join("task.json"), &result) {
        result.error = Some(format!("could not write task.json: {err}"));
        result.status = TaskStatus::Error;
    }
    result
}

async fn execute(
    p: &Prepared,
    options: &RunOptions,
    cancel: watch::Receiver<bool>,
    dir: &Path,
    result: &mut TaskResult,
) -> Result<(), String> {
    let task_start = Instant::now();
    let setup = setup::prepare_dirs(&p.task, dir)
        .await
        .map_err(|e| format!("setup: {e}"))?;
    let workspace = setup.workspace.display().to_string();

    // The scripted model, when the task plays one, with this harness's translator.
    // Resolved again for each task: a component file replaced during a long suite is
    // picked up by the next task (an unchanged one costs a hash and a cache hit).
    let loaded = match options.components.file_for(&p.harness) {
        Some(_) => options
            .components
            .harness(&p.harness)
            .map_err(|e| format!("harness component: {e}"))?,
        None => p.loaded.clone(),
    };
    let mut launcher = Launcher::new(&loaded).map_err(|e| e.to_string())?;
    let model = match &p.script {
        Some(script) => {
            // The server translates from its own threads: it gets its own instance.
            let translator_launcher = Launcher::new(&loaded).map_err(|e| e.to_string())?;
            let translator = Arc::new(ComponentTranslator::new(translator_launcher));
            let mut config =
                ServerConfig::new(script.clone(), workspace.clone()).with_translator(translator);
            // Call N+1 is held where it begins, so the CLI cannot act on its reply: the cap
            // means the same whether the CLI or the host enforces it.
            config.hold_from_turn = p.task.run_limits.max_turns;
            Some(
                ScriptedModel::start(config)
                    .await
                    .map_err(|e| format!("scripted model: {e}"))?,
            )
        }
        None => None,
    };
    let settings = agent_settings(&p.task, model.as_ref().map(ScriptedModel::base_url));
    let plan = launcher
        .plan(&settings, &run_limits(&p.task, options.native_limits))
        .map_err(|e| e.to_string())?
        .map_err(|reason| format!("the harness refused the task: {reason}"))?;
    result.run_limits.native = plan
        .native_limits
        .iter()
        .map(|l| limit_name(*l).to_string())
        .collect();
    let spec = launch_spec(&p.task, &plan, &setup, model.as_ref(), options)?;
    // The CLI's own start-up for `--version` is CLI time, not setup.
    let version_start = Instant::now();
    let version = cli::cli_version(&spec.program).await;
    let version_time = version_start.elapsed();
    result.cli = CliInfo {
        path: Some(spec.program.display().to_string()),
        version,
        argv: std::iter::once(plan.argv[0].clone())
            .chain(spec.args.iter().cloned())
            .collect(),
        caveats: plan.caveats.clone(),
        ..CliInfo::default()
    };
    let header = Header {
        harness: Some(p.harness.clone()),
        cli_version: result.cli.version.clone(),
        argv: result.cli.argv.clone(),
        max_turns: p.task.run_limits.max_turns,
        max_tool_calls: p.task.run_limits.max_tool_calls,
        ..Default::default()
    };
    let recording = RecordingWriter::create(&dir.join("recording.jsonl"), &header)
        .map_err(|e| format!("recording: {e}"))?;
    let stderr_log =
        std::fs::File::create(dir.join("stderr.log")).map_err(|e| format!("stderr.log: {e}"))?;
    let caps = Caps {
        max_turns: p.task.run_limits.max_turns,
        max_tool_calls: p.task.run_limits.max_tool_calls,
    };
    let pipeline = Pipeline::new(&p.harness, &loaded, caps).map_err(|e| e.to_string())?;
    let now = Instant::now();
    let turn_deadline = p
        .task
        .run_limits
        .turn_timeout
        .map(|d| (now + d, StopReason::TurnTimeout));
    let task_deadline = p
        .task
        .run_limits
        .task_timeout
        .map(|d| (task_start + d, StopReason::TaskTimeout));
    let deadline = match (turn_deadline, task_deadline) {
        (Some(a), Some(b)) => Some(if a.0 <= b.0 { a } else { b }),
        (a, b) => a.or(b),
    };
    result.setup_ms = task_start
        .elapsed()
        .saturating_sub(version_time)
        .as_millis() as u64;

    let turn = live::run_turn(
        spec,
        pipeline,
        recording,
        stderr_log,
        Deadlines {
            deadline,
            kill_grace: options.kill_grace,
        },
        cancel,
        model.as_ref().map(ScriptedModel::held),
    )
    .await
    .map_err(|e| format!("running the CLI: {e}"))?;
    if let Some(model) = model {
        result.scripted_model_requests = Some(
            model
                .requests()
                .iter()
                .map(|r| serde_json::to_value(r).unwrap_or_default())
                .collect(),
        );
        model.shutdown().await;
    }
    result.stop = turn.stop.map(|reason| StopRecord {
        reason,
        at_ms: turn.stop_at_ms,
    });
    result.stderr_tail = turn.stderr_tail;
    result.cli.pgid = turn.pgid;
    result.cli.mark = Some(turn.mark);
    result.cli.leftover_processes = turn.leftover_processes;
    result.host_turn_work_us = turn.host_work_us;

    let grading_start = Instant::now();
    for command in &p.task.post_run {
        setup::run_step(command, &setup.workspace, "post_run").await?;
    }
    let verdict = grade::grade(&p.task, &setup.workspace, &turn.record, &turn.trajectory).await;
    result.grading_ms = grading_start.elapsed().as_millis() as u64;
    result.status = verdict.status;
    result.criteria = verdict.criteria;
    result.weighted_score = verdict.weighted_score;
    result.post_failure_criteria_results = verdict.post_failure;
    // A documented exit code of the CLI's (its launch plan lists them) says what failed.
    let code = turn.record.exit.as_ref().and_then(|e| e.code);
    result.cli.exit_code_meaning = plan
        .exit_codes
        .iter()
        .find(|e| code == Some(e.code) && code != Some(0))
        .cloned();
    if result.status == TaskStatus::Error && result.error.is_none() {
        result.error = Some(error_reason(
            &turn.record,
            &result.stderr_tail,
            result.cli.exit_code_meaning.as_ref(),
        ));
    }
    result.turn = Some(turn.record);
    Ok(())
}

/// Why a turn is an ERROR, in one sentence. A CLI that printed nothing on stdout (Gemini
/// CLI's auth failures, B33) is explained by its exit code (with what the CLI documents it
/// to mean, `meaning`) and the end of its stderr.
fn error_reason(
    turn: &crate::record::TurnRecord,
    stderr_tail: &str,
    meaning: Option<&harness_kit::ExitCode>,
) -> String {
    let exit = turn.exit.as_ref();
    let last_stderr = stderr_tail
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim();
    if turn.stdout_lines == 0 {
        return format!(
            "the CLI printed nothing on stdout and exited with {}{}",
            exit.map_or("no status".into(), |e| match (e.code, e.signal) {
                (Some(code), _) => match meaning {
                    Some(m) => format!("code {code} ({}: {})", m.kind, m.meaning),
                    None => format!("code {code}"),
                },
                (None, Some(signal)) => format!("signal {signal}"),
                _ => "no status".into(),
            }),
            if last_stderr.is_empty() {
                String::new()
            } else {
                format!(": {last_stderr}")
            }
        );
    }
    match &turn.cli_result {
        Some(r) => format!(
            "the CLI reported {}: {}",
            r.error_kind.as_deref().unwrap_or("a failure"),
            r.error_message.as_deref().unwrap_or("no message")
        ),
        None => format!(
            "turn ended as {:?} (no final result from the CLI{}){}",
            turn.final_status,
            meaning.map_or(String::new(), |m| format!(
                "; its exit code {} means {}: {}",
                m.code, m.kind, m.meaning
            )),
            if last_stderr.is_empty() {
                String::new()
            } else {
                format!("; its stderr ends: {last_stderr}")
            }
        ),
    }
}

/// argv, environment and stdin for the CLI. The environment is built from nothing:
/// PATH, HOME, LANG, TERM, the plan's variables, loopback proxies when the scripted
/// model is used (so phone-home attempts reach it and are refused), and `--pass-env`.
fn launch_spec(
    task: &Task,
    plan: &LaunchPlan,
    setup: &setup::Dirs,
    model: Option<&ScriptedModel>,
    options: &RunOptions,
) -> Result<LaunchSpec, String> {
    let program =
        cli::find_cli(&plan.argv[0], options.cli_override.as_deref()).map_err(|e| e.to_string())?;
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
            args.insert(i, task.prompt.clone());
            None
        }
        PromptDelivery::Stdin => Some(task.prompt.clone()),
    };
    let mut path = std::env::var("PATH").unwrap_or_else(|_| "/usr/local/bin:/usr/bin:/bin".into());
    if let Some(dir) = program.parent() {
        path = format!("{}:{path}", dir.display());
    }
    let mut env: Vec<(String, String)> = vec![
        ("PATH".into(), path),
        ("HOME".into(), setup.home.display().to_string()),
        ("LANG".into(), "C.UTF-8".into()),
        ("TERM".into(), "dumb".into()),
    ];
    if let Some(model) = model {
        let proxy = model.base_url();
        for key in ["HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy"] {
            env.push((key.into(), proxy.clone()));
        }
        for key in ["NO_PROXY", "no_proxy"] {
            env.push((key.into(), "127.0.0.1,localhost".into()));
        }
    }
    env.extend(plan.env.iter().map(|(k, v)| (k.clone(), subst(v))));
    for key in &options.pass_env {
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
        turn_limit_codes: plan
            .exit_codes
            .iter()
            .filter(|e| e.kind == "turn_limit")
            .map(|e| e.code)
            .collect(),
    })
}

/// Translates the scripted model's neutral actions through the harness component.
pub struct ComponentTranslator(Mutex<Launcher>);

impl ComponentTranslator {
    /// A translator over its own instance of the harness component.
    pub fn new(launcher: Launcher) -> ComponentTranslator {
        ComponentTranslator(Mutex::new(launcher))
    }
}

impl ActionTranslator for ComponentTranslator {
    fn translate(&self, action: &ScriptAction, workspace: &str) -> ToolCallSpec {
        let action = match action {
            ScriptAction::WriteFile { path, content } => NeutralAction::WriteFile {
                path: path.clone(),
                content: content.clone(),
            },
            ScriptAction::Shell { command } => NeutralAction::Shell {
                command: command.clone(),
            },
            ScriptAction::ReadFile { path } => NeutralAction::ReadFile { path: path.clone() },
        };
        let call = self.0.lock().unwrap().translate_action(&action, workspace);
        match call {
            // A JSON string as arguments = a free-form (custom) tool call, e.g. Codex's
            // apply_patch.
            Ok(call) => match serde_json::from_str::<serde_json::Value>(&call.arguments_json) {
                Ok(serde_json::Value::String(input)) => ToolCallSpec::Custom {
                    name: call.name,
                    input,
                },
                Ok(arguments) => ToolCallSpec::Function {
                    name: call.name,
                    arguments,
                },
                Err(_) => ToolCallSpec::Custom {
                    name: call.name,
                    input: call.arguments_json,
                },
            },
            Err(err) => ToolCallSpec::Function {
                name: "translation_failed".into(),
                arguments: serde_json::json!({ "error": err.to_string() }),
            },
        }
    }
}
