//! The `coder-eval` binary: a thin shell over the library.

/// `eprintln!` for this crate, shadowing std's (a `macro_rules!` in textual scope wins over
/// the prelude's): the same output, but a stderr that cannot be written (a closed pipe,
/// `coder-eval run … 2>&1 | head -1`, a full disk) is ignored instead of panicking
/// ("failed printing to stderr"): a diagnostic that cannot be shown must not stop a run.
/// (A stderr closed before the start, `2>&-`, is /dev/null: Rust reopens fds 0–2.)
macro_rules! eprintln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

mod cli;

fn main() {
    std::process::exit(cli::main());
}
