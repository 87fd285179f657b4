use super::*;
use crate::{Event, Parsed, parse_line};
use serde_json::value::RawValue;

#[derive(Deserialize, Default, Debug)]
#[serde(default)]
struct Line<'a> {
    #[serde(rename = "type", borrow, deserialize_with = "field")]
    kind: Option<Cow<'a, str>>,
    #[serde(deserialize_with = "field")]
    count: Option<u64>,
    #[serde(deserialize_with = "field")]
    cost: Option<f64>,
    #[serde(deserialize_with = "field")]
    flag: Option<bool>,
    #[serde(borrow, deserialize_with = "list")]
    names: Vec<Cow<'a, str>>,
    #[serde(borrow, deserialize_with = "field")]
    inner: Option<Inner<'a>>,
    #[serde(borrow, deserialize_with = "field")]
    content: Option<TextOrList<'a, Inner<'a>>>,
    #[serde(borrow)]
    raw: Option<&'a RawValue>,
}

#[derive(Deserialize, Default, Debug)]
#[serde(default)]
struct Inner<'a> {
    #[serde(borrow, deserialize_with = "field")]
    text: Option<Cow<'a, str>>,
}

impl<'de: 'a, 'a> Object<'de> for Line<'a> {}
impl<'de: 'a, 'a> Object<'de> for Inner<'a> {}

/// A scratch buffer that lives as long as the test needs (leaked: tests only).
fn scratch() -> &'static mut String {
    Box::leak(Box::default())
}

fn read(text: &str) -> Line<'_> {
    match parse_line::<Line>(text.as_bytes(), scratch()) {
        Parsed::Line(line) => line,
        Parsed::Repaired(_, note) => panic!("repaired: {note:?}"),
        Parsed::Blank => panic!("blank"),
        Parsed::Bad(e) => panic!("bad: {e:?}"),
    }
}

fn repaired(text: &str) -> (Line<'_>, String) {
    match parse_line::<Line>(text.as_bytes(), scratch()) {
        Parsed::Repaired(line, Event::Diagnostic { kind, message, .. }) => {
            assert_eq!(kind, "repaired_line");
            (line, message)
        }
        _ => panic!("expected a repair for {text}"),
    }
}

fn diagnostic_kind(text: &str) -> String {
    match parse_line::<Line>(text.as_bytes(), scratch()) {
        Parsed::Bad(Event::Diagnostic { kind, .. }) => kind,
        _ => panic!("expected a diagnostic for {text}"),
    }
}

#[test]
fn fields_of_the_expected_type_are_read_and_others_skipped() {
    let line = read(
        r#"{"type":"x","count":3,"cost":1,"flag":true,"names":["a",1,{"b":2},"c"],
            "inner":{"text":"t","more":[1,2]},"unknown":{"deep":[{"x":null}]}}"#,
    );
    assert_eq!(line.kind.as_deref(), Some("x"));
    assert_eq!(line.count, Some(3));
    assert_eq!(line.cost, Some(1.0));
    assert_eq!(line.flag, Some(true));
    assert_eq!(line.names, ["a", "c"]);
    assert_eq!(line.inner.unwrap().text.as_deref(), Some("t"));
}

#[test]
fn a_field_of_another_type_reads_as_absent_like_value_accessors() {
    let line =
        read(r#"{"type":7,"count":-1,"cost":"1.5","flag":1,"names":"a","inner":[{"text":"t"}]}"#);
    assert!(line.kind.is_none());
    assert!(line.count.is_none(), "a negative number is not a u64");
    assert!(line.cost.is_none());
    assert!(line.flag.is_none());
    assert!(line.names.is_empty());
    assert!(line.inner.is_none(), "an array is not an object");
    assert!(
        read(r#"{"count":2.5}"#).count.is_none(),
        "a float is not a u64"
    );
    assert!(read(r#"{"type":null}"#).kind.is_none());
}

#[test]
fn text_or_list_reads_both_shapes() {
    match read(r#"{"content":"plain"}"#).content {
        Some(TextOrList::Text(t)) => assert_eq!(t, "plain"),
        other => panic!("{other:?}"),
    }
    match read(r#"{"content":[{"text":"a"},"skipped",{"text":"b"}]}"#).content {
        Some(TextOrList::List(items)) => {
            let texts: Vec<_> = items.iter().map(|i| i.text.as_deref()).collect();
            assert_eq!(texts, [Some("a"), Some("b")]);
        }
        other => panic!("{other:?}"),
    }
    assert!(read(r#"{"content":{"text":"a"}}"#).content.is_none());
}

#[test]
fn strings_are_borrowed_unless_escaped_and_raw_values_kept_verbatim() {
    let line = read(r#"{"type":"plain","inner":{"text":"a\"b"},"raw":{"k":"\u00e9", "n":[1]}}"#);
    assert!(matches!(line.kind, Some(Cow::Borrowed("plain"))));
    assert!(matches!(line.inner.unwrap().text, Some(Cow::Owned(ref s)) if s == "a\"b"));
    assert_eq!(line.raw.unwrap().get(), r#"{"k":"\u00e9", "n":[1]}"#);
}

#[test]
fn bad_lines_become_the_same_diagnostics_as_with_a_value() {
    assert!(matches!(
        parse_line::<Line>(b"  \t", scratch()),
        Parsed::Blank
    ));
    assert_eq!(diagnostic_kind("[1,2]"), "not_object");
    assert_eq!(diagnostic_kind("\"text\""), "not_object");
    assert_eq!(diagnostic_kind("not json"), "not_json");
    assert_eq!(diagnostic_kind(r#"{"type":"x"} trailing"#), "not_json");
    assert_eq!(diagnostic_kind(r#"{"type":"x""#), "not_json");
    // A broken surrogate in a line that is not JSON anyway is not repaired.
    assert_eq!(diagnostic_kind(r#"{"type":"\ud83d""#), "not_json");
    match parse_line::<Line>(b"{\"type\":\"\xff\"}", scratch()) {
        Parsed::Bad(Event::Diagnostic { kind, .. }) => assert_eq!(kind, "invalid_utf8"),
        _ => panic!("expected invalid_utf8"),
    }
}

#[test]
fn a_repeated_key_keeps_its_last_value() {
    let (line, message) =
        repaired(r#"{"type":"a","count":1,"type":"b","inner":{"text":"x","text":"y"}}"#);
    assert_eq!(line.kind.as_deref(), Some("b"));
    assert_eq!(line.count, Some(1));
    assert_eq!(line.inner.unwrap().text.as_deref(), Some("y"));
    assert!(
        message.contains("a key given twice keeps its last value"),
        "{message}"
    );
}

#[test]
fn a_lone_surrogate_reads_as_a_replacement_character() {
    // Half an emoji, as a CLI that cuts output writes it; the rest of the line stays.
    let (line, message) = repaired(r#"{"type":"x","inner":{"text":"cut \ud83d"},"count":2}"#);
    assert_eq!(line.inner.unwrap().text.as_deref(), Some("cut \u{fffd}"));
    assert_eq!(line.count, Some(2));
    assert!(message.contains("lone UTF-16 surrogate"), "{message}");
    // A whole pair is no repair at all.
    let line = read(r#"{"inner":{"text":"\ud83d\ude00"}}"#);
    assert_eq!(line.inner.unwrap().text.as_deref(), Some("😀"));
}

#[test]
fn replace_lone_surrogates_leaves_pairs_and_escaped_backslashes() {
    use crate::replace_lone_surrogates as fix;
    assert_eq!(fix(r#""\ud83d\ude00""#), None);
    assert_eq!(
        fix(r#""a\\ud83d""#),
        None,
        "an escaped backslash, then text"
    );
    assert_eq!(fix(r#""\u0041\n""#), None);
    assert_eq!(fix(r#""x\ud83d""#).as_deref(), Some(r#""x\ufffd""#));
    assert_eq!(fix(r#""\ude00x""#).as_deref(), Some(r#""\ufffdx""#));
    assert_eq!(
        fix(r#""\ud83d\ud83d\ude00""#).as_deref(),
        Some(r#""\ufffd\ud83d\ude00""#),
        "a high surrogate followed by a full pair"
    );
    assert_eq!(fix(r#""\\\ud83d""#).as_deref(), Some(r#""\\\ufffd""#));
}

#[test]
fn the_value_reader_repairs_lone_surrogates_too() {
    match crate::parse_json_line(br#"{"type":"tool","output":"cut \ud83d"}"#) {
        crate::ParsedLine::Repaired(map, Event::Diagnostic { kind, .. }) => {
            assert_eq!(kind, "repaired_line");
            assert_eq!(map["output"], "cut \u{fffd}");
        }
        _ => panic!("expected a repair"),
    }
}
