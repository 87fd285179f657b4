//! The grade stage of one task ([`grade`]), after its turn: the reference staged, the
//! `post_run` steps, then the criteria (moved from `one.rs`, unchanged).

use super::assemble::Graded;
use super::container;
use super::error::{Cause, RunError};
use super::setup::{self, Dirs};
use super::verdict;
use super::{Prepared, RunOptions};
use crate::sandbox::docker::DockerSandbox;
use crate::turn::live::LiveTurn;
use std::path::Path;
use std::time::Instant;
use tokio::sync::watch;

/// Grade: the reference staged (only now that the agent has finished, beside the
/// workspace, not in it), the `post_run` steps (informational, as in coder_eval: a
/// failing one never fails the task), then the criteria and the task's status. Errors:
/// as the stages' ([`RunError::Interrupted`] once `cancel`, when given, is set after a
/// `post_run` step).
pub(super) async fn grade(
    p: &Prepared,
    options: &RunOptions,
    dirs: &Dirs,
    dir: &Path,
    turn: &LiveTurn,
    container: Option<&DockerSandbox>,
    cancel: Option<&watch::Receiver<bool>>,
) -> Result<Graded, RunError> {
    let start = Instant::now();
    let reference_dir = crate::workspace::stage_reference(&p.task, dir)
        .map_err(|e| RunError::Reference(Cause(e)))?;
    if let Some(container) = container {
        container::after_turn(container, &p.task, reference_dir.as_deref()).await?;
    }
    let mut steps = dirs.pre_run.clone();
    for step in &p.task.post_run {
        let step = crate::task::Step {
            fail_on_error: false,
            ..step.clone()
        };
        // Only a shell that cannot start is an Err here; it is left out of the record.
        if let Ok(record) = setup::run_step(&step, dirs, "post_run", container).await {
            steps.push(record);
        }
        // A signal stopped the step (or came during it): the criteria are not run on
        // what it left half done.
        if cancel.is_some_and(|c| *c.borrow() || crate::interrupt::raised().is_some()) {
            return Err(RunError::Interrupted);
        }
    }
    // The agent ran in `working_dir`: the workspace gets what it (and post_run) left.
    if let Some(container) = container {
        container.copy_out().await.map_err(container::failed)?;
    }
    let judges = verdict::Judges::new(options, dir, &p.task);
    let verdict = verdict::grade(
        &p.task,
        &dirs.workspace,
        &turn.record,
        &turn.trajectory,
        &judges,
        verdict::Env {
            reference_dir: reference_dir.as_deref(),
            path: dirs.env.path(&crate::workspace::host_path()).as_deref(),
            container,
        },
    )
    .await;
    Ok(Graded {
        verdict,
        grading_ms: start.elapsed().as_millis() as u64,
        reference_staged: reference_dir.is_some(),
        steps,
    })
}
