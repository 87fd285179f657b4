//! Where a duplicate key really is. The YAML parser (serde_yaml_ng 0.10) reports
//! `duplicate entry with key "k"` at the start of the mapping that holds it (often line 1),
//! not at the second `k:`; [`place`] finds the repeated key in the text so the error
//! names its line, and the line of the first one.

/// `(line, column, message)` of a parse error, 1-based as the parser gives them: for a
/// duplicate key, moved to the repeated key's line and column, with the first key's line
/// added to the message; any other error unchanged.
pub(crate) fn place(
    text: &str,
    line: usize,
    column: usize,
    message: String,
) -> (usize, usize, String) {
    let Some(key) = duplicated_key(&message) else {
        return (line, column, message);
    };
    match occurrences(text, line, column, &key).as_slice() {
        [first, second, ..] => (
            second.0,
            second.1,
            format!("duplicate key `{key}` (first set at line {})", first.0),
        ),
        _ => (line, column, message),
    }
}

/// The key named by serde_yaml_ng's `duplicate entry with key "k"` message.
fn duplicated_key(message: &str) -> Option<String> {
    let rest = message.split("duplicate entry with key \"").nth(1)?;
    Some(rest.split('"').next()?.to_string())
}

/// `(line, column)` of each `key:` of the block mapping that starts at `line`:`column`
/// (its keys sit at that column; the first may follow a `- `), in order.
fn occurrences(text: &str, line: usize, column: usize, key: &str) -> Vec<(usize, usize)> {
    let at = column.saturating_sub(1);
    let mut found = Vec::new();
    for (i, l) in text.lines().enumerate().skip(line.saturating_sub(1)) {
        let trimmed = l.trim_start();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let first = i + 1 == line;
        let indent = l.len() - trimmed.len();
        if !first && indent < at {
            break; // the mapping ended
        }
        if (!first && indent != at) || l.len() < at {
            continue;
        }
        let Some(body) = l.get(at..) else { continue };
        let name = body.split(':').next().unwrap_or("").trim();
        let name = name.trim_matches(|c| c == '"' || c == '\'');
        if name == key && body.contains(':') {
            found.push((i + 1, at + 1));
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::place;

    #[test]
    fn a_top_level_duplicate_is_placed_at_its_second_key() {
        let text = "task_id: a\ndescription: x\nagent:\n  type: pi\ndescription: y\n";
        let (line, column, message) = place(
            text,
            1,
            1,
            "duplicate entry with key \"description\" at line 1 column 1".into(),
        );
        assert_eq!((line, column), (5, 1));
        assert_eq!(message, "duplicate key `description` (first set at line 2)");
    }

    #[test]
    fn a_nested_duplicate_is_placed_in_its_own_mapping() {
        let text = "task_id: a\nrun_limits:\n  max_turns: 3\n  # note\n  max_turns: 4\n\
                    other:\n  max_turns: 5\n";
        let (line, column, _) = place(
            text,
            3,
            3,
            "duplicate entry with key \"max_turns\" at line 3 column 3".into(),
        );
        assert_eq!((line, column), (5, 3));
    }

    #[test]
    fn a_duplicate_in_a_list_item_starts_after_the_dash() {
        let text = "success_criteria:\n  - type: a\n    path: x\n    path: y\n  - type: b\n";
        let (line, column, message) = place(
            text,
            2,
            5,
            "duplicate entry with key \"path\" at line 2 column 5".into(),
        );
        assert_eq!((line, column), (4, 5));
        assert!(message.contains("first set at line 3"), "{message}");
    }

    #[test]
    fn other_errors_are_unchanged() {
        let (line, column, message) = place("a: 1\n", 1, 1, "something else".into());
        assert_eq!((line, column, message.as_str()), (1, 1, "something else"));
    }
}
