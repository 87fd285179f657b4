//! The collector's handlers of the events@0.2.0 gaps: a retried model request
//! (`ModelCallRetried`) is un-counted and recorded as a retry, its wait kept out of
//! generation time; unreported work (`Unreported`) is recorded and makes the totals
//! partial.

use super::Collector;
use crate::results::{RetryRecord, UnreportedRecord};
use crate::turn::timing::ms;
use harness_kit::Event;

/// The retries seen, and the main thread's retry waits.
#[derive(Debug, Clone, Default)]
pub(crate) struct Retries {
    pub(crate) records: Vec<RetryRecord>,
    /// Closed main-thread waits, `[start, end)` µs: from the abandoned attempt's start (or
    /// the retry's announcement) to the next main-thread call's start.
    pub(crate) waits: Vec<(u64, u64)>,
    /// A main-thread wait not yet closed by a new call (µs it began).
    open: Option<u64>,
    /// The usage and cost that abandoned attempts' messages reported (spent all the same).
    pub(crate) spent: Vec<(Option<harness_kit::Usage>, Option<f64>)>,
}

impl Retries {
    /// A main-thread model call began at `at`: it closes the open wait.
    pub(super) fn call_began(&mut self, at: u64) {
        if let Some(start) = self.open.take()
            && at > start
        {
            self.waits.push((start, at));
        }
    }
}

impl Collector {
    /// A `ModelCallRetried` or `Unreported` event while the turn counts.
    pub(super) fn on_gap(&mut self, line: u64, at: u64, event: &Event) {
        match event {
            Event::ModelCallRetried {
                call_started,
                abandoned_message_id,
                parent_call_id,
                attempt,
                delay_ms,
                status,
                error,
                announced,
            } => {
                let mut wait_from = at;
                if *call_started && let Some(start) = self.uncount_last_call(parent_call_id) {
                    wait_from = wait_from.min(start);
                }
                if let Some(id) = abandoned_message_id {
                    self.drop_message(id);
                }
                if parent_call_id.is_none() {
                    // A wait already open (a retry of a retry with no call between) keeps
                    // its start.
                    self.retries.open.get_or_insert(wait_from);
                }
                self.retries.records.push(RetryRecord {
                    at_ms: ms(at),
                    line,
                    attempt: *attempt,
                    delay_ms: *delay_ms,
                    status: *status,
                    error: error.clone(),
                    announced: *announced,
                    abandoned_message_id: abandoned_message_id.clone(),
                    parent_call_id: parent_call_id.clone(),
                    call_started: *call_started,
                });
            }
            Event::Unreported {
                kind,
                call_id,
                reason,
            } => self.unreported.push(UnreportedRecord {
                kind: *kind,
                call_id: call_id.clone(),
                reason: reason.clone(),
                line,
                at_ms: ms(at),
            }),
            _ => {}
        }
    }

    /// Removes the last model call started on the thread of `parent_call_id` (the failed
    /// attempt), which then frees its main-thread index; returns its start, µs.
    fn uncount_last_call(&mut self, parent_call_id: &Option<String>) -> Option<u64> {
        let i = self
            .model_calls
            .iter()
            .rposition(|c| &c.record.parent_call_id == parent_call_id)?;
        let call = self.model_calls.remove(i);
        if call.record.main_index.is_some() {
            self.main_calls = self.main_calls.saturating_sub(1);
            // Later main calls (none, in any stream seen) move up one place.
            for later in &mut self.model_calls[i..] {
                if let Some(n) = later.record.main_index.as_mut() {
                    *n -= 1;
                }
            }
        }
        Some(call.start_us)
    }

    /// Drops the abandoned attempt's message, if the stream had shown one: its text is
    /// no answer, but the tokens and cost it reported were spent, so they stay in the
    /// totals.
    fn drop_message(&mut self, message_id: &str) {
        let Some(i) = self.message_index.remove(message_id) else {
            return;
        };
        let message = self.messages.remove(i);
        if message.usage.is_some() || message.cost_usd.is_some() {
            self.retries.spent.push((message.usage, message.cost_usd));
        }
        for index in self.message_index.values_mut() {
            if *index > i {
                *index -= 1;
            }
        }
    }
}
