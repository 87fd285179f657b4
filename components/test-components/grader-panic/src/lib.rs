//! A hostile grader that panics.

use grader_kit::{Criterion, GradingInput, Verdict};

pub struct Panics;

impl Criterion for Panics {
    fn grade(input: &GradingInput) -> Result<Verdict, String> {
        panic!(
            "grader panicked on purpose ({} events)",
            input.trajectory.len()
        )
    }
}

grader_kit::export_grader!(Panics);
