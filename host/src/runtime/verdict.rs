//! What the graders of every contract version share: the workspace path a guest sees, and
//! the `grade` result as the guest returns it (the same record in every version), and a
//! verdict as the host keeps it (its text capped).

use wasmtime::component::{ComponentType, Lift};

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

/// `grade`'s verdict as the guest returns it (WIT `verdict`, the same in grader@0.1.0 and
/// 0.2.0).
#[derive(ComponentType, Lift)]
#[component(record)]
pub(crate) struct RawVerdict {
    score: f64,
    /// The grader's own view of whether it is met: advisory, the host judges by the
    /// criterion's threshold.
    #[allow(dead_code)]
    pass: bool,
    details: String,
}

/// `grade`'s error as the guest returns it (WIT `grade-error`).
#[derive(ComponentType, Lift)]
#[component(record)]
pub(crate) struct RawError {
    message: String,
}

/// What `grade` returns, as a typed function's results.
pub(crate) type GradeResult = (Result<RawVerdict, RawError>,);

/// The guest's answer as the host keeps it: the verdict, or the error's message, each
/// text capped ([`grader_text`]).
pub(crate) fn kept(result: Result<RawVerdict, RawError>) -> Result<GraderVerdict, String> {
    match result {
        Ok(raw) => Ok(GraderVerdict {
            score: raw.score,
            details: grader_text(&raw.details),
        }),
        Err(raw) => Err(grader_text(&raw.message)),
    }
}
