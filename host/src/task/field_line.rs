//! The line of the field a schema error names ([`place`]): serde_yaml_ng places a
//! field's own validation error (a `deserialize_with` refusing `max_usd: -1`) at the first
//! key of the enclosing mapping, not at the field. The loader moves it to the field's own
//! line, found in the text with [`super::compat::key_line`].

use super::compat::key_line;

/// `(line, column)` of the field `message` names, when it names one of the mapping at
/// `line`: a message `SECTION: FIELD ...` or `SECTION: SECTION.FIELD ...` (serde_yaml_ng
/// leads with the path of the mapping; our validators lead with the field) whose key is
/// found under top-level `SECTION` at or below `line`. Else `(line, column)` unchanged.
/// Lines and columns are 1-based.
pub(crate) fn place(text: &str, line: usize, column: usize, message: &str) -> (usize, usize) {
    let found = (|| {
        let (section, rest) = message.split_once(": ")?;
        if section.is_empty()
            || !section
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_')
        {
            return None;
        }
        let word = rest.split([' ', ':', ',']).next()?;
        let field = word.strip_prefix(&format!("{section}.")).unwrap_or(word);
        if field.is_empty() || !field.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return None;
        }
        let at = key_line(text, &[section, field])?;
        if at < line {
            return None;
        }
        let own = text.lines().nth(at - 1)?;
        Some((at, own.len() - own.trim_start().len() + 1))
    })();
    found.unwrap_or((line, column))
}

/// `FILE:LINE:COLUMN` of what a load-time refusal `hint` names in task file `path` (read again),
/// else `FILE`: `success_criteria[i]` (the item at 0-based `i`, at its `stop_early:` /
/// `stop_when:` key when it has one), else the first `run_limits.KEY` or `agent.KEY` the
/// hint mentions; `FILE` relative to the working folder when it is under it. For the
/// refusals made once the file has loaded (a harness refusing
/// `max_usd`, an early stop that cannot work), which have the task but not the text.
pub fn locate(path: &std::path::Path, hint: &str) -> String {
    // The task keeps its path absolute; a file under the working folder is named as the
    // user most likely gave it, relative (as the load errors name it).
    let shown = std::env::current_dir()
        .ok()
        .and_then(|cwd| {
            path.strip_prefix(cwd)
                .ok()
                .map(std::path::Path::to_path_buf)
        })
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or_else(|| path.to_path_buf());
    let file = shown.display().to_string();
    let Ok(text) = std::fs::read_to_string(path) else {
        return file;
    };
    match line_of(&text, hint) {
        Some(line) => format!("{file}:{line}:{}", column_of(&text, line)),
        None => file,
    }
}

/// The 1-based column of the first non-blank character (a key, or a list item's `-`) of
/// 1-based `line` in `text`; 1 when there is no such line.
pub(crate) fn column_of(text: &str, line: usize) -> usize {
    text.lines()
        .nth(line.saturating_sub(1))
        .map_or(1, |l| l.len() - l.trim_start().len() + 1)
}

/// The 1-based line [`locate`] finds in `text`.
fn line_of(text: &str, hint: &str) -> Option<usize> {
    let number = |rest: &str| -> Option<usize> {
        rest.split(|c: char| !c.is_ascii_digit())
            .next()
            .and_then(|n| n.parse().ok())
    };
    // `success_criteria[i]` (0-based, as field errors and early-stop refusals number it).
    if let Some(at) = hint.find("success_criteria[")
        && let Some(n) = number(&hint[at + "success_criteria[".len()..])
        && let Some(line) = criterion_line(text, n + 1)
    {
        return Some(line);
    }
    for section in ["run_limits", "agent", "sandbox"] {
        let lead = format!("{section}.");
        let mut from = 0;
        while let Some(i) = hint[from..].find(&lead) {
            let start = from + i + lead.len();
            let key: String = hint[start..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if let Some(line) = key_line(text, &[section, &key]) {
                return Some(line);
            }
            from = start;
        }
    }
    None
}

/// The line of criterion `n` (1-based) of `success_criteria`: its `stop_early:` or
/// `stop_when:` key, else the item's first line.
fn criterion_line(text: &str, n: usize) -> Option<usize> {
    let lines: Vec<&str> = text.lines().collect();
    let list = key_line(text, &["success_criteria"])?;
    let indent = |l: &str| l.len() - l.trim_start().len();
    let items: Vec<usize> = (list..lines.len())
        .take_while(|&i| {
            let t = lines[i].trim();
            t.is_empty() || t.starts_with('#') || indent(lines[i]) > 0 || t.starts_with("- ")
        })
        .filter(|&i| lines[i].trim_start().starts_with("- "))
        .collect();
    let item_indent = items.first().map(|&i| indent(lines[i]))?;
    let items: Vec<usize> = items
        .into_iter()
        .filter(|&i| indent(lines[i]) == item_indent)
        .collect();
    let start = *items.get(n.checked_sub(1)?)?;
    let end = items.get(n).copied().unwrap_or(lines.len());
    (start..end)
        .find(|&i| {
            let t = lines[i].trim_start().trim_start_matches("- ");
            t.starts_with("stop_early:") || t.starts_with("stop_when:")
        })
        .or(Some(start))
        .map(|i| i + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "task_id: t\nagent:\n  type: x\n  max_sessions: 0\nrun_limits:\n  max_turns: 3\n  max_usd: -1\n";

    #[test]
    fn a_field_error_moves_to_the_fields_own_line() {
        assert_eq!(
            place(
                TEXT,
                6,
                3,
                "run_limits: max_usd must be a positive amount of USD"
            ),
            (7, 3)
        );
        assert_eq!(
            place(
                TEXT,
                3,
                3,
                "agent: agent.max_sessions must be a whole number"
            ),
            (4, 3)
        );
        // Not a field of the section: unchanged.
        assert_eq!(
            place(TEXT, 6, 3, "run_limits: invalid type: string"),
            (6, 3)
        );
        assert_eq!(place(TEXT, 1, 1, "missing field `task_id`"), (1, 1));
    }

    #[test]
    fn a_refusal_is_placed_at_the_key_it_names() {
        let text = "task_id: t\nrun_limits:\n  max_turns: 3\n  max_usd: 1\nsuccess_criteria:\n  - type: file_exists\n    path: a\n  - type: command_executed\n    command_pattern: x\n    stop_early: {}\n";
        assert_eq!(line_of(text, "run_limits.max_usd needs a stream"), Some(4));
        assert_eq!(
            line_of(text, "success_criteria[1] (`command_executed`): x"),
            Some(10)
        );
        assert_eq!(
            line_of(text, "success_criteria[0] (`file_exists`): x"),
            Some(6)
        );
        assert_eq!(line_of(text, "agent.plugins"), None);
        // The column of the key on that line (trial 16u M4: one location format).
        assert_eq!(column_of(text, 10), 5);
        assert_eq!(column_of(text, 4), 3);
    }

    /// Trial 16u M4: a rule's error (time-budget mode here) in the one location format,
    /// `FILE:LINE:COLUMN: message`, the path as given.
    #[test]
    fn a_rule_error_has_file_line_and_column() {
        let text =
            "task_id: t\ninitial_prompt: hi\nagent:\n  type: claude-code\n  budget_mode: time\n";
        let err = crate::task::Task::parse_file(text, std::path::Path::new("tasks/b.yaml"))
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("tasks/b.yaml:5:3: agent.budget_mode"),
            "{err}"
        );
    }
}
