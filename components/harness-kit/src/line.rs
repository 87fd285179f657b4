//! Helpers every reducer needs: decoding one line, reading fields, cutting excerpts.

use crate::Event;
use crate::lenient::{Lenient, Object};
use serde_json::Value;

/// The outcome of decoding one stdout line.
pub enum ParsedLine {
    /// A JSON object.
    Object(serde_json::Map<String, Value>),
    /// A JSON object after a repair (see [`parse_line`]); the diagnostic (`repaired_line`)
    /// says what was repaired.
    Repaired(serde_json::Map<String, Value>, Event),
    /// A blank line (skipped, no diagnostic).
    Blank,
    /// Not a JSON object: the diagnostic to emit instead.
    Bad(Event),
}

/// Decodes one line as a JSON object: [`parse_line`] with the whole object as the view
/// (the same diagnostics, and the same repairs: [`ParsedLine::Repaired`]).
pub fn parse_json_line(line: &[u8]) -> ParsedLine {
    let mut scratch = String::new();
    match parse_line::<serde_json::Map<String, Value>>(line, &mut scratch) {
        Parsed::Line(map) => ParsedLine::Object(map),
        Parsed::Repaired(map, note) => ParsedLine::Repaired(map, note),
        Parsed::Blank => ParsedLine::Blank,
        Parsed::Bad(diagnostic) => ParsedLine::Bad(diagnostic),
    }
}

/// The outcome of decoding one stdout line into a reducer's typed view `T`.
pub enum Parsed<T> {
    /// A JSON object, read as `T`.
    Line(T),
    /// A JSON object read as `T` after a repair; the diagnostic says what was repaired.
    Repaired(T, Event),
    /// A blank line (skipped, no diagnostic).
    Blank,
    /// Not a JSON object: the diagnostic to emit instead.
    Bad(Event),
}

/// Decodes one line into `T`, a typed and lenient view of the fields a reducer reads (see
/// [`lenient`](crate::lenient)). The same outcomes as [`parse_json_line`] — blank lines
/// skipped; invalid UTF-8 (`invalid_utf8`), text that is not JSON (`not_json`) and JSON
/// that is not an object (`not_object`) each a diagnostic that keeps the line — but the
/// parts of the line `T` does not read are skipped, not built.
///
/// Two flaws real streams have are repaired rather than cost the line ([`Parsed::Repaired`],
/// with a `repaired_line` diagnostic): lone UTF-16 surrogate escapes (`"\ud83d"`, half an
/// emoji cut off by a CLI that truncates output) read as U+FFFD, and a key given twice
/// keeps its last value (as a `serde_json::Value` would). The repaired text lives in
/// `scratch`, which `T` may borrow from.
pub fn parse_line<'a, T: Object<'a>>(line: &'a [u8], scratch: &'a mut String) -> Parsed<T> {
    let trimmed = line.trim_ascii();
    if trimmed.is_empty() {
        return Parsed::Blank;
    }
    let text = match std::str::from_utf8(trimmed) {
        Ok(text) => text,
        Err(err) => {
            return Parsed::Bad(Event::diagnostic(
                "invalid_utf8",
                format!("line is not valid UTF-8 ({err})"),
                line,
            ));
        }
    };
    let not_object = || {
        Parsed::Bad(Event::diagnostic(
            "not_object",
            "line is JSON but not an object",
            line,
        ))
    };
    let err = match read::<T>(text) {
        Ok(Some(value)) => return Parsed::Line(value),
        Ok(None) => return not_object(),
        Err(err) => err,
    };
    // The repair path (rare): surrogates replaced, then a `Value` round trip, which keeps
    // the last of repeated keys.
    let surrogates = replace_lone_surrogates(text);
    let repaired = serde_json::from_str::<Value>(surrogates.as_deref().unwrap_or(text))
        .ok()
        .map(|value| value.to_string());
    let Some(repaired) = repaired else {
        return Parsed::Bad(Event::diagnostic(
            "not_json",
            format!("line is not JSON ({err})"),
            line,
        ));
    };
    *scratch = repaired;
    let scratch: &'a String = scratch;
    let mut what = Vec::new();
    if surrogates.is_some() {
        what.push("lone UTF-16 surrogate escapes read as U+FFFD");
    }
    if err.is_data() {
        what.push("a key given twice keeps its last value");
    }
    let note = Event::diagnostic(
        "repaired_line",
        format!("line repaired ({}): {err}", what.join("; ")),
        line,
    );
    match read::<T>(scratch) {
        Ok(Some(value)) => Parsed::Repaired(value, note),
        Ok(None) => not_object(),
        Err(err) => Parsed::Bad(Event::diagnostic(
            "unreadable_line",
            format!("line is a JSON object but could not be read ({err})"),
            line,
        )),
    }
}

/// Reads `text` as `T`: `Ok(None)` for JSON that is not an object.
fn read<'a, T: Object<'a>>(text: &'a str) -> Result<Option<T>, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_str(text);
    T::lenient(&mut de).and_then(|value| de.end().map(|()| value))
}

/// `text` with every `\uXXXX` escape of a lone UTF-16 surrogate (a high one not followed by
/// a low one, or a low one on its own) replaced by `\ufffd`; `None` when it has none.
/// Escaped backslashes (`\\ud83d` is text, not an escape) are left alone. JSON parsers
/// (serde_json) refuse lone surrogates, which JavaScript's `JSON.stringify` writes.
pub fn replace_lone_surrogates(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let surrogate_at = |i: usize| -> Option<u16> {
        let hex = bytes.get(i..i + 6)?;
        if hex[0] != b'\\' || (hex[1] != b'u') {
            return None;
        }
        let value = u16::from_str_radix(std::str::from_utf8(&hex[2..]).ok()?, 16).ok()?;
        (0xD800..=0xDFFF).contains(&value).then_some(value)
    };
    let mut out: Option<String> = None;
    let mut copied = 0;
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'\\' {
            i += 1;
            continue;
        }
        match surrogate_at(i) {
            Some(0xD800..=0xDBFF)
                if surrogate_at(i + 6).is_some_and(|low| (0xDC00..=0xDFFF).contains(&low)) =>
            {
                i += 12; // a valid pair
            }
            Some(_) => {
                let out = out.get_or_insert_with(|| String::with_capacity(text.len()));
                out.push_str(&text[copied..i]);
                out.push_str("\\ufffd");
                i += 6;
                copied = i;
            }
            None => i += 2, // any other escape, `\\` included
        }
    }
    let mut out = out?;
    out.push_str(&text[copied..]);
    Some(out)
}

/// The diagnostic for the bytes after the last newline at end of stream (a truncated
/// last line), unless there are none or they are blank.
pub fn truncated_line(rest: Option<&[u8]>) -> Option<Event> {
    let rest = rest.filter(|r| !r.trim_ascii().is_empty())?;
    Some(Event::diagnostic(
        "truncated_line",
        format!(
            "the stream ended inside a line ({} bytes after the last newline)",
            rest.len()
        ),
        rest,
    ))
}

/// `value[key]` as a string, if it is one.
pub fn str_field<'a>(value: &'a Value, key: &str) -> Option<&'a str> {
    value.get(key).and_then(Value::as_str)
}

/// `value[key]` as an unsigned integer, if it is one.
pub fn u64_field(value: &Value, key: &str) -> Option<u64> {
    value.get(key).and_then(Value::as_u64)
}

/// `path` made absolute against `workspace` (for CLIs whose file tools want absolute
/// paths); an absolute `path` is kept as it is.
pub fn workspace_path(path: &str, workspace: &str) -> String {
    if path.starts_with('/') {
        path.to_string()
    } else {
        format!("{}/{}", workspace.trim_end_matches('/'), path)
    }
}

/// The first `max_bytes` of `text`, cut at a character boundary, as an owned string (see
/// [`char_prefix`]).
pub fn excerpt(text: &str, max_bytes: usize) -> String {
    char_prefix(text, max_bytes).to_string()
}

/// The longest prefix of `text` that is at most `max_bytes` long and ends on a character
/// boundary: the one place text is cut (reducers' excerpts, grader-kit's `truncate`, the
/// host's verdict texts).
pub fn char_prefix(text: &str, max_bytes: usize) -> &str {
    &text[..text.floor_char_boundary(max_bytes)]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_lines_become_diagnostics() {
        for (line, kind) in [
            (&b"\xff\xfe{}"[..], "invalid_utf8"),
            (b"changed 1 package in 471ms", "not_json"),
            (b"[1,2]", "not_object"),
            (b"{\"type\":\"assistant\"", "not_json"),
        ] {
            match parse_json_line(line) {
                ParsedLine::Bad(Event::Diagnostic { kind: k, .. }) => assert_eq!(k, kind),
                _ => panic!("expected a {kind} diagnostic"),
            }
        }
        assert!(matches!(parse_json_line(b"  "), ParsedLine::Blank));
        assert!(matches!(parse_json_line(b"{}"), ParsedLine::Object(_)));
    }

    #[test]
    fn excerpt_cuts_on_char_boundary() {
        assert_eq!(excerpt("héllo", 2), "h");
        assert_eq!(excerpt("hello", 10), "hello");
        assert_eq!(char_prefix("ééé", 3), "é");
        assert_eq!(char_prefix("ééé", 4), "éé");
        assert_eq!(char_prefix("é", 0), "");
    }
}
