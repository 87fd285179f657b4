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
/// wall and CPU time. Its defaults keep freed memory for a while (peak RSS 124 MiB against
/// glibc's 104–109 on that capture); [`tune_allocator`] makes it return memory at once
/// (106–114 MiB; on 4–16 MB inputs still about 13 MiB more than glibc's).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// mimalloc's options, set before the work starts: freed memory is purged at once
/// (`purge_delay` 0, default 1000 ms in v3) and arenas are committed as they are used
/// (`arena_eager_commit` 0, default on where the kernel overcommits), so peak RSS follows
/// live memory. The numbers are `mi_option_t`'s in mimalloc v3's `mimalloc.h`
/// (libmimalloc-sys 0.1.49, pinned); `MIMALLOC_*` environment variables set before the
/// start are overridden for these two (`MIMALLOC_VERBOSE` then shows the values read from
/// the environment, not these).
fn tune_allocator() {
    const ARENA_EAGER_COMMIT: libmimalloc_sys::mi_option_t = 4;
    const PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;
    // SAFETY: setting an option is a plain store into mimalloc's option table, valid at
    // any time.
    unsafe {
        libmimalloc_sys::mi_option_set(ARENA_EAGER_COMMIT, 0);
        libmimalloc_sys::mi_option_set(PURGE_DELAY, 0);
    }
}

mod cli;

fn main() {
    tune_allocator();
    std::process::exit(cli::main());
}
