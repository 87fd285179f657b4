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
/// line; one field of a top-level section, block or flow style (`run_limits: {a: 1, b:
/// 2}`), when the error names it; comment lines keep every line number). Stops at an
/// error that has no line, one that points into a block already commented out or at its
/// key (a consequence of the removal, not an error of the file), or after
/// [`MAX_ERRORS`]. Empty when the file loads.
pub fn every_error(path: &Path, text: &str) -> Vec<TaskError> {
    every_error_and_rest(path, text).0
}

/// [`every_error`], and the file's text without the parts that failed when that loads:
/// the criteria that failed replaced by a placeholder (`{type: file_exists, path: .}`, so
/// the others keep their index in the file), the other blocks commented out. What the
/// checks after loading (the early stop, each harness's refusals) are run on, so their
/// errors come in the same pass as the loader's. `None` when the file loads as it is, or
/// when what is left does not load.
pub fn every_error_and_rest(path: &Path, text: &str) -> (Vec<TaskError>, Option<String>) {
    let original: Vec<&str> = text.lines().collect();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let mut errors: Vec<TaskError> = Vec::new();
    let mut removed: Vec<(usize, usize)> = Vec::new();
    let mut removed_keys: Vec<String> = Vec::new();
    // List items commented out: (the list's top-level key, first line). A later error in
    // the same list counts its index without them, so it is shifted back.
    let mut removed_items: Vec<(String, usize)> = Vec::new();
    // Fields taken out of a flow-style section: (line, key). A later error on that line
    // that names another field is the file's own.
    let mut flow_removed: Vec<(usize, String)> = Vec::new();
    let mut loads = false;
    while errors.len() < MAX_ERRORS {
        let attempt = lines.join("\n");
        let err = match Task::parse_file(&attempt, path) {
            Ok(_) => {
                loads = true;
                break;
            }
            Err(err) => err,
        };
        let line = match error_line(&err) {
            Some(line) => line,
            None => {
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
        // One field of a flow-style section: blanked (spaces keep every column).
        if let Some((from, to, key)) = flow_field_of(&lines, index, &message)
            && !flow_removed.contains(&(index, key.clone()))
        {
            errors.push(err);
            lines[index].replace_range(from..to, &" ".repeat(to - from));
            removed_keys.push(key.clone());
            flow_removed.push((index, key));
            continue;
        }
        errors.push(err);
        let field = field_of(&lines, index, &message);
        // A field's own lines only: an error on the line above it is another field's.
        let exact = usize::from(field.is_some());
        let Some((start, end, key)) = field.or_else(|| block_of(&lines, index)) else {
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
        removed.push((start + exact, end));
    }
    if errors.is_empty() || !loads {
        return (errors, None);
    }
    // The criteria commented out come back as placeholders, so the others keep their
    // index (`criterion 3` in a later check's error is the file's third).
    let mut rest = lines.clone();
    for (list, start) in &removed_items {
        if list == "success_criteria" {
            let item = original[*start];
            let dash = item.find('-').unwrap_or(0);
            rest[*start] = format!("{}- {{type: file_exists, path: .}}", &item[..dash]);
        }
    }
    let rest = rest.join("\n");
    let rest = match Task::parse_file(&rest, path) {
        Ok(_) => Some(rest),
        Err(_) => None,
    };
    (errors, rest)
}

/// The entry of a one-line flow-style top-level section (`run_limits: {a: 1, b: 2}`) on
/// line `index` (0-based) whose key the error `message` names, as a byte range of the
/// line (with its comma) and its key. `None` when the line is no such section or the
/// message names none of its keys.
fn flow_field_of(lines: &[String], index: usize, message: &str) -> Option<(usize, usize, String)> {
    let line = lines.get(index)?;
    if indent(line) != 0 || line.starts_with('-') || blank(line) {
        return None;
    }
    let open = line.find(": {")? + 2;
    let close = line.rfind('}')?;
    if close <= open {
        return None;
    }
    // The entries, split at the commas outside quotes, brackets and braces.
    let body = &line[open + 1..close];
    let mut entries: Vec<(usize, usize)> = Vec::new();
    let (mut depth, mut quote, mut from) = (0i32, None::<char>, 0usize);
    for (i, c) in body.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '[' | '{') => depth += 1,
            (None, ']' | '}') => depth -= 1,
            (None, ',') if depth == 0 => {
                entries.push((from, i + 1));
                from = i + 1;
            }
            _ => {}
        }
    }
    entries.push((from, body.len()));
    let named = |key: &str| {
        message.match_indices(key).any(|(at, _)| {
            let word = |c: char| c.is_alphanumeric() || c == '_';
            let before = message[..at].chars().next_back().is_none_or(|c| !word(c));
            let after = message[at + key.len()..]
                .chars()
                .next()
                .is_none_or(|c| !word(c));
            before && after
        })
    };
    entries.into_iter().find_map(|(from, to)| {
        let entry = &body[from..to];
        let key = entry.split(':').next()?.trim().trim_matches(['"', '\'']);
        (!key.is_empty() && entry.contains(':') && named(key))
            .then(|| (open + 1 + from, open + 1 + to, key.to_string()))
    })
}

/// The 1-based line of `err`: a schema error's, or that of a rule's message that leads
/// with `line N: ` (a time-budget field refused once the file is read, say).
fn error_line(err: &TaskError) -> Option<usize> {
    match err {
        TaskError::Invalid { line, .. } if *line > 0 => Some(*line),
        TaskError::Rule { message, .. } => message
            .strip_prefix("line ")?
            .split_once(": ")?
            .0
            .parse()
            .ok()
            .filter(|&n| n > 0),
        _ => None,
    }
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

    #[test]
    fn every_bad_field_of_a_flow_section_is_reported() {
        // The trial's (16, F4): only the first field of the flow map was reported.
        let text = "task_id: t\ninitial_prompt: hi\nrun_limits: {max_tool_calls: -1, max_usd: 0, max_turns: 3, max_total_tokens: 0}\n";
        let lines: Vec<String> = every_error(Path::new("t.yaml"), text)
            .iter()
            .map(|e| e.to_string())
            .collect();
        assert_eq!(lines.len(), 3, "{lines:#?}");
        for (line, field) in lines
            .iter()
            .zip(["max_tool_calls", "max_usd", "max_total_tokens"])
        {
            assert!(
                line.starts_with("t.yaml:3:") && line.contains(field),
                "{field}: {lines:#?}"
            );
        }
        let text = "task_id: t\ninitial_prompt: hi\nrun_limits: {max_total_tokens: 0, max_input_tokens: 0}\n";
        let (errors, rest) = every_error_and_rest(Path::new("t.yaml"), text);
        assert_eq!(errors.len(), 2, "{errors:#?}");
        // What is left loads, with the good fields kept.
        let rest = rest.expect("the rest loads");
        assert!(rest.contains("run_limits: {"), "{rest}");
        // A rule refused once the file is read (`line N: ...`), after a schema error: both,
        // and the rest loads without the field it names.
        let text = "task_id: t\ninitial_prompt: hi\nagent:\n  type: claude-code\n  budget_mode: time\n  timeout_seconds: 30\n  min_resume_seconds: 60\nrun_limits: {max_usd: 0}\n";
        let (errors, rest) = every_error_and_rest(Path::new("t.yaml"), text);
        let lines: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
        assert_eq!(lines.len(), 2, "{lines:#?}");
        assert!(
            lines[1].contains("t.yaml:7:3: agent.min_resume_seconds (60 s)"),
            "{lines:#?}"
        );
        // Likewise with a bad field just below the one the rule names.
        let text = text.replace(
            "  min_resume_seconds: 60\n",
            "  min_resume_seconds: 60\n  max_sessions: 0\n",
        );
        let lines: Vec<String> = every_error(Path::new("t.yaml"), &text)
            .iter()
            .map(|e| e.to_string())
            .collect();
        assert_eq!(lines.len(), 3, "{lines:#?}");
        assert!(rest.is_some(), "{lines:#?}");
    }

    #[test]
    fn the_rest_keeps_each_criterion_at_its_index() {
        let text = "task_id: t\ninitial_prompt: hi\nsuccess_criteria:\n  - type: command_executed\n    command_pattern: '('\n  - type: file_exists\n    path: x\n    stop_early: {on_pass: stop}\n";
        let (errors, rest) = every_error_and_rest(Path::new("t.yaml"), text);
        assert_eq!(errors.len(), 1, "{errors:#?}");
        let rest = rest.expect("the rest loads");
        let loaded = Task::parse_file(&rest, Path::new("t.yaml")).unwrap();
        let criteria = &loaded.tasks[0].success_criteria;
        assert_eq!(criteria.len(), 2, "{rest}");
        assert_eq!(rest.lines().count(), text.lines().count(), "{rest}");
        // A file that loads has no rest to check: it is checked as it is.
        assert_eq!(
            every_error_and_rest(Path::new("t.yaml"), "task_id: t\ninitial_prompt: hi\n").1,
            None
        );
    }
}
