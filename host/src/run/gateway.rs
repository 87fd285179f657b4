//! The model gateway in a task's lifecycle (`run --gateway`): refused where it cannot run
//! yet, started at the plan stage in front of the scripted model or the `--upstream` API,
//! and closed after the turn, its calls appended to the recording and applied to the turn
//! record ([`crate::gateway::apply_to_turn`]).

use super::error::{Cause, RunError};
use super::{Prepared, RunOptions};
use crate::gateway::{Credentials, Gateway, GatewayConfig};
use crate::task::sandbox::Driver;
use crate::turn::live::LiveTurn;
use crate::turn::recording::RecordingWriter;
use coder_eval_scripted_model::{Hold, ScriptedModel};
use std::path::Path;
use tokio::sync::watch;

/// Errors ([`RunError::Refused`]): a time-budget task (several launches), or
/// `sandbox.driver: docker` (the container does not reach the gateway's port yet). Neither
/// is wired; both are refused at load already (`prepare`'s `run_option_refusal`), and
/// kept here for a caller that skips it.
pub(super) fn supported(p: &Prepared, time_mode: bool) -> Result<(), RunError> {
    if time_mode {
        return Err(RunError::Refused(Cause(
            "--gateway does not run time-budget tasks (agent.time_budget) yet: run without it"
                .into(),
        )));
    }
    if p.task.sandbox.driver == Driver::Docker {
        return Err(RunError::Refused(Cause(
            "--gateway does not run tasks with sandbox.driver: docker yet: run without it".into(),
        )));
    }
    Ok(())
}

/// Starts the gateway in front of `--upstream` (with the credentials among `--pass-env`)
/// or the task's scripted model, holding main calls past `max_turns`.
/// Errors: no upstream at all ([`RunError::Refused`]), or the gateway cannot start.
pub(super) async fn start(
    p: &Prepared,
    options: &RunOptions,
    model: Option<&ScriptedModel>,
) -> Result<Gateway, RunError> {
    let (upstream, credentials) = match (&options.upstream, model) {
        (Some(url), _) => (url.clone(), Credentials::from_env(&options.pass_env)),
        (None, Some(model)) => (model.base_url(), Credentials::default()),
        (None, None) => {
            return Err(RunError::Refused(Cause(
                "--gateway needs an upstream: the task plays no scripted model, so give the \
                 real API with --upstream URL (and its key with --pass-env)"
                    .into(),
            )));
        }
    };
    let mut config = GatewayConfig::new(upstream);
    config.credentials = credentials;
    config.hold_from_turn = p.task.run_limits.max_turns;
    config.keep_bodies = options.gateway_bodies;
    // The values held back from the agent never show in a kept body either.
    config.redact = options
        .pass_env
        .iter()
        .filter(|k| !crate::gateway::to_agent(k, true))
        .filter_map(|k| std::env::var(k).ok())
        .collect();
    config.budgets = p.task.run_limits.budgets();
    config.price_table = options.price_table.clone();
    Gateway::start(config).await.map_err(RunError::Gateway)
}

/// Closes the gateway once the turn ended, appends its calls to the recording (after the
/// `exit` record) and applies them to the turn record, as replay will.
/// Errors: the recording could not be appended to.
pub(super) async fn finish(
    gateway: Gateway,
    turn: &mut LiveTurn,
    recording: &Path,
) -> std::io::Result<()> {
    let budgets = gateway.budgets();
    let price_table = gateway.price_table().map(|t| t.path.display().to_string());
    let calls = gateway.shutdown(turn.started).await;
    let mut writer = RecordingWriter::append(recording)?;
    for call in &calls {
        writer.model_call(call)?;
    }
    crate::gateway::apply_to_turn_priced(
        &mut turn.record,
        &calls,
        &budgets,
        price_table.as_deref(),
    );
    Ok(())
}

/// One receiver for two sources of held calls: the first hold either reports.
pub(super) fn either_hold(
    mut a: watch::Receiver<Option<Hold>>,
    mut b: watch::Receiver<Option<Hold>>,
) -> watch::Receiver<Option<Hold>> {
    let (tx, rx) = watch::channel(None);
    tokio::spawn(async move {
        let hold = tokio::select! {
            Ok(h) = a.wait_for(Option::is_some) => *h,
            Ok(h) = b.wait_for(Option::is_some) => *h,
            else => None,
        };
        if hold.is_some() {
            let _ = tx.send(hold);
            // Kept open until the turn loop drops its receiver.
            tx.closed().await;
        }
    });
    rx
}
