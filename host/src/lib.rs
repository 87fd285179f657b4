//! coder-eval: evaluates coding-agent CLIs.
//!
//! The data flow, one module per stage: a task file ([`task`], its limits in [`limits`])
//! → a harness component's launch plan ([`runtime::harness`], resolved by [`components`])
//! → one turn, live or replayed ([`turn`]: spawn and record, reduce, collect, finish) →
//! grading ([`grading`]) → the documented machine output ([`results`]). [`run`] drives a
//! suite of tasks through those stages; components run in the sandbox of [`runtime`].
//!
//! The public surface is what the `coder-eval` binary, the workspace tests (`tests/all`)
//! and the benchmarks (`host/benches`) use; everything else is `pub(crate)`, and the
//! `unreachable_pub` lint keeps it so.

#![warn(unreachable_pub)]

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

pub mod components;
mod embedded;
pub mod exit_codes;
pub mod export;
pub mod gateway;
pub mod grading;
pub mod interrupt;
pub mod limits;
pub mod locate;
pub mod process;
pub mod results;
pub mod run;
pub mod runtime;
pub mod sandbox;
mod suggest;
pub mod suite;
pub mod task;
pub mod turn;
pub mod workspace;

pub use harness_kit::{Event, ToolStatus, Usage};

/// Which module may not import which: the one-way rules of the layout (README, Layout).
#[cfg(test)]
mod layering_tests {
    use std::path::{Path, PathBuf};

    /// The non-test `.rs` files under `dir` (a `tests.rs`, a `tests/` folder and a file
    /// `tests_*.rs` or `*_tests.rs` are tests).
    fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if path.is_dir() {
                if name != "tests" {
                    sources(&path, out);
                }
            } else if name.ends_with(".rs")
                && name != "tests.rs"
                && !name.starts_with("tests_")
                && !name.ends_with("_tests.rs")
            {
                out.push(path);
            }
        }
    }

    /// The lines of the module `module` (its `.rs` file and its folder) that name
    /// `crate::<other>` for an `other` in `forbidden`, outside comments and `#[cfg(test)]`
    /// modules at a file's end.
    fn offending(module: &str, forbidden: &[&str]) -> Vec<String> {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut files = Vec::new();
        let file = src.join(format!("{module}.rs"));
        if file.is_file() {
            files.push(file);
        }
        if src.join(module).is_dir() {
            sources(&src.join(module), &mut files);
        }
        assert!(!files.is_empty(), "no source for `{module}`");
        let mut found = Vec::new();
        for file in files {
            let text = std::fs::read_to_string(&file).unwrap();
            let code = text.split("#[cfg(test)]\nmod tests").next().unwrap_or("");
            for (n, line) in code.lines().enumerate() {
                let trimmed = line.trim_start();
                if trimmed.starts_with("//") {
                    continue;
                }
                for other in forbidden {
                    let needle = format!("crate::{other}");
                    let hit = line.match_indices(&needle).any(|(at, _)| {
                        !line[at + needle.len()..]
                            .starts_with(|c: char| c.is_alphanumeric() || c == '_')
                    });
                    if hit {
                        found.push(format!("{}:{}: {}", file.display(), n + 1, line.trim()));
                    }
                }
            }
        }
        found
    }

    /// `results/` is the documented output: it imports nothing from the rest of the host
    /// (its module doc), so an outside tool could take it as a crate of its own.
    #[test]
    fn results_imports_nothing_of_the_host() {
        let others = [
            "components",
            "embedded",
            "exit_codes",
            "export",
            "gateway",
            "grading",
            "interrupt",
            "limits",
            "locate",
            "process",
            "run",
            "runtime",
            "sandbox",
            "suggest",
            "suite",
            "task",
            "turn",
            "workspace",
        ];
        let found = offending("results", &others);
        assert!(found.is_empty(), "{}", found.join("\n"));
    }

    /// The pairs of modules whose direction was once in doubt, for the message of
    /// [`no_two_top_level_modules_import_each_other`]: each `(lower, upper)` pair's lower
    /// module names nothing of the upper one (the upper one imports the lower).
    /// The second Ctrl-C is heard in `interrupt` and acted on above `process`, which
    /// owns the live process groups (`process::shell` waits on `interrupt`). A suite's
    /// units are prepared in `run` (`run::units`), and which results are the
    /// infrastructure's is `suite::infra`, which `run::retry` asks. A turn's early-stop
    /// plan and its arming are `turn::early_stop`'s (replay re-arms from a recording),
    /// checked at load by `grading::live`; the built-in criteria components are
    /// `components::criteria`. A live watcher's interface is the live grader
    /// component's (`runtime::grader_v2`), which the early stop drives. Finding an agent
    /// CLI is `locate`, below the task loader and the turn that ask it.
    const ONE_WAY: &[(&str, &str)] = &[
        ("interrupt", "process"),
        ("suite", "run"),
        ("turn", "grading"),
        ("components", "grading"),
        ("runtime", "turn"),
        ("turn", "run"),
        ("task", "run"),
    ];

    /// The top-level modules of the library (`src/*.rs` and `src/*/`; `cli/` is the
    /// binary's, `lib.rs` and `main.rs` are the roots).
    fn top_level_modules() -> Vec<String> {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut modules: Vec<String> = std::fs::read_dir(&src)
            .unwrap()
            .filter_map(|entry| {
                let path = entry.unwrap().path();
                let name = path.file_name()?.to_string_lossy().into_owned();
                if path.is_dir() {
                    Some(name)
                } else {
                    name.strip_suffix(".rs").map(str::to_string)
                }
            })
            .filter(|name| !["lib", "main", "cli"].contains(&name.as_str()))
            .collect();
        modules.sort();
        modules.dedup();
        modules
    }

    /// No two top-level modules import each other: for every pair, at most one direction
    /// names the other (`crate::<other>`), so the modules stay layered, each pair one way.
    /// A pair of [`ONE_WAY`] says which side must go.
    #[test]
    fn no_two_top_level_modules_import_each_other() {
        let modules = top_level_modules();
        assert!(modules.len() > 10, "{modules:?}");
        let mut both = Vec::new();
        for (i, a) in modules.iter().enumerate() {
            for b in &modules[i + 1..] {
                let a_to_b = offending(a, &[b]);
                if a_to_b.is_empty() {
                    continue;
                }
                let b_to_a = offending(b, &[a]);
                if b_to_a.is_empty() {
                    continue;
                }
                let rule = ONE_WAY
                    .iter()
                    .find(|&&(lower, upper)| {
                        (lower, upper) == (a.as_str(), b.as_str())
                            || (lower, upper) == (b.as_str(), a.as_str())
                    })
                    .map(|(lower, upper)| format!(" (`{lower}` is below `{upper}`)"))
                    .unwrap_or_default();
                both.push(format!(
                    "`{a}` and `{b}` import each other{rule}:\n{}\n{}",
                    a_to_b.join("\n"),
                    b_to_a.join("\n")
                ));
            }
        }
        assert!(both.is_empty(), "{}", both.join("\n\n"));
    }

    /// `grading/` takes a task's parts, not the task (`task` holds the criteria specs and
    /// imports `grading`).
    #[test]
    fn grading_does_not_import_task() {
        let found = offending("grading", &["task"]);
        assert!(found.is_empty(), "{}", found.join("\n"));
    }
}
