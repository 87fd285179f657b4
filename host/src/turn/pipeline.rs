//! Reduce then collect: each stdout line goes through the harness's reducer component and
//! its events into the [`Collector`]. Shared by the live runner and `replay`, so a
//! recording replays through exactly the code that reduced it live. What is not about a
//! line (a held call, a freeze, the final-result check) is asked of the collector itself
//! ([`Pipeline::collector`]).
//!
//! A line passes in two steps: [`LineReducer::reduce`] (the cap, then the reducer) and
//! [`Pipeline::collect_line`] (the counts, then the events or the diagnostic into the
//! collector). The live run takes both at once ([`Pipeline::feed`]); a replay takes the
//! reducer out ([`Pipeline::detach_reducer`]) to run the first step on a thread of its
//! own, and puts it back before the side files and the end.

use super::collect::Collector;
use super::finish::TurnEnd;
use super::framer::DEFAULT_MAX_LINE_BYTES;
use crate::limits::Caps;
use crate::results::{ReducerError, StampedEvent, StopReason, TurnRecord};
use crate::runtime::harness::Reducer;
use crate::runtime::{ComponentError, LoadedComponent};
use harness_kit::ReducerConfig;

/// The reducer's side of a turn: the per-line cap, and the reducer instance (none once
/// it failed: the rest of the stream is not reduced).
pub(crate) struct LineReducer {
    reducer: Option<Reducer>,
    max_line_bytes: usize,
}

/// Bytes of a too-large line kept for its `line_too_large` diagnostic.
const TOO_LARGE_HEAD_BYTES: usize = 256;

/// One stdout line as the reducer's side left it, for [`Pipeline::collect_line`].
pub(crate) struct ReducedLine {
    /// Input line number (1-based).
    pub line_no: u64,
    /// µs since the turn started.
    pub stamp_us: u64,
    /// The line's length in bytes, newline removed.
    pub len: usize,
    /// What the reducer's side made of it.
    pub outcome: LineOutcome,
}

/// What became of one line on the reducer's side.
pub(crate) enum LineOutcome {
    /// Over the per-line cap, not given to the reducer: the line's first
    /// [`TOO_LARGE_HEAD_BYTES`] bytes, which its diagnostic quotes.
    TooLarge { head: Vec<u8> },
    /// Not reduced: the reducer failed on an earlier line (or call).
    NoReducer,
    /// The reducer's answer: its events, or why it failed (it is then dropped).
    Reduced(Result<Vec<harness_kit::Event>, ComponentError>),
}

impl LineReducer {
    /// Step one of a line (newline removed), input line `line_no`, received at
    /// `stamp_us`: the cap, then the reducer. A failing reducer is dropped here, so the
    /// lines after it are [`LineOutcome::NoReducer`].
    pub(crate) fn reduce(&mut self, line_no: u64, stamp_us: u64, bytes: &[u8]) -> ReducedLine {
        let outcome = if bytes.len() > self.max_line_bytes {
            LineOutcome::TooLarge {
                head: bytes[..bytes.len().min(TOO_LARGE_HEAD_BYTES)].to_vec(),
            }
        } else if let Some(reducer) = self.reducer.as_mut() {
            let result = reducer.feed(bytes, stamp_us);
            if result.is_err() {
                self.reducer = None;
            }
            LineOutcome::Reduced(result)
        } else {
            LineOutcome::NoReducer
        };
        ReducedLine {
            line_no,
            stamp_us,
            len: bytes.len(),
            outcome,
        }
    }
}

/// One turn's reduce→collect state.
pub(crate) struct Pipeline {
    harness: String,
    component: String,
    reducer: LineReducer,
    /// The turn's collector: caps, freezes and held calls go to it directly.
    pub collector: Collector,
    reducer_error: Option<ReducerError>,
    lines: u64,
    bytes: u64,
}

impl Pipeline {
    /// Arms the run's live watchers: the early-stop plan and the budgets. A plan that
    /// cannot arm (it did at load) leaves the run unwatched, with an `early_stop_disarmed`
    /// diagnostic: early stop fails open. Live and replay arm the same way, so a replay
    /// reaches the same stop at the same event.
    pub(crate) fn watch(
        &mut self,
        early_stop: Option<&super::early_stop::LivePlan>,
        budgets: crate::limits::budget::Budgets,
    ) {
        let early_stop = early_stop.and_then(|plan| match super::early_stop::arm(plan) {
            Ok(watcher) => Some(watcher),
            Err(message) => {
                self.collector.host_diagnostic(
                    0,
                    0,
                    "early_stop_disarmed",
                    format!("the early-stop watcher could not arm: {message}"),
                );
                None
            }
        });
        self.collector.watch(early_stop, budgets);
    }

    /// A pipeline with a fresh reducer instance of `loaded`. Errors: the component could
    /// not be instantiated or its constructor trapped.
    pub(crate) fn new(
        harness: &str,
        loaded: &LoadedComponent,
        caps: Caps,
    ) -> Result<Pipeline, ComponentError> {
        let reducer = Reducer::new(loaded, ReducerConfig::default())?;
        let mut collector = Collector::new(caps);
        if crate::components::EVENTS_AFTER_EXIT.contains(&harness) {
            collector.events_after_exit();
        }
        Ok(Pipeline {
            harness: harness.to_string(),
            component: loaded.name.to_string(),
            reducer: LineReducer {
                reducer: Some(reducer),
                max_line_bytes: DEFAULT_MAX_LINE_BYTES,
            },
            collector,
            reducer_error: None,
            lines: 0,
            bytes: 0,
        })
    }

    /// Sets the per-line cap (bytes).
    pub(crate) fn with_max_line_bytes(mut self, max: usize) -> Pipeline {
        self.reducer.max_line_bytes = max;
        self
    }

    /// Takes the reducer's side out, to reduce lines elsewhere (a replay's reading
    /// thread) while [`Pipeline::collect_line`] collects them here. Until
    /// [`Pipeline::attach_reducer`] puts it back, the pipeline has no reducer: the side
    /// files and the end are not reduced.
    pub(crate) fn detach_reducer(&mut self) -> LineReducer {
        let max_line_bytes = self.reducer.max_line_bytes;
        std::mem::replace(
            &mut self.reducer,
            LineReducer {
                reducer: None,
                max_line_bytes,
            },
        )
    }

    /// Puts back the reducer's side [`Pipeline::detach_reducer`] took out (without its
    /// reducer if that failed meanwhile).
    pub(crate) fn attach_reducer(&mut self, reducer: LineReducer) {
        self.reducer = reducer;
    }

    /// One complete stdout line (newline removed), input line `line_no` (1-based),
    /// received at `stamp_us`: reduced, then collected. Returns the cap that fires on it,
    /// if one does.
    pub(crate) fn feed(&mut self, line_no: u64, stamp_us: u64, bytes: &[u8]) -> Option<StopReason> {
        let line = self.reducer.reduce(line_no, stamp_us, bytes);
        self.collect_line(line)
    }

    /// Step two of a line [`LineReducer::reduce`] reduced: it counts, then its events go
    /// to the collector (or its `line_too_large` / `reducer_failed` diagnostic). Returns
    /// the cap that fires on it, if one does.
    pub(crate) fn collect_line(&mut self, line: ReducedLine) -> Option<StopReason> {
        let ReducedLine {
            line_no,
            stamp_us,
            len,
            outcome,
        } = line;
        self.lines += 1;
        self.bytes += len as u64 + 1;
        match outcome {
            LineOutcome::TooLarge { head } => {
                let max = self.reducer.max_line_bytes;
                let head = String::from_utf8_lossy(&head);
                self.collector.host_diagnostic(
                    line_no,
                    stamp_us,
                    "line_too_large",
                    format!(
                        "line of {len} bytes is over the {max}-byte cap and was not reduced{}; it starts: {head}",
                        if len == max.saturating_add(1) {
                            " (a line without a newline is cut at the cap + 1 byte; what follows \
                             is read as further lines)"
                        } else {
                            ""
                        }
                    ),
                );
                None
            }
            LineOutcome::NoReducer => None,
            LineOutcome::Reduced(result) => self.absorb(line_no, stamp_us, result, None),
        }
    }

    /// The side files the launch plan named, read after the CLI exited (`path` as the plan
    /// gave it, `None` when the CLI did not write it), handed to the reducer before
    /// [`Pipeline::finish`]; their events are stamped `stamp_us` (the turn's end).
    pub(crate) fn side_files(&mut self, files: &[(String, Option<Vec<u8>>)], stamp_us: u64) {
        for (path, content) in files {
            let Some(reducer) = self.reducer.reducer.as_mut() else {
                return;
            };
            let result = reducer.side_file(path, content.as_deref());
            let place = format!("on the side file `{path}`, after the CLI exited");
            self.absorb(0, stamp_us, result, Some(&place));
        }
    }

    /// End of stream: `truncated` = bytes after the last newline with their line number
    /// and stamp. Returns the turn record and the trajectory (every event, in order),
    /// which the graders judge.
    pub(crate) fn finish(
        mut self,
        truncated: Option<(u64, u64, &[u8])>,
        mut end: TurnEnd,
    ) -> (TurnRecord, Vec<StampedEvent>) {
        if let Some((line_no, stamp_us, bytes)) = truncated {
            self.bytes += bytes.len() as u64;
            if let Some(reducer) = self.reducer.reducer.as_mut() {
                let result = reducer.finish(Some(bytes));
                self.absorb(line_no, stamp_us, result, None);
            }
        } else if let Some(reducer) = self.reducer.reducer.as_mut() {
            let result = reducer.finish(None);
            self.absorb(
                0,
                end.end_us,
                result,
                Some("in `finish`, after the last line of stdout"),
            );
        }
        end.reducer_error = self.reducer_error.take();
        end.stdout_lines = self.lines;
        end.stdout_bytes = self.bytes;
        let (mut record, trajectory) = self.collector.finish(end);
        record.harness = self.harness;
        record.component = self.component;
        (record, trajectory)
    }

    /// Collects one reducer call's events, stamped `line_no` (0: no line) and `stamp_us`,
    /// or records its failure. `outside`: where a call that reduced no stdout line was
    /// (`None` for a line): a failure there has no line (`ReducerError::line` is `None`)
    /// and its message ends with this place.
    fn absorb(
        &mut self,
        line_no: u64,
        stamp_us: u64,
        result: Result<Vec<harness_kit::Event>, ComponentError>,
        outside: Option<&str>,
    ) -> Option<StopReason> {
        match result {
            Ok(events) => {
                let mut fired = None;
                for event in events {
                    let stop = self.collector.push(StampedEvent {
                        line: line_no,
                        stamp_us,
                        event,
                    });
                    fired = fired.or(stop);
                }
                fired
            }
            Err(err) => {
                // The instance is unusable: keep what it produced, say why, stop reducing.
                let message = match outside {
                    None => err.to_string(),
                    Some(place) => format!("{err} ({place})"),
                };
                self.collector.host_diagnostic(
                    line_no,
                    stamp_us,
                    "reducer_failed",
                    message.clone(),
                );
                self.reducer_error = Some(ReducerError {
                    kind: err.kind().to_string(),
                    message,
                    line: outside.is_none().then_some(line_no),
                });
                self.reducer.reducer = None;
                None
            }
        }
    }
}
