//! "Did you mean …?": the closest known name to a mistyped one, for task keys, criterion
//! types and harness names alike.

/// The candidate closest to `unknown` by edit distance, if it is close enough to be the
/// likely intent (at most about half its length away).
pub(crate) fn closest<'a>(
    unknown: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let candidates: Vec<&str> = candidates.into_iter().collect();
    // A name the unknown one begins (`claude` for `claude-code`), when only one does.
    let lower = unknown.to_lowercase();
    let prefixed: Vec<&str> = candidates
        .iter()
        .copied()
        .filter(|c| !lower.is_empty() && c.to_lowercase().starts_with(&lower))
        .collect();
    if let [only] = prefixed.as_slice() {
        return Some(only);
    }
    candidates
        .into_iter()
        .map(|c| (edit_distance(&lower, &c.to_lowercase()), c))
        .filter(|(distance, c)| *distance <= c.len().max(3) / 2 + 1)
        .min()
        .map(|(_, best)| best)
}

/// Levenshtein distance.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closest_prefers_the_one_name_that_begins_so() {
        let known = ["claude-code", "codex", "pi", "opencode", "gemini-cli"];
        assert_eq!(closest("claude", known), Some("claude-code"));
        assert_eq!(closest("gemini", known), Some("gemini-cli"));
        assert_eq!(closest("Claude-Code", known), Some("claude-code"));
        assert_eq!(closest("codx", known), Some("codex"));
        // Two names begin so: the nearer one by edit distance, if near enough.
        assert_eq!(
            closest("gemini", ["gemini-cli", "gemini-pro"]),
            Some("gemini-cli")
        );
        assert_eq!(closest("zzzzzz", known), None);
    }

    #[test]
    fn distance() {
        assert_eq!(edit_distance("max_turn", "max_turns"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
    }
}
