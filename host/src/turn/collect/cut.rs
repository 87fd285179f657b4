//! Where the turn stops counting: the host freezes it ([`Collector::freeze`]), the
//! scripted model holds a call past a cap ([`Collector::held_call`]), and what the
//! trajectory keeps of the events past the cut ([`past_the_cut`]).

use super::Collector;
use crate::results::{StampedEvent, StopReason};
use harness_kit::Event;

impl Collector {
    /// The host has decided to end the turn (a timeout, Ctrl-C, ...): events that still
    /// arrive while the CLI is stopped are no longer counted, and the trajectory keeps only
    /// their diagnostics.
    pub(crate) fn freeze(&mut self) {
        self.frozen = true;
    }

    /// Whether events still count (no cap fired, the host has not frozen the turn).
    pub(super) fn counting(&self) -> bool {
        self.stop.is_none() && !self.frozen
    }

    /// A main-thread model call the stream does not show began: the scripted model holds
    /// its request, which it does only past `max_turns` (`reason`
    /// [`StopReason::MaxTurns`]) or when its reply would hand out tool calls past
    /// `max_tool_calls` ([`StopReason::MaxToolCalls`]), after answering `calls_before`
    /// main calls (its own count, the held request's turn index). It counts as a call (in
    /// the trajectory without a message id), and the cap `reason` fires on it even if the
    /// stream is behind in showing the calls before it: no answer will come. The count is
    /// the model's, not the stream's: calls the stream has not shown yet still count
    /// (their late lines are no longer counted, nor in the trajectory), so `num_turns` is
    /// `calls_before + 1` however far the CLI's output lags its requests, or ahead of
    /// them (a stream that showed the held call begin does not count it twice). A
    /// `max_tool_calls` hold means the reply with tool call N+1 was never sent: the tool
    /// calls recorded are the ones that ran, at most N.
    pub(crate) fn held_call(
        &mut self,
        stamp_us: u64,
        calls_before: u32,
        reason: StopReason,
    ) -> Option<StopReason> {
        // The model counts the resumed history's calls too: this launch's are the rest.
        let calls_before = calls_before.saturating_sub(self.earlier_turns);
        let counting = self.counting();
        if counting && self.main_calls > calls_before {
            // The stream already showed the held call begin (Pi announces a call before it
            // sends the request): it is not a second call.
            self.stop = Some(reason);
            return self.stop;
        }
        if counting {
            self.main_calls = self.main_calls.max(calls_before);
        }
        let fired = self.push(StampedEvent {
            line: 0,
            stamp_us,
            event: Event::ModelCallStarted {
                message_id: None,
                parent_call_id: None,
            },
        });
        if fired.is_none() && counting {
            self.stop = Some(reason);
            return self.stop;
        }
        fired
    }
}

/// What the trajectory keeps of an event that arrives after the cut (a cap, an early stop,
/// a budget or another stop of the host): what the record keeps of it, a diagnostic (an
/// `Event::Diagnostic` as it came; a retried call or unreported work as the diagnostic it
/// is noted as), and nothing of any other event. So the criteria, which read the
/// trajectory, see exactly the events the record counts.
pub(super) fn past_the_cut(stamped: StampedEvent) -> Option<StampedEvent> {
    let event = match stamped.event {
        event @ Event::Diagnostic { .. } => event,
        event @ (Event::ModelCallRetried { .. } | Event::Unreported { .. }) => {
            let (kind, message) = harness_kit::down_to_diagnostic(&event)?;
            Event::Diagnostic {
                kind,
                message,
                raw: String::new(),
            }
        }
        _ => return None,
    };
    Some(StampedEvent { event, ..stamped })
}
