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

/// mimalloc, not glibc's malloc: a replay's threads hand lines and events to each other,
/// so memory is often freed by another thread than the one that allocated it, which
/// glibc's per-thread arenas pay for with a lock; mimalloc frees to the owning thread's
/// page without one. End-to-end replay of a 64 MiB Claude Code capture
/// (`cargo bench --bench replay_e2e`, interleaved runs on a 2-core machine): about 10% less
/// wall and CPU time; start-up RSS about 8 MiB more.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod cli;

fn main() {
    std::process::exit(cli::main());
}
