//! [`prepare`]: every task on every harness checked before any agent starts: the task
//! files, the harness components, and each launch plan (a harness that cannot honour a
//! limit rejects the task here).

use super::RunOptions;
use super::launch::agent_settings;
use crate::components::ResolveError;
use crate::limits::limit_name;
use crate::runtime::LoadedComponent;
use crate::runtime::harness::Launcher;
use crate::task::Task;
use crate::turn::early_stop::LivePlan;
use coder_eval_scripted_model::Script;

/// A task × harness pair, checked and ready.
#[derive(Clone)]
pub struct Prepared {
    /// The task.
    pub task: Task,
    /// The harness it runs on.
    pub harness: String,
    /// The harness's component, resolved and checked.
    pub(super) loaded: LoadedComponent,
    /// The scripted model's script, when the task plays one.
    pub(super) script: Option<Script>,
    /// The task's early stop, when it arms criteria (checked at load).
    pub live: Option<LivePlan>,
    /// Which unit of the suite this is (variant, replicate) and so its result folder.
    pub unit: crate::results::UnitId,
    /// Which layer set each field (experiment runs and overrides only).
    pub lineage: Option<std::sync::Arc<crate::results::Lineage>>,
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
    /// `at` is `FILE:LINE` of the field refused (`FILE` when no line is found).
    #[error("{at}: task `{task}`: the `{harness}` harness refuses it: {reason}")]
    Refused {
        at: String,
        task: String,
        harness: String,
        reason: String,
    },
    #[error("{at}: task `{task}`: the `{harness}` harness cannot honour `{limit}`")]
    UnsupportedLimit {
        at: String,
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
    /// The task sets agent fields the harness does not honour, or asks for time-budget
    /// mode on a harness that cannot resume a session.
    #[error("{at}: task `{task}`: {source}")]
    AgentField {
        at: String,
        task: String,
        #[source]
        source: Box<super::caps::Unfit>,
    },
    /// The task's early stop cannot work as written (see `grading::live`).
    #[error("{at}: task `{task}`: early stop: {message}")]
    EarlyStop {
        /// `FILE:LINE` of the criterion's `stop_early:` (or the run limit) refused.
        at: String,
        task: String,
        message: String,
    },
    #[error("task `{task}`: no harness given (set agent.type or pass --harness)")]
    NoHarness { task: String },
    /// An option of the run that the task cannot take (`--gateway` on a time-budget
    /// task or a docker sandbox); `at` is `FILE:LINE:COL` of the task field it clashes
    /// with.
    #[error("{at}: task `{task}`: {reason}")]
    Option {
        at: String,
        task: String,
        reason: String,
    },
    /// Two runs would share one result folder.
    #[error(
        "task `{task}` on `{harness}` is given twice, by {first} and by {second} (task ids \
         must differ: results go to <out>/<task_id>/<harness>/)"
    )]
    Duplicate {
        task: String,
        harness: String,
        /// The task file of the first.
        first: String,
        /// The task file of the second (may be the first again).
        second: String,
    },
    /// One unit's result folder would sit inside another's (a dataset row whose id is a
    /// harness name, beside a plain task of the dataset's id): `--resume` re-running the
    /// outer unit would delete the inner one's result.
    #[error(
        "task `{inner}` ({inner_file}) would write its results inside the result folder \
         {outer_dir}/ of task `{outer}` ({outer_file}): rename one of them"
    )]
    NestedFolder {
        inner: String,
        inner_file: String,
        outer: String,
        outer_file: String,
        outer_dir: String,
    },
    /// A task id below its first part (a dataset row id) names a folder the results use
    /// for something else: a harness, `workspace`, `home`, a replicate `rNN`; or a unit's
    /// first folder (its variant id, else its task id) is named as a file of the run's
    /// folder (`run.json`, `report.html`, …).
    #[error(
        "task `{task}` ({file}): `{part}` cannot name a unit's result folder (a task id, a \
         variant id or a row id): the run uses that name ({why})"
    )]
    ReservedId {
        task: String,
        file: String,
        part: String,
        why: String,
    },
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
        let live = early_stop(&task)?;
        if let Some(reason) = run_option_refusal(&task, options) {
            return Err(PrepareError::Option {
                at: crate::task::locate(&task.path, &reason),
                task: task.task_id.clone(),
                reason,
            });
        }
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
            let from = if harnesses.is_empty() {
                format!("{}: agent.type", task.path.display())
            } else {
                "--harness".into()
            };
            let loaded =
                options
                    .components
                    .harness(&harness)
                    .map_err(|source| PrepareError::Harness {
                        task: task.task_id.clone(),
                        harness: harness.clone(),
                        from: from.clone(),
                        source: Box::new(source),
                    })?;
            check_on_harness(&task, &harness, &loaded, &from)?;
            if let Some(p) = prepared
                .iter()
                .find(|p: &&Prepared| p.task.task_id == task.task_id && p.harness == harness)
            {
                return Err(PrepareError::Duplicate {
                    task: task.task_id.clone(),
                    harness,
                    first: p.task.path.display().to_string(),
                    second: task.path.display().to_string(),
                });
            }
            prepared.push(Prepared {
                unit: crate::results::UnitId {
                    variant: None,
                    task_id: task.task_id.clone(),
                    harness: harness.clone(),
                    replicate: None,
                    replicates: None,
                },
                lineage: None,
                task: task.clone(),
                harness,
                loaded,
                script: script.clone(),
                live: live.clone(),
            });
        }
    }
    Ok(prepared)
}

/// Why the run's options cannot run `task`, naming the option and the task field: the
/// model gateway (`--gateway`) serves one launch, and a time-budget task
/// (`agent.budget_mode: time`) launches several sessions; nor does it reach into a
/// container yet (`sandbox.driver: docker`: the agent there cannot reach the gateway's
/// loopback port). `None`: it can run.
fn run_option_refusal(task: &Task, options: &RunOptions) -> Option<String> {
    if !options.gateway {
        return None;
    }
    if task.agent.budget_mode == Some(crate::task::time_budget::BudgetMode::Time) {
        return Some(
            "--gateway does not run time-budget tasks yet (agent.budget_mode: time launches \
             several sessions; the gateway serves one): run without --gateway, or set \
             agent.budget_mode: iterations"
                .to_string(),
        );
    }
    (task.sandbox.driver == crate::task::sandbox::Driver::Docker).then(|| {
        "--gateway does not run tasks with sandbox.driver: docker yet (the agent in the \
         container cannot reach the gateway on the host's loopback): run without --gateway, \
         or without the docker sandbox"
            .to_string()
    })
}

/// The task's early stop checked (`grading::live`): its plan, `None` when it arms nothing.
/// Harness-independent; [`prepare`] and `coder-eval check` both call it.
pub fn early_stop(task: &Task) -> Result<Option<LivePlan>, PrepareError> {
    crate::grading::live::plan(
        &task.run_limits,
        &task.success_criteria,
        &task.dir,
        &task.prompt,
    )
    .map_err(|message| PrepareError::EarlyStop {
        at: crate::task::locate(&task.path, &message),
        task: task.task_id.clone(),
        message,
    })
}

/// Every load-time refusal of `task` on one harness, before any agent starts: the agent
/// fields the harness honours (`caps::check_task`), a dry launch plan (the component's
/// own refusals, limits it cannot honour) and budgets its stream cannot enforce
/// (`limits::budget::refusal`). `from` says where the harness name came from (`--harness`
/// or `FILE: agent.type`). [`prepare`] and `coder-eval check` share it, so `check` accepts
/// exactly what `run` accepts.
pub fn check_on_harness(
    task: &Task,
    harness: &str,
    loaded: &LoadedComponent,
    from: &str,
) -> Result<(), PrepareError> {
    let fail = |source: ResolveError| PrepareError::Harness {
        task: task.task_id.clone(),
        harness: harness.to_string(),
        from: from.to_string(),
        source: Box::new(source),
    };
    // What the harness can do: harness@0.2.0 `describe()`, or 0.1.0's fixed list.
    let mut launcher = Launcher::new(loaded).map_err(|e| fail(e.into()))?;
    let described = super::caps::describe_with(&mut launcher).map_err(|e| fail(e.into()))?;
    super::caps::check_task(task, harness, &described).map_err(|source| {
        PrepareError::AgentField {
            at: crate::task::locate(&task.path, &source.to_string()),
            task: task.task_id.clone(),
            source: Box::new(source),
        }
    })?;
    // A dry plan with placeholder URL: refusals and unsupported limits surface now.
    let settings = agent_settings(task, &described.caps, Some("http://127.0.0.1:9".into()));
    let plan = launcher
        .plan(&settings, &task.run_limits.to_cli(true))
        .map_err(|e| fail(e.into()))?
        .map_err(|reason| PrepareError::Refused {
            at: crate::task::locate(&task.path, &reason),
            task: task.task_id.clone(),
            harness: harness.to_string(),
            reason,
        })?;
    if let Some(limit) = plan
        .unsupported_limits
        .iter()
        .find(|l| task.run_limits.is_set(**l))
    {
        return Err(PrepareError::UnsupportedLimit {
            at: crate::task::locate(&task.path, &format!("run_limits.{}", limit_name(*limit))),
            task: task.task_id.clone(),
            harness: harness.to_string(),
            limit: limit_name(*limit).into(),
        });
    }
    if let Some(reason) = crate::limits::budget::refusal(harness, &task.run_limits.budgets()) {
        return Err(PrepareError::Refused {
            at: crate::task::locate(&task.path, &reason),
            task: task.task_id.clone(),
            harness: harness.to_string(),
            reason,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `--gateway` on a `sandbox.driver: docker` task is refused before any agent starts,
    /// the reason naming the option and the field, placed at the field's line and column
    /// (a time-budget task likewise); without `--gateway` both run.
    #[test]
    fn the_gateway_is_refused_on_a_docker_task_at_the_drivers_line() {
        let dir = std::env::temp_dir().join(format!("gw-refusal-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("dk.yaml");
        std::fs::write(
            &path,
            "task_id: dk\ninitial_prompt: hi\nagent:\n  type: claude-code\nsandbox:\n  driver: tempdir\n",
        )
        .unwrap();
        // Loading a docker task needs a Docker daemon (absent on test machines): the
        // loaded task is made a docker one instead, its field still on line 6.
        let mut task = crate::task::Task::load(&path).unwrap();
        task.sandbox.driver = crate::task::Driver::Docker;
        let mut options = RunOptions::new(dir.join("out"));
        assert_eq!(run_option_refusal(&task, &options), None);
        options.gateway = true;
        let reason = run_option_refusal(&task, &options).expect("refused");
        assert!(
            reason.contains("--gateway") && reason.contains("sandbox.driver: docker"),
            "{reason}"
        );
        let at = crate::task::locate(&task.path, &reason);
        assert!(at.ends_with("dk.yaml:6:3"), "{at}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
