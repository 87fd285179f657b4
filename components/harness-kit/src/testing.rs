//! Helpers for reducer unit tests (native).
//!
//! ```ignore
//! type Reduced = harness_kit::testing::Reduced<CodexReducer>;
//!
//! let events = Reduced::new("{\"type\":\"turn.started\"}\nnot json");
//! assert_eq!(events.kinds(), ["not_json", "missing_terminal_event"]);
//! assert!(events.final_result().is_none());
//! ```

use crate::{Event, Reducer, ReducerConfig};
use std::marker::PhantomData;
use std::ops::Deref;

/// The events a new reducer `R` makes of a text, with the questions tests ask of them. It
/// derefs to the events (`events.iter()`, `events.contains(..)`, `&events[..]`).
pub struct Reduced<R> {
    events: Vec<Event>,
    reducer: PhantomData<R>,
}

impl<R: Reducer> Reduced<R> {
    /// Feeds `text` line by line (stamped 1 ms apart) through a new `R` and finishes it.
    pub fn new(text: &str) -> Self {
        Self::truncated(text, None)
    }

    /// As [`Reduced::new`], then `rest` as the bytes after the last newline.
    pub fn truncated(text: &str, rest: Option<&str>) -> Self {
        let mut reducer = R::new(ReducerConfig::default());
        let mut events = Vec::new();
        for (i, line) in text.lines().enumerate() {
            events.extend(reducer.feed(line.as_bytes(), i as u64 * 1000));
        }
        events.extend(reducer.finish(rest.map(str::as_bytes)));
        Reduced {
            events,
            reducer: PhantomData,
        }
    }
}

impl<R> Reduced<R> {
    /// The kinds of the diagnostics, in order.
    pub fn kinds(&self) -> Vec<&str> {
        diagnostic_kinds(&self.events)
    }

    /// How many model calls (main thread and sub-agents) start.
    pub fn calls(&self) -> usize {
        self.count(|e| matches!(e, Event::ModelCallStarted { .. }))
    }

    /// How many events `pick` picks.
    pub fn count(&self, pick: impl Fn(&Event) -> bool) -> usize {
        self.events.iter().filter(|e| pick(e)).count()
    }

    /// The first final result.
    pub fn final_result(&self) -> Option<&Event> {
        self.events
            .iter()
            .find(|e| matches!(e, Event::FinalResult { .. }))
    }

    /// The events.
    pub fn into_events(self) -> Vec<Event> {
        self.events
    }
}

impl<R> std::fmt::Debug for Reduced<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.events.fmt(f)
    }
}

impl<R> Deref for Reduced<R> {
    type Target = [Event];

    fn deref(&self) -> &[Event] {
        &self.events
    }
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
