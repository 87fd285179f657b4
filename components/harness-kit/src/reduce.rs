//! The opening every reducer's [`feed`](crate::Reducer::feed) shares: decoding the line,
//! the fall-through for a line `type` the reducer does not know, made-up ids, the result of
//! a stream with no output at all, the maps and sets a reducer keeps its ids in, and the
//! rule a tool result is held to ([`ToolIds`]).
//!
//! ```ignore
//! fn feed(&mut self, line: &[u8], _stamp_us: u64) -> Vec<Event> {
//!     let (obj, mut out) = match decode_object(line) {
//!         Ok(read) => read,
//!         Err(events) => return events,
//!     };
//!     match obj.get("type").and_then(Value::as_str).unwrap_or("") {
//!         "message" => self.message(&obj, &mut out),
//!         other => out.push(type_diagnostic(other, line)),
//!     }
//!     out
//! }
//! ```

use crate::lenient::Object;
use crate::{Event, Parsed, ParsedLine, parse_json_line, parse_line};
use serde_json::{Map, Value};

/// A map keyed by ids (message ids, tool call ids), hashed with foldhash rather than the
/// standard library's SipHash, which showed in replay profiles; randomly seeded as SipHash
/// is. Make one with `HashMap::default()`.
pub type HashMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;

/// A set of ids, hashed as [`HashMap`] is. Make one with `HashSet::default()`.
pub type HashSet<T> = std::collections::HashSet<T, foldhash::fast::RandomState>;

/// A decoded line and the events it already produced (the `repaired_line` note when the
/// line needed a repair, else none); `Err` holds all the line produces (nothing for a
/// blank line, a diagnostic for a bad one) and the reducer returns it as it is.
pub type Decoded<T> = Result<(T, Vec<Event>), Vec<Event>>;

/// Decodes one line into a reducer's typed lenient view `T` (see [`parse_line`]; `T` may
/// borrow from `scratch`).
pub fn decode<'a, T: Object<'a>>(line: &'a [u8], scratch: &'a mut String) -> Decoded<T> {
    match parse_line::<T>(line, scratch) {
        Parsed::Line(view) => Ok((view, Vec::new())),
        Parsed::Repaired(view, note) => Ok((view, vec![note])),
        Parsed::Blank => Err(Vec::new()),
        Parsed::Bad(diagnostic) => Err(vec![diagnostic]),
    }
}

/// Decodes one line as a whole JSON object (see [`parse_json_line`]), for reducers that
/// read `serde_json::Value`s.
pub fn decode_object(line: &[u8]) -> Decoded<Map<String, Value>> {
    match parse_json_line(line) {
        ParsedLine::Object(obj) => Ok((obj, Vec::new())),
        ParsedLine::Repaired(obj, note) => Ok((obj, vec![note])),
        ParsedLine::Blank => Err(Vec::new()),
        ParsedLine::Bad(diagnostic) => Err(vec![diagnostic]),
    }
}

/// The diagnostic for a line whose `type` the reducer does not handle: `missing_field`
/// when `kind` is empty (no `type`, or not a string), else `unknown_type`.
pub fn type_diagnostic(kind: &str, line: &[u8]) -> Event {
    if kind.is_empty() {
        Event::diagnostic("missing_field", "line has no `type` field", line)
    } else {
        Event::diagnostic("unknown_type", format!("unknown line type `{kind}`"), line)
    }
}

/// Made-up ids for things the stream gives none (`claude-code-msg-1`, `-2`, ...). A
/// reducer whose ids number its model calls keeps its count of calls here too
/// ([`count`](IdMaker::count)), and names the open call again with
/// [`last_id`](IdMaker::last_id).
#[derive(Debug, Clone)]
pub struct IdMaker {
    prefix: &'static str,
    n: u32,
}

impl IdMaker {
    /// Ids `<prefix>-1`, `<prefix>-2`, ... in order.
    pub const fn new(prefix: &'static str) -> IdMaker {
        IdMaker { prefix, n: 0 }
    }

    /// The next id.
    pub fn next_id(&mut self) -> String {
        self.n += 1;
        self.last_id()
    }

    /// The id [`next_id`](IdMaker::next_id) made last, again (`<prefix>-0` before the
    /// first), for the later events of the same thing.
    pub fn last_id(&self) -> String {
        self.keyed(self.n)
    }

    /// How many ids [`next_id`](IdMaker::next_id) made (0 before the first).
    pub const fn count(&self) -> u32 {
        self.n
    }

    /// `<prefix>-<key>`: the id of a thing the stream numbers itself (Copilot's
    /// `turnId`), in the shape of the made-up ones.
    pub fn keyed(&self, key: impl std::fmt::Display) -> String {
        format!("{}-{key}", self.prefix)
    }
}

/// The tool calls of a stream by id: a start counts once, and a result counts once and
/// only for a call that started. Make one with `ToolIds::default()`.
#[derive(Debug, Default)]
pub struct ToolIds {
    started: HashSet<String>,
    finished: HashSet<String>,
}

/// How a reducer words the tool results that do not count (its stream's own terms).
#[derive(Debug, Clone, Copy)]
pub struct ResultWords {
    /// The `missing_field` message for a result without an id.
    pub missing_id: &'static str,
    /// The `orphan_tool_result` message for a result of a call that never started.
    pub orphan: fn(&str) -> String,
    /// The `duplicate_tool_result` message for a second result; `None` passes it silently.
    pub repeated: Option<fn(&str) -> String>,
}

impl ToolIds {
    /// Notes the start of call `id`: `true` the first time, `false` when it started already.
    pub fn start(&mut self, id: &str) -> bool {
        self.started.insert(id.to_string())
    }

    /// The id of a tool call's start when it is the call's first; else `None`: a start
    /// without an id pushes a `missing_field` diagnostic saying `missing_id` to `out`, and
    /// a repeated start passes silently.
    pub fn begin<'a>(
        &mut self,
        id: Option<&'a str>,
        missing_id: &str,
        line: &[u8],
        out: &mut Vec<Event>,
    ) -> Option<&'a str> {
        let Some(id) = id else {
            out.push(Event::diagnostic("missing_field", missing_id, line));
            return None;
        };
        self.start(id).then_some(id)
    }

    /// The id of a tool result when it ends a call that started and had not ended; else
    /// `None`, with the diagnostic `words` give pushed to `out` (`missing_field` without an
    /// id, `orphan_tool_result` for a call that never started, `duplicate_tool_result` for
    /// a second result when `words.repeated` is set).
    pub fn finish<'a>(
        &mut self,
        id: Option<&'a str>,
        words: &ResultWords,
        line: &[u8],
        out: &mut Vec<Event>,
    ) -> Option<&'a str> {
        let Some(id) = id else {
            out.push(Event::diagnostic("missing_field", words.missing_id, line));
            return None;
        };
        if !self.started.contains(id) {
            out.push(Event::diagnostic(
                "orphan_tool_result",
                (words.orphan)(id),
                line,
            ));
            return None;
        }
        if !self.finished.insert(id.to_string()) {
            if let Some(say) = words.repeated {
                out.push(Event::diagnostic("duplicate_tool_result", say(id), line));
            }
            return None;
        }
        Some(id)
    }
}

/// The failed result of a stream without a single byte of output: `<cli> printed nothing
/// on stdout`, then ` (<hint>)` when there is one. The exit code and stderr, which a
/// reducer cannot see, tell the rest.
pub fn no_output(cli: &str, hint: Option<&str>) -> Event {
    let mut message = format!("{cli} printed nothing on stdout");
    if let Some(hint) = hint {
        message.push_str(&format!(" ({hint})"));
    }
    Event::FinalResult {
        success: false,
        error_kind: Some("no_output".into()),
        error_message: Some(message),
        max_turns_reached: false,
        num_turns: None,
        cost_usd: None,
        duration_ms: None,
        text: None,
        usage: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::diagnostic_kinds;

    #[test]
    fn decode_keeps_the_repair_note_and_returns_what_a_bad_line_gives() {
        let (obj, out) = decode_object(br#"{"type":"a\ud83d"}"#).unwrap();
        assert_eq!(obj["type"], "a\u{fffd}");
        assert_eq!(diagnostic_kinds(&out), ["repaired_line"]);
        let (obj, out) = decode_object(br#"{"type":"a"}"#).unwrap();
        assert_eq!(obj["type"], "a");
        assert!(out.is_empty());
        assert_eq!(decode_object(b"  ").unwrap_err(), []);
        assert_eq!(
            diagnostic_kinds(&decode_object(b"not json").unwrap_err()),
            ["not_json"]
        );

        #[derive(serde::Deserialize, Default)]
        #[serde(default)]
        struct View<'a> {
            #[serde(borrow, deserialize_with = "crate::lenient::field")]
            a: Option<std::borrow::Cow<'a, str>>,
        }
        impl<'de: 'a, 'a> Object<'de> for View<'a> {}
        let mut scratch = String::new();
        let (view, out) = decode::<View>(br#"{"a":"x","a":"y"}"#, &mut scratch).unwrap();
        assert_eq!(view.a.as_deref(), Some("y"));
        assert_eq!(diagnostic_kinds(&out), ["repaired_line"]);
    }

    #[test]
    fn an_empty_type_is_missing_and_any_other_unknown() {
        let kinds = [type_diagnostic("", b"{}"), type_diagnostic("x", b"{}")];
        assert_eq!(diagnostic_kinds(&kinds), ["missing_field", "unknown_type"]);
        assert!(matches!(&kinds[1], Event::Diagnostic { message, .. }
            if message == "unknown line type `x`"));
    }

    #[test]
    fn a_tool_result_counts_once_and_only_for_a_started_call() {
        let words = ResultWords {
            missing_id: "no id",
            orphan: |id| format!("orphan {id}"),
            repeated: Some(|id| format!("again {id}")),
        };
        let mut ids = ToolIds::default();
        let mut out = Vec::new();
        assert!(ids.start("a"));
        assert!(!ids.start("a"));
        assert_eq!(ids.finish(None, &words, b"{}", &mut out), None);
        assert_eq!(ids.finish(Some("b"), &words, b"{}", &mut out), None);
        assert_eq!(ids.finish(Some("a"), &words, b"{}", &mut out), Some("a"));
        assert_eq!(ids.finish(Some("a"), &words, b"{}", &mut out), None);
        assert_eq!(
            diagnostic_kinds(&out),
            [
                "missing_field",
                "orphan_tool_result",
                "duplicate_tool_result"
            ]
        );
        assert!(matches!(&out[1], Event::Diagnostic { message, .. } if message == "orphan b"));
        // Silent on a second result when the reducer says so.
        let silent = ResultWords {
            repeated: None,
            ..words
        };
        let mut out = Vec::new();
        assert_eq!(ids.finish(Some("a"), &silent, b"{}", &mut out), None);
        assert!(out.is_empty());
    }

    #[test]
    fn a_tool_start_counts_once_and_needs_an_id() {
        let mut ids = ToolIds::default();
        let mut out = Vec::new();
        assert_eq!(ids.begin(None, "no id", b"{}", &mut out), None);
        assert_eq!(ids.begin(Some("a"), "no id", b"{}", &mut out), Some("a"));
        assert_eq!(ids.begin(Some("a"), "no id", b"{}", &mut out), None);
        assert_eq!(diagnostic_kinds(&out), ["missing_field"]);
        assert!(matches!(&out[0], Event::Diagnostic { message, .. } if message == "no id"));
    }

    #[test]
    fn ids_count_from_one() {
        let mut ids = IdMaker::new("pi-msg");
        assert_eq!([ids.next_id(), ids.next_id()], ["pi-msg-1", "pi-msg-2"]);
    }

    #[test]
    fn ids_name_the_open_thing_again_and_count_what_they_made() {
        let mut calls = IdMaker::new("letta-call");
        assert_eq!(
            (calls.count(), calls.last_id()),
            (0, "letta-call-0".to_string())
        );
        calls.next_id();
        assert_eq!(calls.next_id(), "letta-call-2");
        assert_eq!(
            (calls.count(), calls.last_id()),
            (2, "letta-call-2".to_string())
        );
        assert_eq!(calls.keyed("turn-7"), "letta-call-turn-7");
        assert_eq!(
            calls.count(),
            2,
            "a keyed id is not made up, so not counted"
        );
    }

    #[test]
    fn no_output_names_the_cli_and_the_hint() {
        let Event::FinalResult { error_message, .. } = no_output("Pi", Some("see stderr")) else {
            panic!()
        };
        assert_eq!(
            error_message.as_deref(),
            Some("Pi printed nothing on stdout (see stderr)")
        );
    }
}
