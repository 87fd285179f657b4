//! A hostile grader that allocates without bound: the memory cap must stop it.

use grader_kit::{Criterion, GradingInput, Verdict};

pub struct Hoards;

impl Criterion for Hoards {
    #[allow(unreachable_code)]
    fn grade(_input: &GradingInput) -> Result<Verdict, String> {
        let mut hoard: Vec<Vec<u8>> = Vec::new();
        loop {
            // Reserve without writing, so memory (not fuel) runs out first.
            let mut chunk = Vec::<u8>::with_capacity(1 << 20);
            chunk.push(1);
            hoard.push(chunk);
            std::hint::black_box(&hoard);
        }
        Ok(Verdict::pass(""))
    }
}

grader_kit::export_grader!(Hoards);
