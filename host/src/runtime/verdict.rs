//! What the graders of every contract version share: the workspace path a guest sees, and
//! a verdict as the host keeps it (its text capped).

/// Bytes of a verdict's `details` (or an error's `message`) the host keeps.
pub(crate) const MAX_VERDICT_TEXT: usize = 64 * 1024;
/// The guest path of the workspace.
pub(crate) const GUEST_WORKSPACE: &str = "/workspace";

/// A grader's judgement, as the host keeps it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct GraderVerdict {
    /// As returned (the caller checks the range).
    pub score: f64,
    /// At most [`MAX_VERDICT_TEXT`] bytes of the details, with a note when cut.
    pub details: String,
}

/// `text` cut to [`MAX_VERDICT_TEXT`] bytes on a character boundary, with a note.
pub(crate) fn grader_text(text: &str) -> String {
    if text.len() <= MAX_VERDICT_TEXT {
        return text.to_string();
    }
    let mut end = MAX_VERDICT_TEXT;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!(
        "{}… [truncated: the grader returned {} bytes, {MAX_VERDICT_TEXT} kept]",
        &text[..end],
        text.len()
    )
}
