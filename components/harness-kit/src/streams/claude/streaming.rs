//! Partial-message streams and the retries they show: `stream_event` lines
//! (`message_start` starts a model call, `message_delta` updates its output tokens,
//! `message_stop` confirms it), and an unconfirmed attempt that a retry or another message
//! superseded (B39).

use super::wire::Line;
use super::{ClaudeReducer, message_event, usage_of};
use crate::Event;

impl ClaudeReducer {
    /// Forgets the unconfirmed attempt streaming on `parent`'s thread, and returns its id
    /// (`None` when none was streaming or it was confirmed).
    pub(super) fn abandon_streaming(&mut self, parent: &Option<String>) -> Option<String> {
        match self.streaming.get(parent) {
            Some((id, false)) => {
                let id = id.clone();
                self.streaming.remove(parent);
                // Nothing of it is kept: a retry may come back with the same id.
                self.messages.remove(&id);
                Some(id)
            }
            _ => None,
        }
    }

    pub(super) fn stream_event(
        &mut self,
        parsed: &Line,
        parent: Option<String>,
        out: &mut Vec<Event>,
    ) {
        let Some(event) = &parsed.event else {
            return;
        };
        match event.kind.as_deref() {
            Some("message_start") => {
                let Some(id) = event.message.as_ref().and_then(|m| m.id.as_deref()) else {
                    return;
                };
                // A new attempt while the last one never finished: that one was abandoned
                // (a retry the CLI announced removed it already).
                if matches!(self.streaming.get(&parent), Some((prev, false)) if prev != id) {
                    let abandoned = self.abandon_streaming(&parent);
                    out.push(inferred_retry(abandoned, &parent));
                }
                let confirmed = self.messages.contains_key(id);
                self.open_message(id, &parent, out);
                self.streaming.insert(parent, (id.to_string(), confirmed));
            }
            Some("message_stop") => {
                if let Some((_, confirmed)) = self.streaming.get_mut(&parent) {
                    *confirmed = true;
                }
            }
            Some("message_delta") => {
                let Some((id, _)) = self.streaming.get(&parent) else {
                    return;
                };
                let (Some(msg), Some(delta_usage)) = (self.messages.get_mut(id), event.usage)
                else {
                    return;
                };
                let delta_usage = usage_of(self.dialect, delta_usage);
                let usage = msg.usage.get_or_insert(delta_usage);
                usage.output_tokens = usage.output_tokens.max(delta_usage.output_tokens);
                out.push(message_event(id, msg));
            }
            _ => {}
        }
    }
}

/// A retry the stream shows only by a new message superseding an unfinished one.
pub(super) fn inferred_retry(abandoned: Option<String>, parent: &Option<String>) -> Event {
    Event::ModelCallRetried {
        call_started: true,
        abandoned_message_id: abandoned,
        parent_call_id: parent.clone(),
        attempt: None,
        delay_ms: None,
        status: None,
        error: None,
        announced: false,
    }
}
