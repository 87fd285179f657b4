//! The host's stop, as the model servers see it: once a run's host decides to stop the
//! agent (an early stop, a cap, a budget, a deadline, Ctrl-C), the model answers no more
//! requests, so the CLI cannot go on working while it is being stopped (its stop grace).

use std::sync::Arc;

use tokio::sync::watch;

/// A shared on/off switch: [`Stopper::stop`] trips it, and every server holding a clone
/// (the scripted model, [`crate::ScriptedModel::stopper`]; the host's model gateway)
/// answers no model call from then on: a call that arrives, or whose scripted delay ends,
/// after the stop is left unanswered while the server runs and answered `503` when it
/// shuts down, and logged so (status 503, an `error` that says the host stopped the run).
/// Clones share one switch.
#[derive(Clone, Debug, Default)]
pub struct Stopper {
    flag: Arc<watch::Sender<bool>>,
}

impl Stopper {
    /// A switch not tripped.
    pub fn new() -> Stopper {
        Stopper::default()
    }

    /// Trips the switch: no model call is answered from now on (until [`Stopper::resume`]).
    pub fn stop(&self) {
        self.flag.send_replace(true);
    }

    /// Lets calls be answered again (a time-budget run's next session, after the host
    /// stopped the one before).
    pub fn resume(&self) {
        self.flag.send_replace(false);
    }

    /// Returns once the switch is tripped (at once when it is).
    pub async fn stopped(&self) {
        let mut rx = self.flag.subscribe();
        let _ = rx.wait_for(|stopped| *stopped).await;
    }

    /// Whether the switch is tripped.
    pub fn is_stopped(&self) -> bool {
        *self.flag.borrow()
    }
}

/// The `error` a model call left unanswered because of the host's stop is logged with.
pub const STOPPED_ERROR: &str =
    "the host stopped the run (early stop, cap, budget or deadline): not answered";
