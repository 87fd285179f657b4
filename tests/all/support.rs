//! Helpers shared by the test modules.

mod command;
mod folder;

use coder_eval::results::{ToolOutcome, TurnRecord};
pub use command::{
    executable, isolate, pid_namespace_available, run_isolated, show, summary, task_json,
};
pub use folder::{Folder, exits};
use std::path::{Path, PathBuf};

/// The repository root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// A file of the recorded corpus (`tests/corpus/...`).
pub fn corpus(rel: &str) -> PathBuf {
    root().join("tests/corpus").join(rel)
}

/// The stdout captures (`*.jsonl`, not `*.requests.jsonl`) in a corpus folder, sorted.
pub fn captures(rel_dir: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(corpus(rel_dir))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_str().unwrap();
            name.ends_with(".jsonl") && !name.ends_with(".requests.jsonl")
        })
        .collect();
    files.sort();
    files
}

/// A test component built by host/build.rs.
pub fn test_component(file: &str) -> PathBuf {
    Path::new(env!("CODER_EVAL_TEST_COMPONENTS_DIR")).join(file)
}

/// A fresh scratch folder for one test.
pub fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("coder-eval-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The `coder-eval` binary under test: the one cargo built, or `CODER_EVAL_TEST_BIN`
/// when set (to run the binary-driven tests against another build, e.g. to show that a
/// test fails on an older one).
pub fn bin() -> PathBuf {
    std::env::var_os("CODER_EVAL_TEST_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_coder-eval")))
}

/// Main-thread model calls of a turn.
pub fn main_calls(r: &TurnRecord) -> usize {
    r.model_calls
        .iter()
        .filter(|c| c.main_index.is_some())
        .count()
}

/// (name, outcome) of each tool call of a turn.
pub fn tools(r: &TurnRecord) -> Vec<(&str, ToolOutcome)> {
    r.tool_calls
        .iter()
        .map(|t| (t.name.as_str(), t.status))
        .collect()
}

/// The kinds of a turn's diagnostics, in order.
pub fn diagnostic_kinds(r: &TurnRecord) -> Vec<&str> {
    r.diagnostics.iter().map(|d| d.kind.as_str()).collect()
}

/// Which launches of a [`stand_in_claude`] crash.
pub enum Crash<'a> {
    /// These launch numbers (1-based); the others run the real Claude Code CLI.
    Launches(&'a [u32]),
    /// Every launch (the real CLI never runs).
    Every,
}

/// A stand-in for `claude` at `path`, for tests of infrastructure retries: each
/// `--version` probe appends a line to `<dir>/versions` and answers `stand-in 1.0`; each
/// launch appends a line to `<dir>/launches`; a launch that `crash` names sleeps `sleep`
/// seconds, says `stand-in: crashed before the first model call` on stderr and exits 3
/// before any model call (an infrastructure error); any other launch runs the real
/// Claude Code CLI (`harnesses/node_modules/.bin/claude`).
pub fn stand_in_claude(path: &Path, dir: &Path, crash: Crash, sleep: u32) {
    let real = root().join("harnesses/node_modules/.bin/claude");
    let pattern = match crash {
        Crash::Every => "*".to_string(),
        Crash::Launches([]) => "0".to_string(),
        Crash::Launches(n) => n.iter().map(u32::to_string).collect::<Vec<_>>().join("|"),
    };
    executable(
        path,
        &format!(
            "#!/bin/bash\nif [ \"$1\" = \"--version\" ]; then echo v >> {d}/versions; echo \"stand-in 1.0\"; exit 0; fi\necho l >> {d}/launches\nn=$(wc -l < {d}/launches)\ncase \"$n\" in {pattern}) sleep {sleep}; echo 'stand-in: crashed before the first model call' >&2; exit 3;; esac\nexec {real} \"$@\"\n",
            d = dir.display(),
            real = real.display()
        ),
    );
}

/// How many lines `path` has (0 when it does not exist): a stand-in's launches or probes.
pub fn lines(path: &Path) -> usize {
    std::fs::read_to_string(path).map_or(0, |t| t.lines().count())
}
