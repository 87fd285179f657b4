//! Reduce then collect: each stdout line goes through the harness's reducer component and
//! its events into the [`Collector`]. Shared by the live runner and `replay`, so a
//! recording replays through exactly the code that reduced it live. What is not about a
//! line (a held call, a freeze, the final-result check) is asked of the collector itself
//! ([`Pipeline::collector`]).

use super::collect::Collector;
use super::finish::TurnEnd;
use crate::limits::Caps;
use crate::results::{ReducerError, StampedEvent, StopReason, TurnRecord};
use crate::runtime::harness::Reducer;
use crate::runtime::{ComponentError, LoadedComponent};
use harness_kit::ReducerConfig;

/// Lines longer than this (bytes) are not given to the reducer: they become a
/// `line_too_large` diagnostic (the recording still holds them). A line still without a
/// newline after this many bytes + 1 is cut there (`turn::framer`), so memory stays bounded:
/// the piece is such a diagnostic, the rest is read as further lines.
pub(crate) const DEFAULT_MAX_LINE_BYTES: usize = 64 << 20;

/// One turn's reduce→collect state.
pub(crate) struct Pipeline {
    harness: String,
    component: String,
    reducer: Option<Reducer>,
    /// The turn's collector: caps, freezes and held calls go to it directly.
    pub collector: Collector,
    reducer_error: Option<ReducerError>,
    max_line_bytes: usize,
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
            reducer: Some(reducer),
            collector,
            reducer_error: None,
            max_line_bytes: DEFAULT_MAX_LINE_BYTES,
            lines: 0,
            bytes: 0,
        })
    }

    /// Sets the per-line cap (bytes).
    pub(crate) fn with_max_line_bytes(mut self, max: usize) -> Pipeline {
        self.max_line_bytes = max;
        self
    }

    /// One complete stdout line (newline removed), input line `line_no` (1-based),
    /// received at `stamp_us`. Returns the cap that fires on it, if one does.
    pub(crate) fn feed(&mut self, line_no: u64, stamp_us: u64, bytes: &[u8]) -> Option<StopReason> {
        self.lines += 1;
        self.bytes += bytes.len() as u64 + 1;
        if bytes.len() > self.max_line_bytes {
            let head = String::from_utf8_lossy(&bytes[..bytes.len().min(256)]).into_owned();
            self.collector.host_diagnostic(
                line_no,
                stamp_us,
                "line_too_large",
                format!(
                    "line of {} bytes is over the {}-byte cap and was not reduced{}; it starts: {head}",
                    bytes.len(),
                    self.max_line_bytes,
                    if bytes.len() == self.max_line_bytes.saturating_add(1) {
                        " (a line without a newline is cut at the cap + 1 byte; what follows \
                         is read as further lines)"
                    } else {
                        ""
                    }
                ),
            );
            return None;
        }
        let result = self.reducer.as_mut()?.feed(bytes, stamp_us);
        self.absorb(line_no, stamp_us, result)
    }

    /// The side files the launch plan named, read after the CLI exited (`path` as the plan
    /// gave it, `None` when the CLI did not write it), handed to the reducer before
    /// [`Pipeline::finish`]; their events are stamped `stamp_us` (the turn's end).
    pub(crate) fn side_files(&mut self, files: &[(String, Option<Vec<u8>>)], stamp_us: u64) {
        for (path, content) in files {
            let Some(reducer) = self.reducer.as_mut() else {
                return;
            };
            let result = reducer.side_file(path, content.as_deref());
            self.absorb(0, stamp_us, result);
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
            if let Some(reducer) = self.reducer.as_mut() {
                let result = reducer.finish(Some(bytes));
                self.absorb(line_no, stamp_us, result);
            }
        } else if let Some(reducer) = self.reducer.as_mut() {
            let result = reducer.finish(None);
            self.absorb(0, end.end_us, result);
        }
        end.reducer_error = self.reducer_error.take();
        end.stdout_lines = self.lines;
        end.stdout_bytes = self.bytes;
        let (mut record, trajectory) = self.collector.finish(end);
        record.harness = self.harness;
        record.component = self.component;
        (record, trajectory)
    }

    fn absorb(
        &mut self,
        line_no: u64,
        stamp_us: u64,
        result: Result<Vec<harness_kit::Event>, ComponentError>,
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
                let message = err.to_string();
                self.collector.host_diagnostic(
                    line_no,
                    stamp_us,
                    "reducer_failed",
                    message.clone(),
                );
                self.reducer_error = Some(ReducerError {
                    kind: err.kind().to_string(),
                    message,
                    line: line_no,
                });
                self.reducer = None;
                None
            }
        }
    }
}
