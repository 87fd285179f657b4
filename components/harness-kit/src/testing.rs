//! Helpers for reducer unit tests (native).

use crate::{Event, Reducer, ReducerConfig};

/// Feeds `text` line by line (stamped 1 ms apart) through a new `R`, then finishes it with
/// `truncated` as the bytes after the last newline; returns every event.
pub fn reduce_text<R: Reducer>(text: &str, truncated: Option<&str>) -> Vec<Event> {
    let mut reducer = R::new(ReducerConfig::default());
    let mut events = Vec::new();
    for (i, line) in text.lines().enumerate() {
        events.extend(reducer.feed(line.as_bytes(), i as u64 * 1000));
    }
    events.extend(reducer.finish(truncated.map(str::as_bytes)));
    events
}

/// The kinds of the diagnostics among `events`, in order.
pub fn diagnostic_kinds(events: &[Event]) -> Vec<&str> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Diagnostic { kind, .. } => Some(kind.as_str()),
            _ => None,
        })
        .collect()
}

/// How many model calls (main thread and sub-agents) `events` start.
pub fn model_calls(events: &[Event]) -> usize {
    events
        .iter()
        .filter(|e| matches!(e, Event::ModelCallStarted { .. }))
        .count()
}

/// The first final result among `events`.
pub fn final_result(events: &[Event]) -> Option<&Event> {
    events
        .iter()
        .find(|e| matches!(e, Event::FinalResult { .. }))
}
