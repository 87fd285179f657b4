//! A grader that sleeps an hour (a WASI `subscribe-duration` through
//! `std::thread::sleep`), then passes saying how much time its clock saw go by: the
//! sleep must not hold the host, and the frozen clock must not move.

use grader_kit::{Criterion, GradingInput, Verdict};
use std::time::{Duration, Instant};

pub struct Sleeps;

impl Criterion for Sleeps {
    fn grade(_input: &GradingInput) -> Result<Verdict, String> {
        let start = Instant::now();
        std::thread::sleep(Duration::from_secs(3600));
        Ok(Verdict::pass(format!(
            "slept; the clock saw {} ms go by",
            start.elapsed().as_millis()
        )))
    }
}

grader_kit::export_grader!(Sleeps);
