//! The run's tool-call tally: how many tool calls the server has handed out over its whole
//! life, across every thread of the run (the main thread and each sub-agent, whose first
//! request starts again at turn index 0) and every request.
//!
//! Which reply a request gets stays stateless (its turn index); only the count, and the
//! ids of the calls handed out, are kept. A request is known by its history (the
//! conversation it carries, [`history_key`]). A request is a **retry** only when it
//! re-sends the history of an earlier request whose answer was **not delivered
//! completely** (the connection dropped, the CLI gave up waiting): it gets the same calls
//! with the same ids and counts nothing. Any other request counts its calls, and a call
//! whose id was handed out before gets one of its own (`<id>_<n>`), so no two calls the
//! run handed out share an id: a sub-agent's thread (another history at the same turn
//! index), and also an identical twin, the same history again while the first is still
//! being answered or after it was answered completely (two Claude Code sub-agents
//! started with the very same prompt send the same first request: each is a thread of
//! its own, and each thread's calls count).
//!
//! An answer is delivered completely when its whole body went out ([`Claim::complete`]);
//! a [`Claim`] dropped before that marks it not delivered.

use std::collections::{HashMap, HashSet};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::Value;

use crate::common::Call;
use crate::record::Api;

/// Keys left out of a request's history: prompt-cache markers a CLI may move between
/// requests without changing the conversation.
const VOLATILE_KEYS: [&str; 1] = ["cache_control"];

/// An answer being sent.
const IN_FLIGHT: u8 = 0;
/// An answer whose whole body went out.
const DELIVERED: u8 = 1;
/// An answer that did not go out whole (its connection dropped).
const NOT_DELIVERED: u8 = 2;

/// The tally of one server (see the module doc).
#[derive(Default)]
pub(crate) struct Tally {
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    /// Tool calls handed out so far, each call of a parallel reply counted.
    handed_out: u64,
    /// History key → each answer that handed calls out for it: the ids, and whether the
    /// answer was delivered.
    answered: HashMap<u64, Vec<Answered>>,
    /// Answers that handed calls out so far (suffixes a reused id).
    answers: usize,
    /// Every id handed out.
    ids: HashSet<String>,
}

struct Answered {
    ids: Vec<String>,
    state: Arc<AtomicU8>,
}

/// The delivery of one answer that handed tool calls out: [`Claim::complete`] once its
/// whole body went out; dropped before that, the answer counts as not delivered, and the
/// same history re-sent is a retry.
#[derive(Debug)]
pub(crate) struct Claim {
    state: Arc<AtomicU8>,
    done: bool,
}

impl Claim {
    /// The answer went out whole.
    pub fn complete(mut self) {
        self.state.store(DELIVERED, Ordering::SeqCst);
        self.done = true;
    }
}

impl Drop for Claim {
    fn drop(&mut self) {
        if !self.done {
            self.state.store(NOT_DELIVERED, Ordering::SeqCst);
        }
    }
}

impl Tally {
    /// Hands out `calls` (the reply for a request whose history is `key`) unless that would
    /// take the calls handed out past `cap`: then `Err(handed out so far)`, and nothing is
    /// counted. A retry (an earlier answer for `key` was not delivered whole) gets that
    /// answer's ids back and counts nothing (never held); anything else counts its calls
    /// and gets ids no earlier call had. `Ok(None)` for a reply without calls (nothing to
    /// track); else the [`Claim`] to complete once the answer went out.
    pub fn claim(
        &self,
        key: u64,
        calls: &mut [Call],
        cap: Option<u32>,
    ) -> Result<Option<Claim>, u64> {
        if calls.is_empty() {
            return Ok(None);
        }
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let retried = inner.answered.get(&key).and_then(|earlier| {
            earlier
                .iter()
                .find(|a| a.state.load(Ordering::SeqCst) == NOT_DELIVERED)
        });
        if let Some(earlier) = retried {
            for (call, id) in calls.iter_mut().zip(&earlier.ids) {
                call.id.clone_from(id);
            }
            earlier.state.store(IN_FLIGHT, Ordering::SeqCst);
            return Ok(Some(Claim {
                state: earlier.state.clone(),
                done: false,
            }));
        }
        let here = calls.len() as u64;
        if cap.is_some_and(|max| inner.handed_out + here > u64::from(max)) {
            return Err(inner.handed_out);
        }
        let nth = inner.answers;
        for call in calls.iter_mut() {
            if inner.ids.contains(&call.id) {
                let mut n = nth;
                while inner.ids.contains(&format!("{}_{n}", call.id)) {
                    n += 1;
                }
                call.id = format!("{}_{n}", call.id);
            }
        }
        let ids: Vec<String> = calls.iter().map(|c| c.id.clone()).collect();
        inner.ids.extend(ids.iter().cloned());
        let state = Arc::new(AtomicU8::new(IN_FLIGHT));
        inner.answered.entry(key).or_default().push(Answered {
            ids,
            state: state.clone(),
        });
        inner.answers += 1;
        inner.handed_out += here;
        Ok(Some(Claim { state, done: false }))
    }

    /// Tool calls handed out so far.
    pub fn handed_out(&self) -> u64 {
        self.inner
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .handed_out
    }
}

/// A request's history as a hash: the conversation it carries (Anthropic and Chat
/// `messages`; Responses `input` and `previous_response_id`; Gemini `contents`), prompt-
/// cache markers left out. Equal for a retry of a request, different for another thread.
pub(crate) fn history_key(api: Api, req: &Value) -> u64 {
    let fields: &[&str] = match api {
        Api::Anthropic | Api::Chat => &["messages"],
        Api::Responses => &["previous_response_id", "input"],
        Api::Gemini => &["contents"],
    };
    let mut h = DefaultHasher::new();
    (api as u8).hash(&mut h);
    for field in fields {
        field.hash(&mut h);
        hash_value(req.get(field).unwrap_or(&Value::Null), &mut h);
    }
    h.finish()
}

fn hash_value(v: &Value, h: &mut DefaultHasher) {
    match v {
        Value::Null => 0u8.hash(h),
        Value::Bool(b) => (1u8, b).hash(h),
        Value::Number(n) => (2u8, n.to_string()).hash(h),
        Value::String(s) => (3u8, s).hash(h),
        Value::Array(items) => {
            (4u8, items.len()).hash(h);
            for item in items {
                hash_value(item, h);
            }
        }
        Value::Object(map) => {
            5u8.hash(h);
            for (k, item) in map {
                if VOLATILE_KEYS.contains(&k.as_str()) {
                    continue;
                }
                k.hash(h);
                hash_value(item, h);
            }
            6u8.hash(h);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn calls(ids: &[&str]) -> Vec<Call> {
        ids.iter()
            .map(|id| Call {
                id: id.to_string(),
                name: "Bash".into(),
                custom_input: None,
                args: json!({}),
            })
            .collect()
    }

    #[test]
    fn only_a_re_send_of_an_answer_not_delivered_is_a_retry() {
        let t = Tally::default();
        let main0 = json!({"messages": [{"role": "user", "content": "main"}]});
        let sub0 = json!({"messages": [{"role": "user", "content": "sub"}]});
        let (k_main, k_sub) = (
            history_key(Api::Anthropic, &main0),
            history_key(Api::Anthropic, &sub0),
        );
        // The first answer's connection dropped: its re-send is a retry, the same id,
        // not counted.
        let mut a = calls(&["toolu_mock_0_0"]);
        drop(t.claim(k_main, &mut a, Some(3)).unwrap());
        let mut retry = calls(&["toolu_mock_0_0"]);
        t.claim(k_main, &mut retry, Some(3))
            .unwrap()
            .unwrap()
            .complete();
        assert_eq!(
            (t.handed_out(), retry[0].id.as_str()),
            (1, "toolu_mock_0_0")
        );
        // A sub-agent's first request: counted, and its id is its own.
        let mut b = calls(&["toolu_mock_0_0"]);
        let b_claim = t.claim(k_sub, &mut b, Some(3)).unwrap().unwrap();
        assert_eq!(t.handed_out(), 2);
        assert_ne!(b[0].id, "toolu_mock_0_0");
        // Its identical twin, while the first is still being answered: a thread of its
        // own, counted, with an id no earlier call had.
        let mut twin = calls(&["toolu_mock_0_0"]);
        t.claim(k_sub, &mut twin, Some(3))
            .unwrap()
            .unwrap()
            .complete();
        assert_eq!(t.handed_out(), 3);
        assert!(
            twin[0].id != b[0].id && twin[0].id != "toolu_mock_0_0",
            "{twin:?}"
        );
        b_claim.complete();
        // A third twin, after both were delivered: would hand out call 4, held.
        let mut third = calls(&["toolu_mock_0_0"]);
        assert_eq!(t.claim(k_sub, &mut third, Some(3)).unwrap_err(), 3);
        assert_eq!(t.handed_out(), 3);
        // A reply without calls is never tracked.
        assert!(t.claim(k_sub, &mut [], Some(3)).unwrap().is_none());
    }

    #[test]
    fn cache_markers_do_not_change_the_history_but_content_does() {
        let a = json!({"messages": [{"role": "user", "content": [{"type": "text", "text": "x"}]}]});
        let b = json!({"messages": [{"role": "user", "content": [{"type": "text", "text": "x",
            "cache_control": {"type": "ephemeral"}}]}], "max_tokens": 5});
        let c = json!({"messages": [{"role": "user", "content": [{"type": "text", "text": "y"}]}]});
        let key = |v| history_key(Api::Anthropic, v);
        assert_eq!(key(&a), key(&b));
        assert_ne!(key(&a), key(&c));
        assert_ne!(key(&a), history_key(Api::Chat, &a));
    }
}
