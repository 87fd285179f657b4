//! `classification_match`: the agent's answer (its final text, or a workspace file) read
//! as one of the allowed labels (see the crate docs for the rules).

use criteria_common::{Target, read_target};
use grader_kit::{GradingInput, Verdict};
use serde::Deserialize;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ClassificationMatch {
    pub(crate) expected_label: String,
    #[serde(default)]
    pub(crate) allowed_labels: Option<Vec<String>>,
    #[serde(default)]
    pub(crate) case_sensitive: bool,
    #[serde(default)]
    pub(crate) path: Option<String>,
    #[serde(default)]
    pub(crate) final_text: Option<String>,
}

pub(crate) fn normalize(s: &str, case_sensitive: bool) -> String {
    if case_sensitive {
        s.trim().to_string()
    } else {
        s.trim().to_lowercase()
    }
}

/// Whether `needle` occurs in `hay` with no word character on either side.
fn has_word(hay: &str, needle: &str) -> bool {
    if needle.is_empty() {
        return false;
    }
    let word = |c: char| c.is_alphanumeric() || c == '_';
    hay.match_indices(needle).any(|(at, m)| {
        let before = hay[..at].chars().next_back();
        let after = hay[at + m.len()..].chars().next();
        !before.is_some_and(word) && !after.is_some_and(word)
    })
}

pub(crate) fn classification_match(
    input: &GradingInput,
    p: ClassificationMatch,
) -> Result<Verdict, String> {
    let (source, text) = match &p.path {
        Some(path) => match read_target(input, path)? {
            Target::One(rel, content) => (format!("`{rel}`"), content),
            Target::Missing(why) => (why, String::new()),
        },
        None => (
            "the final text".to_string(),
            p.final_text
                .clone()
                .or_else(|| input.final_text())
                .unwrap_or_default(),
        ),
    };
    let labels = p
        .allowed_labels
        .clone()
        .unwrap_or_else(|| vec![p.expected_label.clone()]);
    let norm = |s: &str| normalize(s, p.case_sensitive);
    let said = norm(&text);
    let observed = if said.is_empty() {
        "(none)".to_string()
    } else if let Some(exact) = labels.iter().find(|l| norm(l) == said) {
        exact.clone()
    } else {
        let found: Vec<&String> = labels
            .iter()
            .filter(|l| has_word(&said, &norm(l)))
            .collect();
        match found.as_slice() {
            [one] => (*one).clone(),
            [] => "(other)".to_string(),
            _ => "(ambiguous)".to_string(),
        }
    };
    let ok = norm(&observed) == norm(&p.expected_label);
    Ok(Verdict::binary(
        ok,
        format!(
            "observed={observed:?}, expected={:?} (from {source}: {:?})",
            p.expected_label,
            grader_kit::truncate(text.trim(), 200)
        ),
    ))
}
