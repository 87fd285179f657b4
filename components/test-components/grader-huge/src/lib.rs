//! A hostile grader whose verdict carries a 100 MB details string. The host must keep
//! only a bounded part of it.

use grader_kit::{Criterion, GradingInput, Verdict};

pub struct Huge;

/// Bytes of details returned.
pub const HUGE_BYTES: usize = 100 * 1000 * 1000;

impl Criterion for Huge {
    fn grade(_input: &GradingInput) -> Result<Verdict, String> {
        let mut details = String::from("HUGE-START ");
        details.push_str(&"x".repeat(HUGE_BYTES - details.len()));
        Ok(Verdict::pass(details))
    }
}

grader_kit::export_grader!(Huge);
