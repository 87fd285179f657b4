//! A grader exporting `coder-eval:grader/criterion@0.1.0` over `coder-eval:events@9.0.0`
//! (an events version the host does not speak). The host must refuse it by reading its
//! imports, before instantiating it, naming the version.
#![cfg(target_arch = "wasm32")]

wit_bindgen::generate!({
    path: ["wit/events", "wit/grader"],
    world: "coder-eval:grader/grader@0.1.0",
    generate_all,
});

use exports::coder_eval::grader::criterion::{GradingError, GradingInput, Guest, Verdict};

struct Wrong;

impl Guest for Wrong {
    fn grade(input: GradingInput) -> Result<Verdict, GradingError> {
        Ok(Verdict {
            score: 1.0,
            pass: true,
            details: format!("{} events", input.trajectory.len()),
        })
    }
}

export!(Wrong);
