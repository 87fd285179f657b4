//! A call as it passes through the gateway: the guard that files its state in the
//! gateway's list however the call ends, and the response body watched on its way to the
//! CLI (first byte, usage, end).

use super::Shared;
use super::call::{BODY_KEEP_BYTES, CallState};
use super::scan::UsageScan;
use coder_eval_scripted_model::Api;
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::watch;

/// A call's state, added to the gateway's list when dropped, whatever ended the call (the
/// answer sent, the stream finished or cut, the CLI gone, the gateway closed).
pub(super) struct Guard {
    pub(super) shared: Arc<Shared>,
    pub(super) state: CallState,
}

impl Drop for Guard {
    fn drop(&mut self) {
        let mut state = std::mem::replace(&mut self.state, CallState::new(0, "", ""));
        if let Some(turn) = state.open_turn.take() {
            self.shared.close_turn(turn);
        }
        if state.status.is_none() && state.error.is_none() && !state.held {
            state.error =
                Some("the request ended before an answer was sent (the CLI went away)".into());
        }
        self.shared
            .calls
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(state);
    }
}

/// A response body on its way to the CLI, watched as it passes.
pub(super) struct Passing {
    /// The upstream's answer, read chunk by chunk; dropped when the call ends (so a cut
    /// answer is read no further: its connection is closed).
    pub(super) upstream: Option<reqwest::Response>,
    /// The upstream's announced body length, bytes (`content-length`), when it gave one.
    pub(super) length: Option<u64>,
    pub(super) scan: UsageScan,
    /// The body kept for the record (`--gateway-bodies`), at most [`BODY_KEEP_BYTES`].
    pub(super) kept: Option<Vec<u8>>,
    pub(super) guard: Guard,
    pub(super) closing: watch::Receiver<bool>,
    pub(super) done: bool,
}

impl Passing {
    pub(super) fn chunk(&mut self, bytes: &[u8]) {
        let call = &mut self.guard.state;
        if call.first_byte.is_none() {
            call.first_byte = Some(Instant::now());
        }
        call.response_bytes += bytes.len() as u64;
        self.scan.push(bytes);
        if let Some(kept) = self.kept.as_mut() {
            let room = BODY_KEEP_BYTES.saturating_sub(kept.len());
            kept.extend_from_slice(&bytes[..bytes.len().min(room)]);
        }
        // A body of announced length ends with its last byte: the server reads no further.
        if self
            .length
            .is_some_and(|n| self.guard.state.response_bytes >= n)
        {
            self.end(None);
        }
    }

    pub(super) fn end(&mut self, error: Option<String>) {
        self.done = true;
        self.upstream = None;
        self.scan.finish();
        let call = &mut self.guard.state;
        call.ended = Some(Instant::now());
        call.usage = self.scan.usage;
        call.response_body = self.kept.take();
        // Every model call's usage counts toward the budgets (a cut answer's too: it was
        // billed; and a failed answer's, whatever it reported, as the API may bill it:
        // the count errs high), as `turn::budget_breach` counts it from the records.
        if call.api.is_some() && call.kind != super::call::CallKind::Other {
            self.guard
                .shared
                .count_usage(call.api, call.model.as_deref(), &call.usage);
        }
        call.failed = self.scan.failed.is_some();
        // Answered: a 2xx answer that ended whole, or whose end the API marked before it
        // was cut (a CLI that closes its connection once it has the answer's end still
        // had the answer: see *Turns* in the module doc); never one that failed
        // mid-stream (the CLI retries it, and the retry keeps its turn).
        let answered = (error.is_none() || self.scan.complete)
            && !call.failed
            && call.kind == super::call::CallKind::Main
            && call.status.is_some_and(|s| (200..300).contains(&s));
        if answered {
            self.guard
                .shared
                .answered_main
                .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
        if let Some(turn) = call.open_turn.take() {
            self.guard.shared.close_turn(turn);
        }
        if error.is_some() {
            call.error = error;
        } else if call.error.is_none() {
            call.error = self.scan.failed.clone().or(self.scan.unreadable.clone());
        }
        if let (Some(id), Some(Api::Responses), Some(turn)) =
            (self.scan.response_id.take(), call.api, call.turn)
        {
            self.guard
                .shared
                .responses_turns
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(id, turn + 1);
        }
    }
}

impl Passing {
    /// The next chunk of the answer: `Ok(None)` at its end, `Err` (the message for the
    /// record) when the upstream failed, the gateway closed, or the host stopped the run
    /// (then the call is marked [`super::call::CallState::stopped`]). Every `Err` ends the
    /// call: the upstream is read no further.
    pub(super) async fn next(&mut self) -> Result<Option<axum::body::Bytes>, String> {
        let Some(upstream) = self.upstream.as_mut() else {
            return Ok(None);
        };
        let stopper = self.guard.shared.stopper.clone();
        let next = tokio::select! {
            chunk = upstream.chunk() => chunk.map_err(|e| {
                format!("the upstream stream failed: {}", error_chain(&e.without_url()))
            }),
            _ = self.closing.wait_for(|c| *c) => {
                Err("cut: the gateway closed while the answer streamed".to_string())
            }
            () = stopper.stopped(), if self.guard.state.api.is_some() => {
                self.guard.state.stopped = true;
                self.guard.state.cut = true;
                Err(format!(
                    "cut: the host stopped the run while the answer streamed ({} bytes \
                     forwarded, the rest not read)",
                    self.guard.state.response_bytes
                ))
            }
        };
        match next {
            Ok(Some(bytes)) => {
                self.chunk(&bytes);
                Ok(Some(bytes))
            }
            Ok(None) => {
                self.end(None);
                Ok(None)
            }
            Err(message) => {
                self.end(Some(message.clone()));
                Err(message)
            }
        }
    }
}

impl Drop for Passing {
    /// The CLI went away (or the server stopped) before the answer ended.
    fn drop(&mut self) {
        if !self.done {
            self.end(Some(
                "the CLI closed the connection before the answer ended".into(),
            ));
        }
    }
}

/// An error and its causes, `: `-separated (reqwest's own message says little).
pub(super) fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        let text = cause.to_string();
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        source = cause.source();
    }
    out
}
