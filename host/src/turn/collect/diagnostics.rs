//! The collector's diagnostics: the host's own (line too large, reducer failed), those
//! about the input as a whole (which lead the record and the trajectory), and the
//! stream's `Diagnostic` events.

use super::Collector;
use crate::results::{DiagnosticRecord, StampedEvent};
use crate::turn::timing::ms;
use harness_kit::Event;

impl Collector {
    /// A diagnostic from the host itself (line too large, reducer failed).
    pub(crate) fn host_diagnostic(
        &mut self,
        line: u64,
        stamp_us: u64,
        kind: &str,
        message: String,
    ) {
        self.push(host_event(line, stamp_us, kind, message));
    }

    /// A diagnostic about the input as a whole (an unreadable recording line): it goes
    /// before every event in the record and the trajectory, wherever in the input it was
    /// met, so a reader that streams the input gives the same record as one that read it
    /// all first.
    /// `stamp_us` is the line's own stamp when it has one (else 0), `raw` the line as
    /// written.
    pub(crate) fn input_diagnostic(
        &mut self,
        line: u64,
        stamp_us: u64,
        kind: &str,
        message: String,
        raw: String,
    ) {
        let mut event = host_event(line, stamp_us, kind, message);
        if let Event::Diagnostic { raw: kept, .. } = &mut event.event {
            *kept = raw;
        }
        self.leading.push(event);
    }

    pub(super) fn on_diagnostic(
        &mut self,
        line: u64,
        at: u64,
        kind: &str,
        message: &str,
        raw: &str,
    ) {
        self.diagnostics.push(DiagnosticRecord {
            line,
            at_ms: ms(at),
            kind: kind.to_string(),
            message: message.to_string(),
            raw: raw.to_string(),
        });
    }
}

fn host_event(line: u64, stamp_us: u64, kind: &str, message: String) -> StampedEvent {
    StampedEvent {
        line,
        stamp_us,
        event: Event::Diagnostic {
            kind: kind.to_string(),
            message,
            raw: String::new(),
        },
    }
}
