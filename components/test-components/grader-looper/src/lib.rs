//! A hostile grader that loops forever: fuel, not the wall clock, must stop it.

use grader_kit::{Criterion, GradingInput, Verdict};

pub struct Loops;

impl Criterion for Loops {
    #[allow(unreachable_code)]
    fn grade(_input: &GradingInput) -> Result<Verdict, String> {
        let mut n: u64 = 0;
        loop {
            n = std::hint::black_box(n.wrapping_add(1));
        }
        Ok(Verdict::pass(n.to_string()))
    }
}

grader_kit::export_grader!(Loops);
