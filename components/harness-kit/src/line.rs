//! Helpers every reducer needs: decoding one line, reading fields, cutting excerpts.

use crate::Event;
use crate::lenient::{Lenient, Object};
use serde_json::Value;

/// The outcome of decoding one stdout line.
pub enum ParsedLine {
    /// A JSON object.
    Object(serde_json::Map<String, Value>),
    /// A blank line (skipped, no diagnostic).
    Blank,
    /// Not a JSON object: the diagnostic to emit instead.
    Bad(Event),
}

/// Decodes one line as a JSON object. Invalid UTF-8, text that is not JSON, and JSON that
/// is not an object each become a diagnostic that keeps the line.
pub fn parse_json_line(line: &[u8]) -> ParsedLine {
    let trimmed = line.trim_ascii();
    if trimmed.is_empty() {
        return ParsedLine::Blank;
    }
    let text = match std::str::from_utf8(trimmed) {
        Ok(text) => text,
        Err(err) => {
            return ParsedLine::Bad(Event::diagnostic(
                "invalid_utf8",
                format!("line is not valid UTF-8 ({err})"),
                line,
            ));
        }
    };
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(map)) => ParsedLine::Object(map),
        Ok(_) => ParsedLine::Bad(Event::diagnostic(
            "not_object",
            "line is JSON but not an object",
            line,
        )),
        Err(err) => ParsedLine::Bad(Event::diagnostic(
            "not_json",
            format!("line is not JSON ({err})"),
            line,
        )),
    }
}

/// The outcome of decoding one stdout line into a reducer's typed view `T`.
pub enum Parsed<T> {
    /// A JSON object, read as `T`.
    Line(T),
    /// A blank line (skipped, no diagnostic).
    Blank,
    /// Not a JSON object: the diagnostic to emit instead.
    Bad(Event),
}

/// Decodes one line into `T`, a typed and lenient view of the fields a reducer reads (see
/// [`lenient`](crate::lenient)). The same outcomes as [`parse_json_line`] — blank lines
/// skipped; invalid UTF-8 (`invalid_utf8`), text that is not JSON (`not_json`) and JSON
/// that is not an object (`not_object`) each a diagnostic that keeps the line — but the
/// parts of the line `T` does not read are skipped, not built. An object that cannot be
/// read even leniently (a key given twice) is an `unreadable_line` diagnostic.
pub fn parse_line<'a, T: Object<'a>>(line: &'a [u8]) -> Parsed<T> {
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
    let mut de = serde_json::Deserializer::from_str(text);
    let read = T::lenient(&mut de).and_then(|value| de.end().map(|()| value));
    match read {
        Ok(Some(value)) => Parsed::Line(value),
        Ok(None) => Parsed::Bad(Event::diagnostic(
            "not_object",
            "line is JSON but not an object",
            line,
        )),
        Err(err) if err.is_data() => Parsed::Bad(Event::diagnostic(
            "unreadable_line",
            format!("line is a JSON object but could not be read ({err})"),
            line,
        )),
        Err(err) => Parsed::Bad(Event::diagnostic(
            "not_json",
            format!("line is not JSON ({err})"),
            line,
        )),
    }
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

/// The first `max_bytes` of `text`, cut at a character boundary.
pub fn excerpt(text: &str, max_bytes: usize) -> String {
    if text.len() <= max_bytes {
        return text.to_string();
    }
    let mut end = max_bytes;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text[..end].to_string()
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
    }
}
