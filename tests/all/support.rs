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

/// A fresh scratch folder for one test. Folders of this test process stay after it
/// ends (to look into a failure); the first call removes those of earlier test processes
/// that are gone ([`sweep_dead_scratch`]), so they never pile up in the host's `/tmp`.
pub fn scratch(name: &str) -> PathBuf {
    static SWEPT: std::sync::Once = std::sync::Once::new();
    SWEPT.call_once(|| sweep_dead_scratch(&std::env::temp_dir()));
    let dir = std::env::temp_dir().join(format!("coder-eval-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Removes the `coder-eval-test-<pid>-…` folders in `tmp` whose test process `<pid>` is
/// no longer running (a live Copilot scenario alone leaves 1.2 GB; 17 GB had piled up
/// here). Best effort: what cannot be removed stays.
pub fn sweep_dead_scratch(tmp: &Path) {
    let Ok(entries) = std::fs::read_dir(tmp) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix("coder-eval-test-"))
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
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

#[test]
fn scratch_folders_of_finished_test_processes_are_swept_and_live_ones_kept() {
    let tmp = scratch("sweep");
    let mut gone = std::process::Command::new("true").spawn().unwrap();
    let dead = gone.id();
    gone.wait().unwrap();
    let own = std::process::id();
    for name in [
        format!("coder-eval-test-{dead}-old"),
        format!("coder-eval-test-{own}-mine"),
        "coder-eval-test-1-init".to_string(),
        format!("other-{dead}"),
    ] {
        std::fs::create_dir_all(tmp.join(name).join("inside")).unwrap();
    }
    sweep_dead_scratch(&tmp);
    let mut left: Vec<String> = std::fs::read_dir(&tmp)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    left.sort();
    let mut want = vec![
        "coder-eval-test-1-init".to_string(),
        format!("coder-eval-test-{own}-mine"),
        format!("other-{dead}"),
    ];
    want.sort();
    assert_eq!(left, want);
}
