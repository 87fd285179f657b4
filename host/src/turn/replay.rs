//! `replay`: a recording (or a plain stdout capture) through a harness's reducer to a turn
//! record. Deterministic: the reducer is a pure function of the lines and their stamps,
//! and the collector of the events, so the same input gives byte-identical output.
//!
//! The file is read as a stream, one line at a time, and each line is reduced as it is
//! read: memory follows what the turn keeps (its trajectory and record) and the longest
//! lines, not the file.
//!
//! Three threads share the work, each stage handing the next batches of [`BATCH`] items
//! (or [`BATCH_BYTES`] of lines) over a channel of [`BATCHES_IN_FLIGHT`]: a reading thread
//! reads the recording (for a recording, unwrapping each stamped line), a reducing thread
//! runs each line through the reducer ([`LineReducer::reduce`]), and the calling thread
//! collects what comes, in the recording's order, so the three overlap. The reducing
//! thread, the slowest, hands the lines' buffers back to the reading thread to be freed
//! there. Nothing the collector decides reaches back to the reducer (a stop freezes the
//! collector, not the reading), so the record is the same as one thread's. After the last
//! line the reducer comes back to the calling thread for the side files and the end. The
//! reducing thread is outside any tokio runtime, so `runtime::off_runtime` runs the
//! reducer's calls there as they are.

use super::finish::TurnEnd;
use super::framer::DEFAULT_MAX_LINE_BYTES;
use super::pipeline::{LineReducer, Pipeline, ReducedLine};
use super::recording::{ExitStatus, Item, Reader, RecordedStop, RecordingError, StampedLine};
use crate::components::{ComponentSource, ResolveError};
use crate::limits::Caps;
use crate::limits::budget::Budgets;
use crate::results::{StampedEvent, TurnRecord};
use crate::runtime::ComponentError;
use crate::runtime::harness::Launcher;
use crate::turn::collect::{Launch, TotalsBasis};
use std::path::Path;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};

/// Items a stage hands the next at once at most: the channel's cost (a lock, at times
/// waking the other thread) is paid once a batch, not once a line.
const BATCH: usize = 256;
/// Bytes of lines (and side files) a batch holds at most: a batch closes at [`BATCH`]
/// items or when its lines reach this size, whichever comes first (a single longer line
/// is a batch of its own). So long lines do not multiply the memory in flight: 256 lines
/// of 1 MiB would hold 256 MiB per batch.
const BATCH_BYTES: usize = 256 << 10;
/// Batches on their way between two stages at most: how far reading may run ahead of
/// reducing, and reducing of collecting, and how many batches of spent line buffers may
/// wait to go back to the reading thread (memory: the items of this many batches, plus one
/// being filled and one being taken, per channel; each batch at most [`BATCH_BYTES`] of
/// lines, or one line).
const BATCHES_IN_FLIGHT: usize = 4;

/// What the reducing thread forwards: a stdout line as reduced, or any other item of the
/// recording (never [`Item::Line`], nor [`Item::Stderr`], which a replay ignores).
enum Forwarded {
    Line(ReducedLine),
    Item(Item),
}

/// The reading thread: every item of `reader` in order but stderr, sent in batches to
/// `to`; the lines' buffers the reducing thread is done with come back on `spent` and are
/// freed here, off the reducing thread (the replay's slowest stage). Returns at the end of
/// the recording, or early when the next stage has gone (it panicked). Errors: reading the
/// recording failed (the items of the batch being filled are not sent: the replay fails
/// as a whole).
fn read_items<R: std::io::BufRead>(
    reader: &mut Reader<R>,
    to: SyncSender<Vec<Item>>,
    spent: Receiver<Vec<Vec<u8>>>,
) -> std::io::Result<()> {
    let mut batch = Vec::with_capacity(BATCH);
    let mut bytes = 0;
    while let Some(item) = reader.next_item()? {
        bytes += match &item {
            Item::Stderr(_) => continue,
            Item::Line(line) => line.bytes.len(),
            Item::SideFile(_, content) => content.as_ref().map_or(0, Vec::len),
            _ => 0,
        };
        batch.push(item);
        if batch.len() == BATCH || bytes >= BATCH_BYTES {
            if to
                .send(std::mem::replace(&mut batch, Vec::with_capacity(BATCH)))
                .is_err()
            {
                return Ok(());
            }
            bytes = 0;
            spent.try_iter().for_each(drop);
        }
    }
    // A closed channel here means a later stage panicked: nothing to add.
    let _ = to.send(batch);
    Ok(())
}

/// The reducing thread: each batch from `from` in order, its lines reduced by `reducing`,
/// sent on to `to`, and the lines' buffers back on `spent` (freed here when the reading
/// thread has ended or is behind). Ends when the reading thread is done (or failed), or
/// when the collecting side has gone.
fn reduce_items(
    from: Receiver<Vec<Item>>,
    reducing: &mut LineReducer,
    to: SyncSender<Vec<Forwarded>>,
    spent: SyncSender<Vec<Vec<u8>>>,
) {
    for batch in from {
        let mut lines = Vec::with_capacity(batch.len());
        let reduced = batch
            .into_iter()
            .map(|item| match item {
                Item::Line(line) => {
                    let reduced = reducing.reduce(line.source_line, line.stamp_us, &line.bytes);
                    lines.push(line.bytes);
                    Forwarded::Line(reduced)
                }
                other => Forwarded::Item(other),
            })
            .collect();
        if to.send(reduced).is_err() {
            return;
        }
        // Never waits: a full or closed channel leaves the buffers to be freed here.
        let _ = spent.try_send(lines);
    }
}

/// What to replay with.
#[derive(Debug, Clone)]
pub struct ReplayOptions {
    /// The harness whose reducer reads the stream (e.g. `claude-code`).
    pub harness: String,
    /// Replacement components.
    pub components: ComponentSource,
    /// Caps to judge the run by; `None` = the recording header's (none for a capture).
    pub caps: Option<Caps>,
    /// Per-line cap in bytes.
    pub max_line_bytes: usize,
    /// The side files the run's launch plan named, as (path as the plan gave it, content;
    /// `None` = the CLI wrote none), handed to the reducer after the last line (e.g.
    /// Copilot's usage file, kept beside its recording as `<scenario>.usage.json`). Empty
    /// by default: a replay of stdout alone.
    pub side_files: Vec<(String, Option<Vec<u8>>)>,
}

impl ReplayOptions {
    /// Replay with the built-in (or `--components`) reducer of `harness`.
    pub fn new(harness: &str) -> ReplayOptions {
        ReplayOptions {
            harness: harness.to_string(),
            components: ComponentSource::default(),
            caps: None,
            max_line_bytes: DEFAULT_MAX_LINE_BYTES,
            side_files: Vec::new(),
        }
    }
}

/// Why a replay could not produce a record at all. (A reducer failing mid-stream is not
/// one of these: the record says so in `reducer_error`.)
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// The recording could not be read.
    #[error(transparent)]
    Recording(#[from] RecordingError),
    /// The harness's component could not be resolved.
    #[error(transparent)]
    Resolve(#[from] ResolveError),
    /// The reducer could not be instantiated.
    #[error(transparent)]
    Component(#[from] ComponentError),
}

/// Replays `path` (see [`super::recording`] for the formats). No trajectory is kept:
/// memory follows the record and the longest lines (see the module doc).
pub fn replay(path: &Path, options: &ReplayOptions) -> Result<TurnRecord, ReplayError> {
    run(path, options, false).map(|(record, _)| record)
}

/// [`replay`], also returning the trajectory (for re-grading a kept run).
pub fn replay_with_trajectory(
    path: &Path,
    options: &ReplayOptions,
) -> Result<(TurnRecord, Vec<StampedEvent>), ReplayError> {
    run(path, options, true)
}

fn run(
    path: &Path,
    options: &ReplayOptions,
    keep_trajectory: bool,
) -> Result<(TurnRecord, Vec<StampedEvent>), ReplayError> {
    // Framed as the live run framed the CLI's stdout (`Reader::open`: a line without a
    // newline is cut after the default cap + 1 byte), whatever `max_line_bytes` says of
    // what the reducer is given: a capture replays to the lines the live run saw.
    let mut reader = Reader::open(path)?;
    let loaded = options.components.harness(&options.harness)?;
    let caps = options.caps.unwrap_or_else(|| {
        reader.header().map_or(Caps::default(), |h| {
            Caps {
                max_turns: h.max_turns,
                max_tool_calls: h.max_tool_calls,
            }
            .on_stream(h.gateway)
        })
    });
    let mut pipeline =
        Pipeline::new(&options.harness, &loaded, caps)?.with_max_line_bytes(options.max_line_bytes);
    if !keep_trajectory {
        pipeline.collector = pipeline.collector.without_trajectory();
    }
    // The live watchers of the run, re-armed from the header: the same events reach the
    // same early stop or budget stop at the same event.
    if let Some(header) = reader.header() {
        let budgets = header.budgets.map(|b| b.budgets()).unwrap_or_default();
        // With the gateway, its figures hold the token budgets (`gateway::budget_breach`).
        let budgets = match (header.gateway, header.price_table.is_some()) {
            (true, true) => Budgets {
                max_usd: None,
                ..budgets.without_tokens()
            },
            (true, false) => budgets.without_tokens(),
            (false, _) => budgets,
        };
        pipeline.watch(header.early_stop.as_ref(), budgets);
        // How the CLI's running totals read: the harness's scope for the recorded version,
        // and whether the process resumed a session (the header says; an older recording's
        // argv shows it).
        let mut launcher = Launcher::new(&loaded)?;
        let scope = launcher.totals(header.cli_version.as_deref())?;
        let usage_scope = launcher.usage_totals(header.cli_version.as_deref())?;
        let launch = match &header.session {
            Some(session) => session.launch(),
            None => Launch::FromArgv(header.argv.clone()),
        };
        if let Some(earlier) = header.session.and_then(|s| s.earlier_turns) {
            pipeline.collector.resumed_after(earlier);
        }
        pipeline.collector.totals_basis(TotalsBasis {
            scope,
            usage_scope,
            launch,
        });
    }
    let io = |source| RecordingError::Io {
        path: path.to_path_buf(),
        source,
    };
    let gateway = reader.header().is_some_and(|h| h.gateway);
    let mut gateway_calls = Vec::new();
    let mut last_stamp_us = None;
    let mut truncated: Option<StampedLine> = None;
    let mut stop: Option<RecordedStop> = None;
    let mut exit: Option<ExitStatus> = None;
    // A stop freezes the collector where the live run met it: after the held calls
    // recorded at the same place, before the next line.
    let mut freeze_pending = false;
    let mut unknown_stop = false;
    let mut unknown_stop_us: Option<u64> = None;
    // The recording's side files, then any the options add.
    let mut side_files: Vec<(String, Option<Vec<u8>>)> = Vec::new();
    let mut reducing = pipeline.detach_reducer();
    let read = std::thread::scope(|scope| {
        let (to_reduce, read) = sync_channel::<Vec<Item>>(BATCHES_IN_FLIGHT);
        let (to, from) = sync_channel::<Vec<Forwarded>>(BATCHES_IN_FLIGHT);
        let (spent_to, spent) = sync_channel::<Vec<Vec<u8>>>(BATCHES_IN_FLIGHT);
        let (reader, reducing) = (&mut reader, &mut reducing);
        let reading = std::thread::Builder::new()
            .name("coder-eval-replay-read".to_string())
            .spawn_scoped(scope, move || read_items(reader, to_reduce, spent))
            .expect("could not start the replay's reading thread");
        let reducer = std::thread::Builder::new()
            .name("coder-eval-replay-reduce".to_string())
            .spawn_scoped(scope, move || reduce_items(read, reducing, to, spent_to))
            .expect("could not start the replay's reducing thread");
        for forwarded in from.into_iter().flatten() {
            let item = match forwarded {
                Forwarded::Line(line) => {
                    if std::mem::take(&mut freeze_pending) {
                        pipeline.collector.freeze();
                    }
                    last_stamp_us = Some(line.stamp_us);
                    pipeline.collect_line(line);
                    continue;
                }
                Forwarded::Item(item) => item,
            };
            match item {
                Item::Line(_) | Item::Stderr(_) => {
                    unreachable!("the reading thread forwards lines reduced, and no stderr")
                }
                Item::Truncated(line) => truncated = Some(line),
                Item::HeldCall(held) => {
                    pipeline
                        .collector
                        .held_call(held.stamp_us, held.turn, held.reason);
                }
                Item::Stop(recorded) => {
                    freeze_pending |= stop.is_none() && !unknown_stop;
                    stop = Some(recorded);
                }
                Item::Exit(status) => exit = Some(status),
                Item::SideFile(path, content) => side_files.push((path, content)),
                Item::ModelCall(call) => gateway_calls.push(*call),
                Item::Problem(problem) => pipeline.collector.input_diagnostic(
                    problem.file_line,
                    problem.stamp_us.unwrap_or(0),
                    "recording_unreadable",
                    problem.message,
                    problem.raw,
                ),
                Item::UnknownStop {
                    stamp_us,
                    reason,
                    file_line,
                    after_lines: _,
                } => {
                    // The host stopped the turn here for a reason this host cannot name: the
                    // turn is not complete, whatever the stream says after.
                    pipeline.collector.input_diagnostic(
                        file_line,
                        stamp_us.unwrap_or(0),
                        "unknown_stop_reason",
                        format!(
                            "the recording's stop record has a reason this host does not know \
                             (`{reason}`): the turn was stopped there and is not complete"
                        ),
                        reason,
                    );
                    freeze_pending |= stop.is_none() && !unknown_stop;
                    unknown_stop = true;
                    if let Some(at) = stamp_us {
                        unknown_stop_us = Some(unknown_stop_us.map_or(at, |u: u64| u.min(at)));
                    }
                }
            }
        }
        reducer
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        reading
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    });
    read.map_err(io)?;
    pipeline.attach_reducer(reducing);
    if freeze_pending {
        pipeline.collector.freeze();
    }
    // The turn's end: the host's stop (or the exit, if earlier), else the exit stamp,
    // else 1 ms after the last stamp seen.
    let end_us = match (&stop, exit) {
        (None, Some(exit)) if unknown_stop_us.is_some() => {
            unknown_stop_us.unwrap_or(exit.stamp_us).min(exit.stamp_us)
        }
        (None, None) if unknown_stop_us.is_some() => unknown_stop_us.unwrap_or(0),
        (Some(stop), Some(exit)) => stop.stamp_us.min(exit.stamp_us),
        (Some(stop), None) => stop.stamp_us,
        (None, Some(exit)) => exit.stamp_us,
        (None, None) => {
            truncated
                .as_ref()
                .map(|t| t.stamp_us)
                .or(last_stamp_us)
                .unwrap_or(0)
                + 1000
        }
    };
    let end = TurnEnd {
        end_us,
        exit,
        stop: stop.map(|s| s.reason),
        unknown_stop,
        ..Default::default()
    };
    let truncated = truncated
        .as_ref()
        .map(|t| (t.source_line, t.stamp_us, t.bytes.as_slice()));
    side_files.extend(options.side_files.iter().cloned());
    pipeline.side_files(&side_files, end_us);
    let (mut record, trajectory) = pipeline.finish(truncated, end);
    if gateway {
        let budgets = reader
            .header()
            .and_then(|h| h.budgets)
            .map(|b| b.budgets())
            .unwrap_or_default();
        let price_table = reader.header().and_then(|h| h.price_table.clone());
        // Without a table the gateway counted the token budgets only.
        let budgets = match price_table {
            Some(_) => budgets,
            None => budgets.tokens_only(),
        };
        crate::gateway::apply_to_turn_priced(
            &mut record,
            &gateway_calls,
            &budgets,
            price_table.as_deref(),
        );
    }
    Ok((record, trajectory))
}

mod sessions;
pub use sessions::{replay_sessions, session_recordings};
