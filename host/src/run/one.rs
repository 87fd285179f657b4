//! One task on one harness, as stages that return values: setup → plan → launch → turn →
//! grade, then `assemble` makes the `task.json`. A stage that fails is a [`RunError`],
//! whose sentence and kind reach `task.json` (`error`, `error_kind`) with what the task
//! had established by then.

use super::assemble::{AfterTurn, Done, Established, TurnDone, assemble, failed};
use super::container;
use super::cost;
use super::error::{Cause, RunError};
use super::grade::grade;
use super::launch::{Attempt, Launched, Planned, agent_settings, launch};
use super::setup::{self, Dirs};
use super::{Prepared, RunOptions};
use crate::limits::Deadlines;
use crate::results::{StopRecord, TaskResult};
use crate::runtime::harness::Launcher;
use crate::runtime::translator::ComponentTranslator;
use crate::sandbox::docker::DockerSandbox;
use crate::task::sandbox::Driver;
use crate::turn::live;
use crate::turn::recording::SessionHeader;
use coder_eval_scripted_model::{ScriptedModel, ServerConfig};
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::watch;

/// Runs one task on one harness and writes its `task.json`. Never fails: a problem
/// becomes status ERROR with its reason.
pub async fn run_one(
    p: Prepared,
    options: &RunOptions,
    cancel: watch::Receiver<bool>,
) -> TaskResult {
    let dir = options.out_dir.join(p.unit.rel_dir());
    let executed = execute(&p, options, cancel, &dir).await;
    // Every process of the task is gone now: its temporary folder goes too.
    setup::remove_tmp(&dir);
    // Time-budget mode: the earlier sessions' turns, for cost.json.
    let mut earlier_turns = Vec::new();
    let mut result = match executed {
        Ok(mut done) => {
            earlier_turns = std::mem::take(&mut done.turn.earlier_turns);
            assemble(&p, done)
        }
        Err((error, established)) => {
            let mut result = failed(&p, &error, established);
            if matches!(error, RunError::Interrupted) && result.turn.is_none() {
                result.error = Some(
                    "interrupted: the host received a stop signal before the agent started; \
                     nothing ran"
                        .into(),
                );
            }
            if matches!(error, RunError::Interrupted) && result.stop.is_none() {
                result.stop = Some(StopRecord {
                    reason: crate::results::StopReason::Interrupted,
                    at_ms: None,
                });
            }
            result
        }
    };
    // The result folder exists once setup ran; a task interrupted before it did gets one
    // for its task.json all the same.
    let _ = std::fs::create_dir_all(&dir);
    // Paths name files that exist: a task stopped before its turn has no recording.
    for path in [
        &mut result.paths.recording,
        &mut result.paths.stderr,
        &mut result.paths.workspace,
    ] {
        if path.as_deref().is_some_and(|rel| !dir.join(rel).exists()) {
            *path = None;
        }
    }
    super::units::stamp(&mut result, &p, &options.retry_given);
    // cost.json first, so task.json carries its summary; it never changes the outcome.
    if let Some(record) = cost::record(&p, &result, &earlier_turns) {
        result.cost = Some(record.summary());
        cost::write(&dir, &record);
    }
    super::write_result::write_task_json(&dir, &mut result);
    result
}

async fn execute(
    p: &Prepared,
    options: &RunOptions,
    cancel: watch::Receiver<bool>,
    dir: &Path,
) -> Result<Done, (RunError, Established)> {
    let task_start = Instant::now();
    let mut established = Established::default();
    // A stage that fails once the host is interrupted (its shell step stopped by the
    // signal, say) failed because of the interrupt; between stages, an interrupt stops
    // the task before the next one starts.
    // (The host's interrupt is raised a moment before `cancel` is set: either counts.)
    let interrupted =
        |cancel: &watch::Receiver<bool>| *cancel.borrow() || crate::interrupt::raised().is_some();
    macro_rules! stage {
        ($e:expr) => {
            match $e {
                Ok(value) if interrupted(&cancel) => {
                    let _ = value;
                    return Err((RunError::Interrupted, established));
                }
                Ok(value) => value,
                Err(_) if interrupted(&cancel) => {
                    return Err((RunError::Interrupted, established));
                }
                Err(error) => return Err((error, established)),
            }
        };
    }
    // From the turn on, what is recorded is kept: the turn itself stops on the interrupt.
    macro_rules! kept {
        ($e:expr) => {
            match $e {
                Ok(value) => value,
                Err(error) => return Err((error, established)),
            }
        };
    }
    if interrupted(&cancel) {
        return Err((RunError::Interrupted, established));
    }
    let mut dirs = match setup(p, dir).await {
        Ok(dirs) => {
            established.steps = dirs.pre_run.clone();
            stage!(Ok::<_, RunError>(dirs))
        }
        Err((error, steps)) => {
            established.steps = steps;
            stage!(Err::<Dirs, _>(error))
        }
    };
    let time_budget = p
        .task
        .agent
        .time_budget(p.task.run_limits.task_timeout)
        .ok()
        .flatten();
    let mut planned = stage!(plan(p, options, &dirs, time_budget.is_some()).await);
    established.native = planned.plan.native_limits.clone();
    let first = Attempt {
        prompt: &p.task.prompt,
        recording: "recording.jsonl",
        stderr: "stderr.log",
        session: SessionHeader::default(),
    };
    let launched = stage!(launch(p, options, &planned, &dirs, dir, &first).await);
    established.cli = launched.cli.clone();
    let deadline = p.task.run_limits.deadline(task_start, Instant::now());
    established.setup_ms = Some(
        task_start
            .elapsed()
            .saturating_sub(launched.version_time)
            .as_millis() as u64,
    );
    let deadlines = Deadlines {
        deadline,
        policy: options.stop_policy,
    };
    // driver: docker: the agent's container, started now that the workspace is filled and
    // the scripted model listens; removed after the turn (or on any error, by its drop).
    // Its `pre_run` steps run in it, as coder_eval runs them there.
    let container = match p.task.sandbox.driver {
        Driver::Docker => {
            let container = stage!(
                container::start(
                    p,
                    &dirs,
                    launched.spec.program.clone(),
                    planned.model.as_ref(),
                    dir
                )
                .await
            );
            let ran = setup::run_pre_steps(&p.task, &mut dirs, Some(&container)).await;
            established.steps = dirs.pre_run.clone();
            stage!(ran.map_err(|e| RunError::Setup(Cause(e))));
            Some(container)
        }
        Driver::Tempdir => None,
    };
    // Grading after the turn watches for an interrupt too: one there (a slow
    // `run_command` criterion, a `post_run` step stopped by the signal) makes the task
    // `interrupted`, never a verdict on a half-graded workspace.
    let grade_cancel = cancel.clone();
    let turn = match time_budget {
        // Time-budget mode: the deadline is fixed now, as the first session starts.
        Some(budget) => kept!(
            super::sessions::run(
                super::sessions::Run {
                    p,
                    options,
                    dirs: &dirs,
                    dir,
                    budget,
                    task_start,
                    container: container.as_ref(),
                },
                &mut planned,
                launched,
                cancel,
            )
            .await
        ),
        None => kept!(
            turn(
                launched,
                planned.model.take(),
                planned.gateway.take(),
                deadlines,
                cancel,
                container.as_ref()
            )
            .await
        ),
    };
    // A translation that failed left the script unplayed: the task is an ERROR that names
    // the component, not a verdict on the agent. What the turn recorded is kept.
    let failed_translation = planned
        .translator
        .as_ref()
        .and_then(|translator| translator.take_failure());
    if let Some(error) = failed_translation {
        established.after_turn = Some(after_turn(turn));
        return Err((RunError::Component(error), established));
    }
    // A turn the interrupt already stopped is graded as it is (never a pass, see
    // `assemble`); an interrupt that comes only now stops the grading.
    let watch_grading = !interrupted(&grade_cancel);
    let graded = match grade(
        p,
        options,
        &dirs,
        dir,
        &turn.turn,
        container.as_ref(),
        watch_grading.then_some(&grade_cancel),
    )
    .await
    {
        Ok(graded) if !watch_grading || !interrupted(&grade_cancel) => graded,
        outcome => {
            let error = match outcome {
                Err(error) if !watch_grading || !interrupted(&grade_cancel) => error,
                _ => RunError::Interrupted,
            };
            established.after_turn = Some(after_turn(turn));
            return Err((error, established));
        }
    };
    // Removed once graded (an error path above drops it, which removes it too).
    if let Some(container) = container {
        kept!(container.remove().await.map_err(container::failed));
    }
    Ok(Done {
        established,
        exit_codes: planned.plan.exit_codes,
        turn,
        graded,
    })
}

/// What a turn that ended in an ERROR (its grading failed, a translation failed) keeps
/// for `task.json`.
fn after_turn(turn: TurnDone) -> AfterTurn {
    let live = &turn.turn;
    AfterTurn {
        stop: live.stop.map(|reason| StopRecord {
            reason,
            at_ms: live.stop_at_ms,
        }),
        stderr_tail: live.stderr_tail.clone(),
        pgid: live.pgid,
        mark: live.mark.clone(),
        leftover_processes: live.leftover_processes,
        host_work_us: live.host_work_us,
        scripted_model_requests: turn.scripted_model_requests,
        record: Some(turn.turn.record),
    }
}

/// Setup: a fresh workspace and HOME, filled (template, starter files, `pre_run` unless
/// the task runs in a container).
/// Errors: the stage's, with the `pre_run` steps that ran.
async fn setup(
    p: &Prepared,
    dir: &Path,
) -> Result<Dirs, (RunError, Vec<crate::results::StepRecord>)> {
    let pre_run_here = p.task.sandbox.driver == Driver::Tempdir;
    setup::prepare_dirs(&p.task, dir, pre_run_here)
        .await
        .map_err(|e| (RunError::Setup(Cause(e.message)), e.steps))
}

/// Plan: the component (resolved again for each task, so a component file replaced during
/// a long suite is picked up by the next task; an unchanged one costs a hash and a cache
/// hit), the scripted model with this harness's translator, and the launch plan.
async fn plan(
    p: &Prepared,
    options: &RunOptions,
    dirs: &Dirs,
    time_mode: bool,
) -> Result<Planned, RunError> {
    let loaded = match options.components.file_for(&p.harness) {
        Some(_) => options
            .components
            .harness(&p.harness)
            .map_err(RunError::Resolve)?,
        None => p.loaded.clone(),
    };
    let mut launcher = Launcher::new(&loaded).map_err(RunError::Component)?;
    if options.gateway {
        super::gateway::supported(p, time_mode)?;
    }
    let mut kept_translator = None;
    let model = match &p.script {
        // A real upstream replaces the scripted model.
        Some(_) if options.gateway && options.upstream.is_some() => None,
        Some(script) => {
            // The server translates through an instance of its own, on its own thread.
            let translator =
                Arc::new(ComponentTranslator::new(&loaded).map_err(RunError::Component)?);
            kept_translator = Some(translator.clone());
            let workspace = dirs.workspace.display().to_string();
            let mut config =
                ServerConfig::new(script.clone(), workspace).with_translator(translator);
            // Call N+1 is held where it begins, so the CLI cannot act on its reply: the cap
            // means the same whether the CLI or the host enforces it.
            // (With the gateway in front, the gateway holds it.)
            config.hold_from_turn = p.task.run_limits.max_turns.filter(|_| !options.gateway);
            // Likewise the reply that would hand out tool call N+1: tool N+1 never runs.
            config.hold_past_tool_calls = p.task.run_limits.max_tool_calls;
            Some(
                ScriptedModel::start(config)
                    .await
                    .map_err(RunError::ScriptedModel)?,
            )
        }
        None => None,
    };
    let gateway = match options.gateway {
        true => Some(super::gateway::start(p, options, model.as_ref()).await?),
        false => None,
    };
    let described = super::caps::describe_with(&mut launcher).map_err(RunError::Component)?;
    let base_url = match &gateway {
        Some(gateway) => Some(gateway.base_url()),
        None => model.as_ref().map(ScriptedModel::base_url),
    };
    let settings = agent_settings(&p.task, &described.caps, base_url);
    let limits = p.task.run_limits.to_cli(options.native_limits);
    let (plan, started) = if time_mode {
        super::sessions::first_plan(&mut launcher, &settings, &limits)?
    } else {
        let plan = launcher
            .plan(&settings, &limits)
            .map_err(RunError::Component)?
            .map_err(|reason| RunError::Refused(Cause(reason)))?;
        (plan, None)
    };
    Ok(Planned {
        loaded,
        model,
        translator: kept_translator,
        gateway,
        plan,
        settings,
        limits,
        started,
    })
}

/// Turn: the CLI runs to its end or a stop, every process of it is gone after; the
/// scripted model is shut down.
pub(super) async fn turn(
    launched: Launched,
    model: Option<ScriptedModel>,
    gateway: Option<crate::gateway::Gateway>,
    deadlines: Deadlines,
    cancel: watch::Receiver<bool>,
    container: Option<&DockerSandbox>,
) -> Result<TurnDone, RunError> {
    // The gateway holds call N+1 (`max_turns`); the scripted model behind it still holds
    // the reply past `max_tool_calls`: the turn loop hears both.
    let held = match (&gateway, &model) {
        (Some(gateway), Some(model)) => {
            Some(super::gateway::either_hold(gateway.held(), model.held()))
        }
        (Some(gateway), None) => Some(gateway.held()),
        (None, model) => model.as_ref().map(ScriptedModel::held),
    };
    super::launch::runnable(&launched.spec, container)?;
    let recording_path = launched.recording_path.clone();
    let stoppers: Vec<_> = gateway
        .iter()
        .map(crate::gateway::Gateway::stopper)
        .chain(model.iter().map(ScriptedModel::stopper))
        .collect();
    let mut turn = live::run_turn(
        launched.spec,
        launched.pipeline,
        launched.recording,
        launched.stderr_log,
        deadlines,
        cancel,
        held,
        container,
        &stoppers,
    )
    .await
    .map_err(RunError::Cli)?;
    // The gateway closes before its upstream (the scripted model) does.
    if let Some(gateway) = gateway {
        super::gateway::finish(gateway, &mut turn, &recording_path)
            .await
            .map_err(RunError::Cli)?;
    }
    let mut scripted_model_requests = None;
    if let Some(model) = model {
        scripted_model_requests = Some(
            model
                .requests()
                .iter()
                .map(|r| serde_json::to_value(r).unwrap_or_default())
                .collect(),
        );
        model.shutdown().await;
    }
    Ok(TurnDone {
        turn,
        scripted_model_requests,
        time_budget: None,
        earlier_turns: Vec::new(),
    })
}
