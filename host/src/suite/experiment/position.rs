//! Where in an experiment file a layer's error is: the line and column of the key it
//! names, for errors that name file, line and field.

use super::ExperimentError;
use serde_yaml_ng::Value;
use std::path::Path;

/// Each section of a layer read as the task file reads it, so a misspelt key is refused
/// at load, naming the file, the line and column of the key (a nested unknown field's
/// own line, else the section's, else the layer's: `defaults:` or the variant's
/// `variant_id`) and the key.
pub(super) fn check_sections(
    layer: &Value,
    at: &str,
    path: &Path,
    text: &str,
    line: Option<usize>,
) -> Result<(), ExperimentError> {
    match section_error(layer) {
        Some((key, message)) => {
            let (line, column) = line
                .map(|start| key_position(text, start, key, &message))
                .unwrap_or((0, 0));
            Err(ExperimentError::Invalid {
                path: path.to_path_buf(),
                line,
                column,
                message: format!("{at}.{key}: {message}"),
            })
        }
        None => Ok(()),
    }
}

/// The 1-based line and column of the key a section error names, within the layer that
/// starts at line `start`: the unknown field the message names (`unknown field
/// `max_turnz``), else the section `key`; `(start, 0)` when neither is found before the
/// layer ends (the next variant, or the next top-level key).
fn key_position(text: &str, start: usize, key: &str, message: &str) -> (usize, usize) {
    let unknown = message
        .split_once("unknown field `")
        .and_then(|(_, rest)| rest.split_once('`'))
        .map(|(name, _)| name);
    unknown
        .and_then(|name| key_positions(text, start, name).first().copied())
        .or_else(|| key_positions(text, start, key).first().copied())
        .unwrap_or((start, 0))
}

/// The 1-based line and column of each `key:` within the layer that starts at line
/// `start`, in the order they appear; the layer ends at the next variant, or the next
/// key left of it.
pub(super) fn key_positions(text: &str, start: usize, key: &str) -> Vec<(usize, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let first = lines.get(start.saturating_sub(1)).copied().unwrap_or("");
    let layer_indent = first.len() - first.trim_start_matches([' ', '-']).len();
    // A variant is a list entry: its keys sit at its own indent.
    let entry = first.trim_start().starts_with('-');
    let mut found = Vec::new();
    for (i, l) in lines.iter().enumerate().skip(start.saturating_sub(1)) {
        let body = l.trim_start_matches([' ', '-']);
        let indent = l.len() - body.len();
        if i + 1 > start && !body.is_empty() && !body.starts_with('#') {
            // The layer ends at the next entry of its list or a key left of it.
            let ends = if entry {
                indent < layer_indent || (indent == layer_indent && l.trim_start().starts_with('-'))
            } else {
                indent <= layer_indent
            };
            if ends {
                break;
            }
        }
        let mut from = 0;
        while let Some(pos) = l[from..].find(key) {
            let at = from + pos;
            let before = l[..at].chars().last();
            let after = &l[at + key.len()..];
            if before.is_none_or(|c| " {,-\"'".contains(c))
                && after.trim_start_matches(['"', '\'']).starts_with(':')
            {
                found.push((i + 1, at + 1));
            }
            from = at + key.len();
        }
    }
    found
}

/// The first section of `layer` (`agent`, `run_limits`, `sandbox`) that the task file's
/// reader refuses, and why (e.g. an unknown field).
pub(super) fn section_error(layer: &Value) -> Option<(&'static str, String)> {
    fn section<T: serde::de::DeserializeOwned>(v: Option<&Value>) -> Result<(), String> {
        match v {
            Some(v) => serde_yaml_ng::from_value::<T>(v.clone())
                .map(|_| ())
                .map_err(|e| e.to_string()),
            None => Ok(()),
        }
    }
    let checks = [
        (
            "agent",
            section::<crate::task::AgentSpec>(layer.get("agent")),
        ),
        (
            "run_limits",
            section::<crate::limits::RunLimitsSpec>(layer.get("run_limits")),
        ),
        (
            "sandbox",
            section::<crate::task::SandboxSpec>(layer.get("sandbox")),
        ),
    ];
    checks
        .into_iter()
        .find_map(|(key, result)| result.err().map(|m| (key, m)))
}

/// The 1-based line of `variant_id: <id>` in the experiment's text.
pub(super) fn variant_line(text: &str, id: &str) -> Option<usize> {
    variant_lines(text, id).first().copied()
}

/// The 1-based lines of every `variant_id: <id>` in the experiment's text, in order (more
/// than one when the id is given twice).
pub(super) fn variant_lines(text: &str, id: &str) -> Vec<usize> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| {
            // Block style (`- variant_id: a`) or flow style (`[{variant_id: a, ...}]`).
            l.match_indices("variant_id:").any(|(at, key)| {
                l[..at].chars().last().is_none_or(|c| " {,-".contains(c))
                    && l[at + key.len()..]
                        .split([',', '}', '#'])
                        .next()
                        .is_some_and(|v| v.trim().trim_matches(['"', '\'']) == id)
            })
        })
        .map(|(i, _)| i + 1)
        .collect()
}

/// The longest `variant_id`, in characters (ASCII: bytes). It names a folder at the top of
/// a run's folder: well under a file name's 255 bytes, and readable in tables.
pub(crate) const MAX_VARIANT_ID: usize = 64;

/// `s` for a message: its first 32 characters and `…` when longer.
pub(super) fn shorten(s: &str) -> String {
    match s.char_indices().nth(32) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

/// What a `variant_id` must be, for the error ([`is_variant_id`]).
pub(super) const VARIANT_ID_RULE: &str = "must be 1 to 64 characters, each an ASCII letter, \
     digit, `-`, `_` or `.`, not starting with `.` (it names a folder)";

/// Whether `s` can be a `variant_id`: 1 to [`MAX_VARIANT_ID`] ASCII letters, digits, `-`,
/// `_` and `.`, not starting with `.` (a hidden folder).
pub(super) fn is_variant_id(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= MAX_VARIANT_ID
        && !s.starts_with('.')
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// The id among `earlier` that differs from `id` in case alone: folders named `Fast` and
/// `fast` are one folder on a case-insensitive file system (macOS, Windows).
pub(super) fn case_twin<'a>(id: &str, earlier: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    earlier
        .into_iter()
        .find(|w| *w != id && w.eq_ignore_ascii_case(id))
}

/// The error of a variant (`at`: `variants[<id>]`) whose id is `twin`'s but for case.
pub(super) fn case_twin_message(at: &str, twin: &str) -> String {
    format!(
        "{at}.variant_id: the same folder as variants[{twin}] on a case-insensitive file \
         system (variant ids name folders: make them differ in more than case)"
    )
}
