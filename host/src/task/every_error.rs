//! Every error of a task file, not only the first ([`every_error`]), for `coder-eval
//! check`: the loader stops at its first error (serde does), so the file is loaded
//! again with the part that failed commented out, until it loads or no error can be
//! placed.

use super::{Task, TaskError};
use std::path::Path;

/// At most this many errors are reported per file.
const MAX_ERRORS: usize = 50;

/// The errors of task file `path` (whose text is `text`), in the order found: the
/// loader's first error, then each next one found with the failing block commented out
/// (the list item of a top-level list, else the top-level key, that holds the error's
/// line; comment lines keep every line number). Stops at an error that has no line, one
/// that points into a block already commented out or at its key (a consequence of the
/// removal, not an error of the file), or after [`MAX_ERRORS`]. Empty when the file
/// loads.
pub fn every_error(path: &Path, text: &str) -> Vec<TaskError> {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let mut errors: Vec<TaskError> = Vec::new();
    let mut removed: Vec<(usize, usize)> = Vec::new();
    let mut removed_keys: Vec<String> = Vec::new();
    // List items commented out: (the list's top-level key, first line). A later error in
    // the same list counts its index without them, so it is shifted back.
    let mut removed_items: Vec<(String, usize)> = Vec::new();
    while errors.len() < MAX_ERRORS {
        let attempt = lines.join("\n");
        let err = match Task::parse_file(&attempt, path) {
            Ok(_) => break,
            Err(err) => err,
        };
        let line = match &err {
            TaskError::Invalid { line, .. } if *line > 0 => *line,
            _ => {
                if errors.is_empty() || !caused_by_removal(&err, &removed_keys) {
                    errors.push(err);
                }
                break;
            }
        };
        let index = line - 1;
        let touched = removed
            .iter()
            .any(|&(start, end)| index + 1 >= start && index <= end);
        if !errors.is_empty() && (touched || caused_by_removal(&err, &removed_keys)) {
            break;
        }
        let err = with_original_index(err, index, &removed_items);
        if errors.iter().any(|e| e.to_string() == err.to_string()) {
            break;
        }
        let message = err.to_string();
        errors.push(err);
        let Some((start, end, key)) =
            field_of(&lines, index, &message).or_else(|| block_of(&lines, index))
        else {
            break;
        };
        match key {
            Some(key) => removed_keys.push(key),
            None => {
                if let Some(list) = top_key(&lines, index) {
                    removed_items.push((list, start));
                }
            }
        }
        for l in &mut lines[start..=end] {
            *l = "#".to_string();
        }
        removed.push((start, end));
    }
    errors
}

/// Whether `err` only says that a key we commented out is missing.
fn caused_by_removal(err: &TaskError, removed_keys: &[String]) -> bool {
    let message = err.to_string();
    removed_keys
        .iter()
        .any(|k| message.contains(&format!("missing field `{k}`")))
}

/// `err` with the index of its list item (`key[i]` at the start of its message) counted
/// in the file as written: plus the items of that list commented out above `index`.
fn with_original_index(err: TaskError, index: usize, removed: &[(String, usize)]) -> TaskError {
    let TaskError::Invalid {
        path,
        line,
        column,
        message,
    } = err
    else {
        return err;
    };
    let shifted = (|| {
        let open = message.find('[')?;
        let key = &message[..open];
        let close = open + message[open..].find(']')?;
        let i: usize = message[open + 1..close].parse().ok()?;
        let above = removed
            .iter()
            .filter(|(k, start)| k == key && *start < index)
            .count();
        (above > 0).then(|| format!("{key}[{}]{}", i + above, &message[close + 1..]))
    })();
    TaskError::Invalid {
        path,
        line,
        column,
        message: shifted.unwrap_or(message),
    }
}

/// The top-level key whose body holds line `index` (0-based).
fn top_key(lines: &[String], index: usize) -> Option<String> {
    let index = index.min(lines.len().checked_sub(1)?);
    (0..=index)
        .rev()
        .find(|&i| !blank(&lines[i]) && indent(&lines[i]) == 0 && !lines[i].starts_with('-'))
        .and_then(|i| lines[i].split(':').next().map(|k| k.trim().to_string()))
}

fn indent(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

fn blank(line: &str) -> bool {
    let t = line.trim();
    t.is_empty() || t.starts_with('#')
}

/// The field at line `index` (0-based) alone, when the error names it: a key directly
/// under a top-level key (`max_usd:` under `run_limits:`), with the lines indented under
/// it. So the other fields of the section are still checked (`max_usd: 0` and
/// `max_total_tokens: -5` are both reported). `None` otherwise.
fn field_of(
    lines: &[String],
    index: usize,
    message: &str,
) -> Option<(usize, usize, Option<String>)> {
    let line = lines.get(index)?;
    let own = indent(line);
    let trimmed = line.trim_start();
    if own == 0 || trimmed.starts_with('-') || blank(line) {
        return None;
    }
    let key = trimmed.split(':').next()?.trim().trim_matches(['"', '\'']);
    if key.is_empty() || !trimmed.contains(':') || !message.contains(key) {
        return None;
    }
    // Its parent: the nearest line above that is indented less; it must be top-level.
    let parent = (0..index)
        .rev()
        .find(|&i| !blank(&lines[i]) && indent(&lines[i]) < own)?;
    if indent(&lines[parent]) != 0 || lines[parent].starts_with('-') {
        return None;
    }
    let end = (index + 1..lines.len())
        .find(|&i| !blank(&lines[i]) && indent(&lines[i]) <= own)
        .map_or(lines.len() - 1, |i| i - 1);
    Some((index, end, Some(key.to_string())))
}

/// The block holding line `index` (0-based): (first line, last line, the top-level key
/// when the whole key is taken). A list item of a top-level list (`- ` at the list's
/// indentation) when the line is inside one, else its top-level key with its body.
fn block_of(lines: &[String], index: usize) -> Option<(usize, usize, Option<String>)> {
    let index = index.min(lines.len().checked_sub(1)?);
    // The top-level key: the nearest line at or above with no indentation.
    let key_line = (0..=index)
        .rev()
        .find(|&i| !blank(&lines[i]) && indent(&lines[i]) == 0 && !lines[i].starts_with('-'))?;
    let key_end = (key_line + 1..lines.len())
        .find(|&i| !blank(&lines[i]) && indent(&lines[i]) == 0 && !lines[i].starts_with('-'))
        .map_or(lines.len() - 1, |i| i - 1);
    let key = lines[key_line]
        .split(':')
        .next()
        .map(|k| k.trim().to_string());
    // A list item inside the key's body: the nearest `- ` above at the items' indentation.
    if index > key_line {
        let item_indent = (key_line + 1..=key_end)
            .filter(|&i| !blank(&lines[i]))
            .map(|i| &lines[i])
            .find(|l| l.trim_start().starts_with("- "))
            .map(|l| indent(l));
        if let Some(item_indent) = item_indent {
            let is_item = |i: usize| {
                indent(&lines[i]) == item_indent && lines[i].trim_start().starts_with("- ")
            };
            if let Some(start) = (key_line + 1..=index).rev().find(|&i| is_item(i)) {
                let end = (start + 1..=key_end)
                    .find(|&i| !blank(&lines[i]) && indent(&lines[i]) <= item_indent)
                    .map_or(key_end, |i| i - 1);
                // The last item of the list: take the whole key, not leave it empty.
                let others = (key_line + 1..=key_end).any(|i| (i < start || i > end) && is_item(i));
                if others {
                    return Some((start, end, None));
                }
            }
        }
    }
    Some((key_line, key_end, key))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_errors_in_three_places_are_all_reported() {
        let text = "task_id: t\ninitial_prompt: hi\nrun_limits:\n  max_turns: many\nsuccess_criteria:\n  - {type: file_exists, path: a.txt, description: ok}\n  - {type: no_such_type, description: x}\n  - {type: file_exists, description: no path}\nagent:\n  type: claude-code\n  bogus_field: 1\n";
        let errors = every_error(Path::new("t.yaml"), text);
        let lines: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
        assert_eq!(errors.len(), 4, "{lines:#?}");
        assert!(lines.iter().any(|l| l.contains("max_turns")), "{lines:#?}");
        assert!(
            lines
                .iter()
                .any(|l| l.contains("success_criteria[1]: unknown criterion type `no_such_type`")),
            "{lines:#?}"
        );
        // The third criterion is counted as in the file, not as the second of what was
        // left once the second was commented out.
        assert!(
            lines.iter().any(|l| l.contains("success_criteria[2]")),
            "{lines:#?}"
        );
        assert!(
            lines.iter().any(|l| l.contains("bogus_field")),
            "{lines:#?}"
        );
        // Two bad fields of one section: both, each at its own line.
        let text = "task_id: t\ninitial_prompt: hi\nrun_limits:\n  max_turns: 3\n  max_usd: 0\n  max_total_tokens: -5\n  max_output_tokens: abc\n";
        let lines: Vec<String> = every_error(Path::new("t.yaml"), text)
            .iter()
            .map(|e| e.to_string())
            .collect();
        assert_eq!(lines.len(), 3, "{lines:#?}");
        assert!(
            lines[0].starts_with("t.yaml:5:3:") && lines[0].contains("max_usd"),
            "{lines:#?}"
        );
        assert!(
            lines[1].starts_with("t.yaml:6:3:") && lines[1].contains("max_total_tokens"),
            "{lines:#?}"
        );
        assert!(
            lines[2].starts_with("t.yaml:7:3:") && lines[2].contains("whole number of tokens"),
            "{lines:#?}"
        );
        // A good file has none.
        assert!(every_error(Path::new("t.yaml"), "task_id: t\ninitial_prompt: hi\n").is_empty());
    }
}
