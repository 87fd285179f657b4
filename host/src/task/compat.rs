//! Loading rules for coder_eval task files: what is ignored, dropped or mapped, with the
//! line it was written on, so a user can see what changed (`task.json` `load_notes`).
//!
//! As in coder_eval v0.12 (`TaskDefinition._warn_on_unknown_fields`), an unknown
//! *top-level* key is a warning, not an error; every nested section stays strict.
//! Legacy keys coder_eval once had are dropped with a warning, and legacy placements of
//! run limits are mapped to `run_limits` with a warning.

pub use crate::results::{LoadNote, NoteAction};

/// Top-level keys of a task file (coder_eval's `TaskDefinition` fields and the legacy
/// placements this loader maps).
pub(crate) const KNOWN_TOP_LEVEL: &[&str] = &[
    "task_id",
    "description",
    "initial_prompt",
    "initial_prompt_file",
    "tags",
    "skip",
    "agent",
    "sandbox",
    "run_limits",
    "success_criteria",
    "reference",
    "pre_run",
    "post_run",
    "dataset",
    "retry",
    "expected_commands",
    "simulation",
    "suite_id",
    "row_id",
    "task_timeout",
    "max_turns",
    "turn_timeout",
    // Replicates per task (`coder-eval run --repeats` overrides it).
    "repeats",
];

/// Legacy top-level keys dropped with a warning, and why they mean nothing now.
pub(crate) const DROPPED_TOP_LEVEL: &[(&str, &str)] = &[
    (
        "max_iterations",
        "coder_eval's retry iterations were removed: a task is one prompt (use run_limits.max_turns to bound the agent)",
    ),
    (
        "llm_reviewer",
        "coder_eval's reviewer was removed: grade with an `llm_judge` criterion",
    ),
    (
        "suite_id",
        "written by coder_eval's dataset expander, not read from a task file",
    ),
    (
        "row_id",
        "written by coder_eval's dataset expander, not read from a task file",
    ),
];

/// Notes for the top-level keys of `value` (a mapping) that are unknown or dropped.
pub(crate) fn top_level_notes(text: &str, value: &serde_yaml_ng::Value) -> Vec<LoadNote> {
    let Some(map) = value.as_mapping() else {
        return Vec::new();
    };
    let mut notes = Vec::new();
    for key in map.keys() {
        let Some(key) = key.as_str() else { continue };
        if let Some((_, why)) = DROPPED_TOP_LEVEL.iter().find(|(k, _)| *k == key) {
            notes.push(LoadNote {
                key: key.to_string(),
                action: NoteAction::Dropped,
                to: None,
                line: key_line(text, &[key]),
                message: format!("`{key}` is dropped: {why}"),
            });
        } else if !KNOWN_TOP_LEVEL.contains(&key) {
            let hint = super::closest(key, KNOWN_TOP_LEVEL.iter().copied())
                .map(|best| format!(" (did you mean `{best}`?)"))
                .unwrap_or_default();
            notes.push(LoadNote {
                key: key.to_string(),
                action: NoteAction::Ignored,
                to: None,
                line: key_line(text, &[key]),
                message: format!("unknown top-level key `{key}` is ignored{hint}"),
            });
        }
    }
    notes
}

/// A note that `from` (a legacy placement) was mapped to `to`.
pub(crate) fn mapped(text: &str, from: &[&str], to: &str) -> LoadNote {
    let key = from.join(".");
    LoadNote {
        line: key_line(text, from),
        message: format!("`{key}` is a legacy placement: mapped to `{to}` (write it there)"),
        key,
        action: NoteAction::Mapped,
        to: Some(to.to_string()),
    }
}

/// A note that `path` is accepted but not enforced, and why.
pub(crate) fn not_enforced(text: &str, path: &[&str], why: &str) -> LoadNote {
    let key = path.join(".");
    LoadNote {
        line: key_line(text, path),
        message: format!("`{key}` is recorded but not enforced: {why}"),
        key,
        action: NoteAction::NotEnforced,
        to: None,
    }
}

/// The 1-based line of a key in block-style YAML, found by indentation: `path[0]` at
/// the top level, each next key among the lines indented under the previous one.
/// `None` when not found (flow style, anchors).
pub(crate) fn key_line(text: &str, path: &[&str]) -> Option<usize> {
    let lines: Vec<&str> = text.lines().collect();
    let mut from = 0;
    let mut parent_indent: Option<usize> = None;
    let mut found = None;
    for key in path {
        found = None;
        for (i, line) in lines.iter().enumerate().skip(from) {
            let trimmed = line.trim_start();
            if trimmed.is_empty() || trimmed.starts_with('#') {
                continue;
            }
            let indent = line.len() - trimmed.len();
            if let Some(p) = parent_indent
                && indent <= p
            {
                break;
            }
            if parent_indent.is_none() && indent != 0 {
                continue;
            }
            let bare = trimmed.trim_start_matches("- ");
            let matches = [
                format!("{key}:"),
                format!("\"{key}\":"),
                format!("'{key}':"),
            ]
            .iter()
            .any(|k| bare.starts_with(k.as_str()));
            if matches {
                found = Some(i);
                parent_indent = Some(indent);
                from = i + 1;
                break;
            }
        }
        found?;
    }
    found.map(|i| i + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "task_id: t\nmax_iterations: 3\nagent:\n  type: x\n  # c\n  max_turns: 4\nrun_limits:\n  max_turns: 5\nbogus_key: 1\n";

    #[test]
    fn lines_of_nested_keys() {
        assert_eq!(key_line(TEXT, &["max_iterations"]), Some(2));
        assert_eq!(key_line(TEXT, &["agent", "max_turns"]), Some(6));
        assert_eq!(key_line(TEXT, &["run_limits", "max_turns"]), Some(8));
        assert_eq!(key_line(TEXT, &["agent", "model"]), None);
    }

    #[test]
    fn unknown_and_dropped_top_level_keys() {
        let value: serde_yaml_ng::Value = serde_yaml_ng::from_str(TEXT).unwrap();
        let notes = top_level_notes(TEXT, &value);
        assert_eq!(notes.len(), 2, "{notes:?}");
        assert_eq!(notes[0].action, NoteAction::Dropped);
        assert_eq!(notes[0].line, Some(2));
        assert_eq!(notes[1].action, NoteAction::Ignored);
        assert_eq!(notes[1].key, "bogus_key");
        assert_eq!(notes[1].line, Some(9));
    }
}
