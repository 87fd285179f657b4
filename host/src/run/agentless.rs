//! `agent.type: none`, coder_eval's agentless task: the sandbox is prepared (template,
//! starter files, environment, `pre_run`), no agent starts and no model is called, then
//! the `post_run` steps and the criteria run on what the preparation left, as for a turn
//! that completed. For canary and system checks that reuse the harness's sandbox and
//! reports. Its `task.json` is `<out>/<task_id>/none/task.json`, with no turn and no
//! recording.

use super::RunOptions;
use super::assemble;
use super::setup;
use super::verdict;
use crate::results::{TaskResult, TaskStatus};
use crate::task::Task;
use std::time::Instant;

/// The harness name an agentless task is recorded under.
pub const NO_AGENT: &str = "none";

/// Runs the agentless `task` and writes its `task.json`. Never fails: a problem becomes
/// status ERROR with its reason.
pub async fn run_agentless(task: &Task, options: &RunOptions) -> TaskResult {
    let dir = options.out_dir.join(&task.task_id).join(NO_AGENT);
    let mut result = assemble::skipped(task, NO_AGENT);
    result.paths.recording = None;
    result.paths.stderr = None;
    let start = Instant::now();
    match setup::prepare_dirs(task, &dir, true).await {
        Err(e) => {
            result.steps = e.steps;
            let error = super::RunError::Setup(super::error::Cause(e.message));
            result.status = TaskStatus::Error;
            result.error = Some(error.message());
            result.error_kind = Some(error.kind().to_string());
        }
        Ok(dirs) => {
            result.setup_ms = Some(start.elapsed().as_millis() as u64);
            let grading = Instant::now();
            let reference = crate::workspace::stage_reference(task, &dir);
            let mut steps = dirs.pre_run.clone();
            for step in &task.post_run {
                let step = crate::task::Step {
                    fail_on_error: false,
                    ..step.clone()
                };
                if let Ok(record) = setup::run_step(&step, &dirs, "post_run", None).await {
                    steps.push(record);
                }
            }
            result.steps = steps;
            match reference {
                Err(e) => {
                    let error = super::RunError::Reference(super::error::Cause(e));
                    result.status = TaskStatus::Error;
                    result.error = Some(error.message());
                    result.error_kind = Some(error.kind().to_string());
                }
                Ok(reference) => {
                    if reference.is_some() {
                        result.paths.reference = Some("reference".into());
                    }
                    let judges = verdict::Judges::new(options, &dir, task);
                    let path = dirs.env.path(&crate::workspace::host_path());
                    let verdict = verdict::grade_agentless(
                        task,
                        &dirs.workspace,
                        &judges,
                        verdict::Env {
                            reference_dir: reference.as_deref(),
                            path: path.as_deref(),
                            container: None,
                        },
                    )
                    .await;
                    result.status = verdict.status;
                    result.criteria = verdict.criteria;
                    result.weighted_score = verdict.weighted_score;
                    result.grading_ms = Some(grading.elapsed().as_millis() as u64);
                }
            }
        }
    }
    super::write_result::write_task_json(&dir, &mut result);
    result
}
