//! Helpers for reducer unit tests (native).
//!
//! ```ignore
//! type Reduced = harness_kit::testing::Reduced<CodexReducer>;
//!
//! let events = Reduced::new("{\"type\":\"turn.started\"}\nnot json");
//! assert_eq!(events.kinds(), ["not_json", "missing_terminal_event"]);
//! assert!(events.final_result().is_none());
//! ```

use crate::{Event, Reducer, ReducerConfig, ToolStatus, UnreportedKind, Usage};
use std::collections::HashSet;
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

impl<R: Reducer> Reduced<R> {
    /// As [`Reduced::new`], over a capture file (`path` relative to the repository root,
    /// e.g. `tests/corpus/field2/pi/B47-agent-end-then-auto-retry.jsonl`).
    pub fn file(path: &str) -> Self {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let text =
            std::fs::read_to_string(root.join(path)).unwrap_or_else(|e| panic!("{path}: {e}"));
        Self::new(&text)
    }
}

impl<R> Reduced<R> {
    /// The main-thread model calls that count, as events@0.2.0 defines them: each
    /// `ModelCallStarted` without a parent, less the ones a `ModelCallRetried` with
    /// `call_started` un-counts (the last main-thread call started before it).
    pub fn turns(&self) -> usize {
        let mut open: Vec<usize> = Vec::new();
        for (i, e) in self.events.iter().enumerate() {
            match e {
                Event::ModelCallStarted {
                    parent_call_id: None,
                    ..
                } => open.push(i),
                Event::ModelCallRetried {
                    call_started: true,
                    parent_call_id: None,
                    ..
                } => {
                    open.pop();
                }
                _ => {}
            }
        }
        open.len()
    }

    /// The message ids the retries abandoned.
    pub fn abandoned(&self) -> HashSet<&str> {
        self.events
            .iter()
            .filter_map(|e| match e {
                Event::ModelCallRetried {
                    abandoned_message_id: Some(id),
                    ..
                } => Some(id.as_str()),
                _ => None,
            })
            .collect()
    }

    /// The messages as (id, text), the last copy of each id, in order of first sight,
    /// without the abandoned ones.
    pub fn messages(&self) -> Vec<(&str, &str)> {
        let abandoned = self.abandoned();
        let mut out: Vec<(&str, &str)> = Vec::new();
        for e in &self.events {
            if let Event::AssistantMessage {
                message_id, text, ..
            } = e
            {
                if abandoned.contains(message_id.as_str()) {
                    continue;
                }
                match out.iter_mut().find(|(id, _)| *id == message_id) {
                    Some(entry) => entry.1 = text,
                    None => out.push((message_id, text)),
                }
            }
        }
        out
    }

    /// The summed usage of the messages (last copy per id, abandoned ones left out), or
    /// `None` when no message reports usage.
    pub fn message_usage(&self) -> Option<Usage> {
        let abandoned = self.abandoned();
        let mut last: Vec<(&str, Option<Usage>)> = Vec::new();
        for e in &self.events {
            if let Event::AssistantMessage {
                message_id, usage, ..
            } = e
            {
                if abandoned.contains(message_id.as_str()) {
                    continue;
                }
                match last.iter_mut().find(|(id, _)| *id == message_id) {
                    Some(entry) => entry.1 = *usage,
                    None => last.push((message_id, *usage)),
                }
            }
        }
        let reported: Vec<Usage> = last.into_iter().filter_map(|(_, u)| u).collect();
        (!reported.is_empty()).then(|| {
            reported.iter().fold(Usage::default(), |a, u| Usage {
                input_tokens: a.input_tokens + u.input_tokens,
                output_tokens: a.output_tokens + u.output_tokens,
                cache_read_tokens: a.cache_read_tokens + u.cache_read_tokens,
                cache_write_tokens: Usage::add_cache_writes(
                    a.cache_write_tokens,
                    u.cache_write_tokens,
                ),
            })
        })
    }

    /// The tool calls as (call id, name, status of the first end), in order of start.
    pub fn tools(&self) -> Vec<(&str, &str, Option<ToolStatus>)> {
        let mut out: Vec<(&str, &str, Option<ToolStatus>)> = Vec::new();
        for e in &self.events {
            match e {
                Event::ToolCallStarted { call_id, name, .. }
                    if !out.iter().any(|(id, _, _)| id == call_id) =>
                {
                    out.push((call_id, name, None));
                }
                Event::ToolCallFinished {
                    call_id, status, ..
                } => {
                    if let Some(t) = out.iter_mut().find(|(id, _, _)| id == call_id)
                        && t.2.is_none()
                    {
                        t.2 = Some(*status);
                    }
                }
                _ => {}
            }
        }
        out
    }

    /// The status of every tool-call end, in order, a second end of a call included.
    pub fn tool_ends(&self) -> Vec<ToolStatus> {
        self.events
            .iter()
            .filter_map(|e| match e {
                Event::ToolCallFinished { status, .. } => Some(*status),
                _ => None,
            })
            .collect()
    }

    /// The retries, as (announced, call_started, abandoned id, attempt, delay ms, status).
    #[allow(clippy::type_complexity)]
    pub fn retries(
        &self,
    ) -> Vec<(
        bool,
        bool,
        Option<&str>,
        Option<u32>,
        Option<u64>,
        Option<u32>,
    )> {
        self.events
            .iter()
            .filter_map(|e| match e {
                Event::ModelCallRetried {
                    announced,
                    call_started,
                    abandoned_message_id,
                    attempt,
                    delay_ms,
                    status,
                    ..
                } => Some((
                    *announced,
                    *call_started,
                    abandoned_message_id.as_deref(),
                    *attempt,
                    *delay_ms,
                    *status,
                )),
                _ => None,
            })
            .collect()
    }

    /// What the stream left out, as (kind, call id).
    pub fn unreported(&self) -> Vec<(UnreportedKind, Option<&str>)> {
        self.events
            .iter()
            .filter_map(|e| match e {
                Event::Unreported { kind, call_id, .. } => Some((*kind, call_id.as_deref())),
                _ => None,
            })
            .collect()
    }

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

/// Asserts that the version `harnesses/package.json` pins for the npm `package` (the
/// repository's pins, read at test time) is one of `H::CHECKED_VERSIONS`: a pin moved
/// without checking the harness against it fails here. Panics naming the file when it is
/// unreadable or has no such pin.
pub fn assert_pin_checked<H: crate::Harness>(package: &str) {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../harnesses/package.json");
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let manifest: serde_json::Value =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"));
    let pin = manifest["dependencies"][package]
        .as_str()
        .unwrap_or_else(|| panic!("{path}: no `dependencies.{package}` string"));
    assert!(
        H::CHECKED_VERSIONS.contains(&pin),
        "{path} pins {package} {pin}, not among the versions the harness was checked \
         against: {:?}",
        H::CHECKED_VERSIONS
    );
}
