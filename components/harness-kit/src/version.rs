//! The CLI versions a harness was checked against, and the note for a stream from a CLI
//! newer than all of them.
//!
//! A harness declares [`Harness::CHECKED_VERSIONS`](crate::Harness::CHECKED_VERSIONS): the
//! versions whose recordings it replays and whose live scenarios it passed. The component
//! glue ([`export_harness!`](crate::export_harness)) watches the reducer's
//! [`Event::SessionStarted`]: when the version it names is newer than every checked one, or
//! cannot be read as a version, it adds an `unchecked_cli_version` diagnostic after it.
//! The stream still reduces as usual: a newer CLI is a note, never an error. A stream that
//! names no version (Codex, OpenCode, Gemini CLI print none) gets no note; the run's
//! `cli_version` (the CLI's `--version`) still says which one ran.

use crate::Event;

/// The numeric parts of the first dotted version in `text` (`"2.1.332 (Claude Code)"`,
/// `"codex-cli 0.155.1"` → `[2, 1, 332]`, `[0, 155, 1]`); `None` when it holds none.
/// A pre-release or build suffix after the numbers (`1.2.3-beta.1`) is ignored.
pub fn parse_version(text: &str) -> Option<Vec<u64>> {
    text.split(|c: char| c.is_whitespace() || c == 'v' || c == '@')
        .find_map(|word| {
            let numeric = word.split(['-', '+']).next().filter(|w| w.contains('.'))?;
            numeric
                .split('.')
                .map(|part| part.parse::<u64>().ok())
                .collect::<Option<Vec<u64>>>()
        })
}

/// The `unchecked_cli_version` diagnostic for a stream whose CLI reports `seen`, when it
/// is newer than every version in `checked` (or is not a readable version); `None` when it
/// is one of them, older, or in between, and when `checked` is empty (not declared).
/// `raw` is the line that named the version.
pub fn unchecked_note(seen: &str, checked: &[&str], raw: &[u8]) -> Option<Event> {
    let newest = checked.iter().filter_map(|v| parse_version(v)).max()?;
    let message = match parse_version(seen) {
        Some(v) if v <= newest => return None,
        Some(_) => format!(
            "CLI version {seen} is newer than the versions this harness was checked against ({}); \
             the stream is reduced as for those",
            checked.join(", ")
        ),
        None => format!(
            "CLI version `{seen}` is not a version number; this harness was checked against {}",
            checked.join(", ")
        ),
    };
    Some(Event::diagnostic("unchecked_cli_version", message, raw))
}

/// Adds the [`unchecked_note`] after each [`Event::SessionStarted`] in `events` that names
/// a version; `line` is the stdout line they came from.
pub fn add_unchecked_notes(events: &mut Vec<Event>, checked: &[&str], line: &[u8]) {
    let mut i = 0;
    while i < events.len() {
        if let Event::SessionStarted {
            cli_version: Some(seen),
            ..
        } = &events[i]
            && let Some(note) = unchecked_note(seen, checked, line)
        {
            events.insert(i + 1, note);
            i += 1;
        }
        i += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::diagnostic_kinds;

    const CHECKED: [&str; 2] = ["2.1.197", "2.1.332"];

    #[test]
    fn versions_are_read_from_what_clis_print() {
        assert_eq!(
            parse_version("2.1.332 (Claude Code)"),
            Some(vec![2, 1, 332])
        );
        assert_eq!(parse_version("codex-cli 0.155.1"), Some(vec![0, 155, 1]));
        assert_eq!(parse_version("v1.18.33"), Some(vec![1, 18, 33]));
        assert_eq!(parse_version("1.2.3-beta.1"), Some(vec![1, 2, 3]));
        assert_eq!(parse_version("dev"), None);
        assert_eq!(parse_version(""), None);
    }

    #[test]
    fn only_a_newer_or_unreadable_version_is_noted() {
        assert_eq!(unchecked_note("2.1.197", &CHECKED, b""), None);
        assert_eq!(unchecked_note("2.1.251", &CHECKED, b""), None, "in between");
        assert_eq!(unchecked_note("2.0.75", &CHECKED, b""), None, "older");
        assert_eq!(
            unchecked_note("2.1.333", &[], b""),
            None,
            "nothing declared"
        );
        // Numeric, not text order: 2.1.1000 > 2.1.332.
        let Some(Event::Diagnostic { kind, message, raw }) =
            unchecked_note("2.1.1000", &CHECKED, b"{\"v\":1}")
        else {
            panic!("no note for a newer version")
        };
        assert_eq!(kind, "unchecked_cli_version");
        assert!(message.contains("2.1.1000") && message.contains("2.1.197, 2.1.332"));
        assert_eq!(raw, "{\"v\":1}");
        assert!(unchecked_note("nightly", &CHECKED, b"").is_some());
    }

    #[test]
    fn the_note_follows_its_session_event() {
        let session = |v: Option<&str>| Event::SessionStarted {
            session_id: None,
            cli_version: v.map(String::from),
            model: None,
            tools: vec![],
        };
        let mut events = vec![session(Some("3.0.0")), Event::diagnostic("x", "", b"")];
        add_unchecked_notes(&mut events, &CHECKED, b"line");
        assert_eq!(diagnostic_kinds(&events), ["unchecked_cli_version", "x"]);
        assert!(matches!(events[0], Event::SessionStarted { .. }));

        let mut events = vec![session(None), session(Some("2.1.332"))];
        add_unchecked_notes(&mut events, &CHECKED, b"line");
        assert_eq!(events.len(), 2, "no version, or a checked one: no note");
    }
}
