//! coder-eval: evaluates coding-agent CLIs.
//!
//! The data flow, one module per stage: a task file ([`task`], its limits in [`limits`])
//! → a harness component's launch plan ([`runtime::harness`], resolved by [`components`])
//! → one turn, live or replayed ([`turn`]: spawn and record, reduce, collect, finish) →
//! grading ([`grading`]) → the documented machine output ([`results`]). [`run`] drives a
//! suite of tasks through those stages; components run in the sandbox of [`runtime`].
//!
//! The public surface is what the `coder-eval` binary, the workspace tests (`tests/all`)
//! and the benchmarks (`host/benches`) name; everything else is `pub(crate)`. The test
//! `surface_tests::every_pub_item_is_used_outside_the_library` keeps it so: it fails on
//! each `pub` item (inherent methods included) that none of them names, unless it is in
//! its allowlist with a reason (the types in a public signature; the serde types of
//! `results/`). The `unreachable_pub` lint (a warning; clippy's `-D warnings` makes it an
//! error) catches a `pub` inside a `pub(crate)` item; it cannot see past a `pub mod`.

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

/// The library's public surface is deliberate: every `pub` item is named by a user of the
/// library (the binary, the workspace tests, the benchmarks) or allowlisted with a reason.
#[cfg(test)]
mod surface_tests {
    use std::collections::HashSet;
    use std::path::{Path, PathBuf};

    /// Items that stay `pub` though no user of the library names them, each with why: each
    /// is a type in the signature of a `pub` item that a user does name (a returned error, a
    /// field's type, a parameter), which rustc's `private_interfaces` lint wants as public as
    /// that item.
    const STAY_PUB: &[(&str, &str)] = &[
        ("AddedHarness", "in pub `ComponentSource::added_harnesses`"),
        ("AgentRunner", "in pub `grade`"),
        ("AgentSpec", "in pub `Task::agent`"),
        ("ApiUsage", "in pub `ModelCall::usage`"),
        ("ArmedSpec", "in pub `LivePlan::armed`"),
        (
            "Budgets",
            "in pub `Gateway::budgets`, `GatewayConfig::budgets`…",
        ),
        ("BudgetsHeader", "in pub `Header::budgets`"),
        ("BuiltinHarness", "in pub `BUILTIN_HARNESSES`"),
        ("CliMissing", "in pub `find_cli`"),
        ("CommandEnv", "in pub `grade`"),
        (
            "Decidability",
            "in pub `Arming::decidability`, `LiveInstance::decidability`",
        ),
        ("Described", "in pub `describe`, `describe_with`"),
        ("DockerBuild", "in pub `DockerSpec::build`"),
        (
            "DockerSpecError",
            "in pub `DockerSpec::validate`, `Spec(..)`",
        ),
        ("Env", "in pub `grade`"),
        (
            "ExecOutput",
            "in pub `DockerExec::stderr`, `DockerExec::stdout`",
        ),
        (
            "ExperimentError",
            "in pub `Experiment::load`, `Experiment::parse`…",
        ),
        ("GatewayError", "in pub `Gateway::start`"),
        ("Gathered", "in pub `gather`"),
        ("HarnessCapabilities", "in pub `Described::caps`"),
        ("Header", "in pub `read_header`"),
        ("HeldCall", "in pub `HeldCall(..)`"),
        ("ImageReady", "in pub `DockerSandbox::image`"),
        ("JudgeOutcome", "in pub `grade`"),
        ("JudgeRun", "in pub `AgentRunner::run_judge`"),
        ("JudgeRunRequest", "in pub `AgentRunner::run_judge`"),
        ("Judges", "in pub `grade`"),
        ("LivePlan", "in pub `Prepared::live`, `arm`…"),
        ("LiveVerdict", "in pub `LiveWatcher::observe`"),
        ("LoadedFile", "in pub `Task::load_file`, `Task::parse_file`"),
        ("LockError", "in pub `lock_folder`, `lock_merge_folder`…"),
        ("MergeError", "in pub `ShardRecord::read`, `copy_tree`…"),
        ("Metrics", "in pub `Step::metrics`"),
        ("NodeEnv", "in pub `SandboxSpec::node`"),
        ("OtlpError", "in pub `check_endpoint`, `send`"),
        ("Outcome", "in pub `grade`"),
        ("Params", "in pub `grade`, `parse`"),
        ("PlanError", "in pub `Plan::read`"),
        ("PluginError", "in pub `read_dir`, `register`…"),
        ("PluginKind", "in pub `PluginSpec::kind`"),
        ("PluginSpec", "in pub `AgentSpec::plugins`"),
        ("Price", "in pub `PriceTable::models`"),
        (
            "PriceError",
            "in pub `PriceTable::load`, `PriceTable::parse`",
        ),
        ("Problem", "in pub `Problem(..)`"),
        ("PythonEnv", "in pub `SandboxSpec::python`"),
        ("RecordedStop", "in pub `Stop(..)`"),
        ("RecordingError", "in pub `Recording(..)`, `read_header`"),
        ("RegradeError", "in pub `regrade`"),
        ("ReplayedSession", "in pub `replay_sessions`"),
        ("Reporting", "in pub `reporting`"),
        (
            "ResumeError",
            "in pub `Invocation::enter`, `Invocation::read`",
        ),
        ("RetryPolicy", "in pub `RunOptions::retry`"),
        (
            "RetrySpec",
            "in pub `RunOptions::retry_given`, `Task::retry`…",
        ),
        ("RunLimitsSpec", "in pub `Task::run_limits`, `plan`"),
        ("SandboxLimits", "in pub `SandboxSpec::limits`"),
        ("SandboxSpec", "in pub `Task::sandbox`"),
        ("Sent", "in pub `send`"),
        ("SessionHeader", "in pub `Header::session`"),
        ("ShardError", "in pub `Shard::from_env`, `Shard::new`…"),
        ("Snapshot", "in pub `Progress::snapshot`"),
        ("Split", "in pub `split`"),
        ("StampedLine", "in pub `Line(..)`, `Truncated(..)`"),
        ("Step", "in pub `Trajectory::steps`, `Task::pre_run`"),
        ("TaskError", "in pub `Task(..)`, `Task::load`…"),
        ("TaskVerdict", "in pub `grade`"),
        ("ThinkingLevel", "in pub `AgentSpec::thinking_level`"),
        ("ToolCall", "in pub `Step::tool_calls`"),
        ("Trajectory", "in pub `atif::trajectory`"),
        ("Twice", "in pub `interrupt::listen`"),
        ("Unfit", "in pub `AgentField::source`"),
        ("UnhonouredField", "in pub `Field(..)`"),
        ("Unit", "in pub `load`, `send`"),
        ("Variant", "in pub `Experiment::variants`"),
    ];

    /// Folders (under `host/src`) whose types and constants stay `pub`, each with why; their
    /// functions are checked like any other.
    const SCHEMA_DIRS: &[(&str, &str)] = &[(
        "results/",
        "the documented machine output's serde types and versions, for outside tools",
    )];

    /// Every `.rs` file under `dir`, recursively.
    fn rs_files(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                rs_files(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }

    /// The identifiers in `text` (words of letters, digits and `_`).
    fn words(text: &str) -> impl Iterator<Item = &str> {
        text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .filter(|w| !w.is_empty())
    }

    /// `text` without its `//` comments, string literals and char literals (a name in a
    /// comment or a message does not use an item). Approximate: raw strings with `"` inside
    /// are not recognised (none of the users has one that matters).
    fn code_only(text: &str) -> String {
        let bytes = text.as_bytes();
        let mut out = String::with_capacity(text.len());
        let mut i = 0;
        while i < bytes.len() {
            match bytes[i] {
                b'/' if bytes.get(i + 1) == Some(&b'/') => {
                    i = text[i..].find('\n').map_or(bytes.len(), |at| i + at);
                }
                b'"' => {
                    i += 1;
                    while i < bytes.len() && bytes[i] != b'"' {
                        i += if bytes[i] == b'\\' { 2 } else { 1 };
                    }
                    i += 1;
                    out.push(' ');
                }
                b'\'' if bytes.get(i + 2) == Some(&b'\'') => {
                    i += 3;
                    out.push(' ');
                }
                b'\'' if bytes.get(i + 1) == Some(&b'\\') => {
                    i = text[i + 2..]
                        .find('\'')
                        .map_or(bytes.len(), |at| i + 2 + at + 1);
                    out.push(' ');
                }
                _ => {
                    let c = text[i..].chars().next().unwrap();
                    out.push(c);
                    i += c.len_utf8();
                }
            }
        }
        out
    }

    /// The name a line declares if it declares a `pub` item (not `pub(crate)`, `pub(super)`,
    /// `pub(in …)`, not a field): `pub [const|async|unsafe|extern "…"] fn|struct|enum|trait|
    /// type|const|static [mut]|mod|union NAME`. A `pub fn` inside an `impl` block counts too
    /// (a trait impl's items cannot be `pub`, so each is an inherent method).
    fn declared(line: &str) -> Option<(&str, &str)> {
        let rest = line.trim_start().strip_prefix("pub ")?;
        let mut tokens = rest.split_whitespace().peekable();
        while let Some(token) = tokens.next() {
            match token {
                "async" | "unsafe" | "extern" | "mut" => continue,
                t if t.starts_with('"') => continue,
                "const"
                    if tokens
                        .peek()
                        .is_some_and(|t| ["fn", "async", "unsafe"].contains(t)) =>
                {
                    continue;
                }
                "fn" | "struct" | "enum" | "trait" | "type" | "const" | "static" | "mod"
                | "union" => {
                    let mut next = tokens.next()?;
                    if next == "mut" {
                        next = tokens.next()?;
                    }
                    let end = next
                        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                        .unwrap_or(next.len());
                    return Some((token, &next[..end])).filter(|(_, n)| !n.is_empty());
                }
                _ => return None,
            }
        }
        None
    }

    /// The `pub` items of the library that no user of it names: `file:line: name`. Skips the
    /// tests (a `tests.rs`, a `tests/` folder, `tests_*.rs`, everything after a file's
    /// `#[cfg(test)]` module, an item under `#[cfg(test)]`).
    #[test]
    fn every_pub_item_is_used_outside_the_library() {
        let host = Path::new(env!("CARGO_MANIFEST_DIR"));
        let root = host.parent().unwrap();
        let src = host.join("src");
        // The users: the binary (`main.rs` and `cli/`), the workspace tests, the benchmarks.
        let mut users = vec![src.join("main.rs")];
        for dir in [
            src.join("cli"),
            root.join("tests/all"),
            host.join("benches"),
        ] {
            rs_files(&dir, &mut users);
        }
        let mut used = HashSet::new();
        let texts: Vec<String> = users
            .iter()
            .map(|f| code_only(&std::fs::read_to_string(f).unwrap()))
            .collect();
        for text in &texts {
            used.extend(words(text));
        }
        let mut library = Vec::new();
        rs_files(&src, &mut library);
        library.retain(|f| {
            let rel = f.strip_prefix(&src).unwrap();
            let name = rel.file_name().unwrap().to_string_lossy();
            !rel.starts_with("cli")
                && rel != Path::new("main.rs")
                && name != "tests.rs"
                && !name.starts_with("tests_")
                && !rel.components().any(|c| c.as_os_str() == "tests")
        });
        library.sort();
        let allowed: HashSet<&str> = STAY_PUB.iter().map(|(name, _)| *name).collect();
        let mut unused = Vec::new();
        let mut allowlisted = HashSet::new();
        for file in &library {
            let text = std::fs::read_to_string(file).unwrap();
            let mut under_cfg_test = false;
            let mut in_test_module = false;
            for (n, line) in text.lines().enumerate() {
                // A top-level `#[cfg(test)] mod … {` runs to the next `}` in column 0.
                if in_test_module {
                    in_test_module = line != "}";
                    continue;
                }
                if under_cfg_test && line.starts_with("mod ") && line.ends_with('{') {
                    in_test_module = true;
                    continue;
                }
                if let Some((kind, name)) = declared(line) {
                    let schema = kind != "fn"
                        && SCHEMA_DIRS
                            .iter()
                            .any(|(dir, _)| file.strip_prefix(&src).unwrap().starts_with(dir));
                    if !under_cfg_test && !used.contains(name) && allowed.contains(name) {
                        allowlisted.insert(name.to_string());
                    }
                    if !under_cfg_test && !used.contains(name) && !allowed.contains(name) && !schema
                    {
                        let rel = file.strip_prefix(root).unwrap();
                        unused.push(format!("{}:{}: {name}", rel.display(), n + 1));
                    }
                }
                let trimmed = line.trim_start();
                if trimmed.starts_with("#[cfg(test)]") {
                    under_cfg_test = true;
                } else if !trimmed.starts_with("#[") && !trimmed.starts_with("//") {
                    under_cfg_test = false;
                }
            }
        }
        assert!(
            unused.is_empty(),
            "{} `pub` items are named by no user of the library (the binary, tests/all, \
             host/benches): make each `pub(crate)`, or add it to STAY_PUB with a reason:\n{}",
            unused.len(),
            unused.join("\n")
        );
        let stale: Vec<&str> = allowed
            .into_iter()
            .filter(|name| !allowlisted.contains(*name))
            .collect();
        assert!(
            stale.is_empty(),
            "STAY_PUB names items that are used outside the library or gone: {stale:?}"
        );
    }

    /// `code_only` drops comments and literals, keeps code.
    #[test]
    fn code_only_keeps_code() {
        let text = "let a = b; // c\nf(\"d \\\" e\", 'g', '\\n', x::<'a>) // h";
        let kept: Vec<String> = words(&code_only(text)).map(String::from).collect();
        assert_eq!(kept, ["let", "a", "b", "f", "x", "a"]);
    }

    /// `declared` reads each item kind, and not a field, a re-export or a narrower `pub`.
    #[test]
    fn declared_parses_the_item_kinds() {
        let cases = [
            ("pub fn run(x: u8) {", Some(("fn", "run"))),
            ("    pub async fn go<T>()", Some(("fn", "go"))),
            ("pub const fn size() -> usize", Some(("fn", "size"))),
            ("pub const MAX: u8 = 1;", Some(("const", "MAX"))),
            ("pub static mut N: u8 = 0;", Some(("static", "N"))),
            ("pub struct Plan {", Some(("struct", "Plan"))),
            ("pub enum Kind<'a> {", Some(("enum", "Kind"))),
            ("pub(crate) fn hidden()", None),
            ("    pub name: String,", None),
            ("pub use crate::x::Y;", None),
            ("pub mod shell;", Some(("mod", "shell"))),
            (
                "pub unsafe extern \"C\" fn handler()",
                Some(("fn", "handler")),
            ),
        ];
        for (line, want) in cases {
            assert_eq!(declared(line), want, "{line}");
        }
    }
}
