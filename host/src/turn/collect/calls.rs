//! The collector's handlers of session, model-call and assistant-message events: the
//! session the CLI names, main-thread calls counted (and `max_turns` fired), messages
//! kept by id, and the first and last output stamps.

use super::{Collector, ModelCall, Session};
use crate::results::{MessageRecord, ModelCallRecord, StopReason};
use crate::turn::timing::ms;
use harness_kit::Usage;

impl Collector {
    pub(super) fn on_session(
        &mut self,
        session_id: Option<String>,
        cli_version: Option<String>,
        model: Option<String>,
    ) {
        if self.session.is_none() {
            self.session = Some(Session {
                session_id,
                cli_version,
                model,
            });
        }
    }

    pub(super) fn on_model_call(
        &mut self,
        at: u64,
        message_id: Option<String>,
        parent_call_id: Option<String>,
    ) -> Option<StopReason> {
        self.output(at);
        self.last_call_us = Some(at);
        if parent_call_id.is_none() {
            self.retries.call_began(at);
        }
        let mut fired = None;
        let main_index = if parent_call_id.is_none() {
            self.main_calls += 1;
            if self.caps.max_turns.is_some_and(|n| self.main_calls > n) {
                fired = Some(StopReason::MaxTurns);
            }
            Some(self.main_calls)
        } else {
            None
        };
        self.model_calls.push(ModelCall {
            record: ModelCallRecord {
                main_index,
                message_id,
                parent_call_id,
                started_ms: ms(at),
                generation_ms: None,
            },
            start_us: at,
        });
        fired
    }

    pub(super) fn on_message(
        &mut self,
        at: u64,
        message_id: String,
        parent_call_id: Option<String>,
        text: String,
        usage: Option<Usage>,
        cost_usd: Option<f64>,
    ) {
        self.output(at);
        match self.message_index.get(&message_id) {
            // A later copy of a message replaces it, but for when it was first seen.
            Some(&i) => {
                let message = &mut self.messages[i];
                message.parent_call_id = parent_call_id;
                message.text = text;
                message.usage = usage;
                message.cost_usd = cost_usd;
            }
            None => {
                self.message_index
                    .insert(message_id.clone(), self.messages.len());
                self.messages.push(MessageRecord {
                    message_id,
                    parent_call_id,
                    text,
                    usage,
                    cost_usd,
                    first_ms: ms(at),
                });
            }
        }
    }

    pub(super) fn output(&mut self, at: u64) {
        self.first_output_us.get_or_insert(at);
        self.last_output_us = Some(self.last_output_us.map_or(at, |l| l.max(at)));
    }
}
