//! The run's tool-call tally: how many tool calls the server has handed out over its whole
//! life, across every thread of the run (the main thread and each sub-agent, whose first
//! request starts again at turn index 0) and every request.
//!
//! Which reply a request gets stays stateless (its turn index); only the count, and the
//! ids of the calls handed out, are kept. A request is known by its history (the
//! conversation it carries, [`history_key`]): the first request with a history hands its
//! reply's calls out and counts them; a request with the same history again (a CLI's
//! retry, or a re-send after a dropped connection) gets the same calls with the same ids
//! and counts nothing. A different history at the same turn index (a sub-agent's thread)
//! counts again, and its calls get ids of their own (`<id>_<n>`), so no two calls the run
//! handed out share an id. Two sub-agents started at once with the very same prompt send
//! the same history and count once (nothing in their requests tells them apart).

use std::collections::{HashMap, HashSet};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::Mutex;

use serde_json::Value;

use crate::common::Call;
use crate::record::Api;

/// Keys left out of a request's history: prompt-cache markers a CLI may move between
/// requests without changing the conversation.
const VOLATILE_KEYS: [&str; 1] = ["cache_control"];

/// The tally of one server (see the module doc).
#[derive(Default)]
pub(crate) struct Tally {
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    /// Tool calls handed out so far, each call of a parallel reply counted.
    handed_out: u64,
    /// History key → the ids its reply's calls went out with.
    answered: HashMap<u64, Vec<String>>,
    /// Every id handed out.
    ids: HashSet<String>,
}

impl Tally {
    /// Hands out `calls` (the reply for a request whose history is `key`) unless that would
    /// take the calls handed out past `cap`: then `Err(handed out so far)`, and nothing is
    /// counted. A history answered before gets its earlier ids back and counts nothing
    /// (never held); a new one counts its calls and gets ids no earlier call had.
    pub fn claim(&self, key: u64, calls: &mut [Call], cap: Option<u32>) -> Result<(), u64> {
        if calls.is_empty() {
            return Ok(());
        }
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(ids) = inner.answered.get(&key) {
            for (call, id) in calls.iter_mut().zip(ids) {
                call.id.clone_from(id);
            }
            return Ok(());
        }
        let here = calls.len() as u64;
        if cap.is_some_and(|max| inner.handed_out + here > u64::from(max)) {
            return Err(inner.handed_out);
        }
        let nth = inner.answered.len();
        for call in calls.iter_mut() {
            if inner.ids.contains(&call.id) {
                call.id = format!("{}_{nth}", call.id);
            }
        }
        let ids: Vec<String> = calls.iter().map(|c| c.id.clone()).collect();
        inner.ids.extend(ids.iter().cloned());
        inner.answered.insert(key, ids);
        inner.handed_out += here;
        Ok(())
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
    fn a_retry_counts_once_and_another_thread_counts_again_with_new_ids() {
        let t = Tally::default();
        let main0 = json!({"messages": [{"role": "user", "content": "main"}]});
        let sub0 = json!({"messages": [{"role": "user", "content": "sub"}]});
        let (k_main, k_sub) = (
            history_key(Api::Anthropic, &main0),
            history_key(Api::Anthropic, &sub0),
        );
        let mut a = calls(&["toolu_mock_0_0"]);
        t.claim(k_main, &mut a, Some(2)).unwrap();
        // The retry: same history, same id, not counted.
        let mut retry = calls(&["toolu_mock_0_0"]);
        t.claim(k_main, &mut retry, Some(2)).unwrap();
        assert_eq!(
            (t.handed_out(), retry[0].id.as_str()),
            (1, "toolu_mock_0_0")
        );
        // A sub-agent's first request: counted, and its id is its own.
        let mut b = calls(&["toolu_mock_0_0"]);
        t.claim(k_sub, &mut b, Some(2)).unwrap();
        assert_eq!(t.handed_out(), 2);
        assert_ne!(b[0].id, "toolu_mock_0_0");
        // A third history would hand out call 3: held, nothing counted.
        let third = json!({"messages": [{"role": "user", "content": "third"}]});
        let mut c = calls(&["toolu_mock_0_0"]);
        assert_eq!(
            t.claim(history_key(Api::Anthropic, &third), &mut c, Some(2)),
            Err(2)
        );
        assert_eq!(t.handed_out(), 2);
        // An answered history is never held, even at the cap.
        t.claim(k_sub, &mut calls(&["toolu_mock_0_0"]), Some(2))
            .unwrap();
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
