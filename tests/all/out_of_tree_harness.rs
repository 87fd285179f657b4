//! A harness shipped out of tree (`examples/harness/droid`): built by its script after the
//! host binary, from its own `Cargo.toml`, into a folder that `--components` loads; listed
//! by `coder-eval harnesses`, and run through the live parity scenarios on the real Droid
//! CLI against the scripted model, with the same checks as the built-in harnesses.

use crate::live_scenarios::{SCENARIOS, assert_scenario, parity_view, run_matrix_of};
use crate::support::{bin, captures, main_calls, root, scratch, tools};
use coder_eval::results::{ToolOutcome, TurnStatus};
use coder_eval::turn::replay::{ReplayOptions, replay};
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The host's target folder (the test executable is `<target>/debug/deps/all-*`).
fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.ancestors().nth(3).unwrap().to_path_buf()
}

/// `examples/harness/build.sh droid OUT`, with the test's cargo environment removed (as a
/// user's shell would have it); returns `OUT/droid.wasm`.
fn build_droid(out: &Path) -> PathBuf {
    let mut cmd = Command::new("bash");
    cmd.arg(root().join("examples/harness/build.sh"))
        .arg("droid")
        .arg(out);
    for (key, _) in std::env::vars_os() {
        let key = key.to_string_lossy().into_owned();
        if key.starts_with("CARGO_") && key != "CARGO_HOME" || key == "RUSTFLAGS" {
            cmd.env_remove(&key);
        }
    }
    // Its own target folder beside the host's, kept between runs.
    cmd.env("CARGO_TARGET_DIR", target_dir());
    let status = cmd.status().unwrap();
    assert!(status.success(), "examples/harness/build.sh droid failed");
    out.join("droid.wasm")
}

/// The folder holding `droid.wasm`, built once per test process (after the host binary,
/// which cargo built before any test ran).
fn droid_components() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = scratch("out-of-tree-components");
        build_droid(&dir);
        dir
    })
}

fn droid_installed() -> bool {
    coder_eval::locate::is_installed("droid")
}

#[test]
fn built_after_the_host_and_run_live() {
    if !droid_installed() {
        eprintln!("skipped: droid is not installed (scripts/setup.sh installs it)");
        return;
    }
    let host = bin();
    // The host knows no `droid` harness of its own.
    let plain = Command::new(&host).arg("harnesses").output().unwrap();
    let plain = String::from_utf8_lossy(&plain.stdout);
    assert!(!plain.contains("droid"), "{plain}");

    let base = scratch("out-of-tree-droid");
    let components = droid_components().to_path_buf();
    let wasm = components.join("droid.wasm");
    let built = |p: &Path| std::fs::metadata(p).unwrap().modified().unwrap();
    assert!(
        built(&host) <= built(&wasm),
        "the component is built after the host binary"
    );

    // Listed, with its program found among the pinned CLIs.
    let listed = Command::new(&host)
        .args(["harnesses", "--components"])
        .arg(&components)
        .output()
        .unwrap();
    let listed = String::from_utf8_lossy(&listed.stdout);
    let row = listed
        .lines()
        .find(|l| l.starts_with("droid "))
        .unwrap_or_else(|| panic!("droid not listed:\n{listed}"));
    assert!(
        row.contains("droid") && row.contains("node_modules/.bin/droid"),
        "{row}"
    );
    assert!(listed.contains(&wasm.display().to_string()), "{listed}");
    let parity = Command::new(&host)
        .args(["harnesses", "--parity", "--components"])
        .arg(&components)
        .output()
        .unwrap();
    let parity = String::from_utf8_lossy(&parity.stdout);
    assert!(
        parity.contains("| droid | host-enforced | host-enforced | host-enforced | none |"),
        "{parity}"
    );

    // The parity scenarios, checked as on the built-in harnesses.
    let out = base.join("runs");
    let results = run_matrix_of(
        &out,
        2,
        &["droid"],
        &[OsStr::new("--components"), components.as_os_str()],
    );
    let expected = [
        (
            "hello",
            "num_turns=3 tools=[Ok, Ok] max_turns_exhausted=false status=Success",
        ),
        (
            "parallel",
            "num_turns=2 tools=[Ok, Ok] max_turns_exhausted=false status=Success",
        ),
        (
            "max_turns",
            "num_turns=3 tools=[Ok, Ok] max_turns_exhausted=true status=Success",
        ),
        (
            "tool_error",
            "num_turns=2 tools=[Error] max_turns_exhausted=false status=Success",
        ),
        (
            "long_shell",
            "num_turns=2 tools=[Ok] max_turns_exhausted=false status=Success",
        ),
    ];
    assert_eq!(expected.len(), SCENARIOS.len());
    for (scenario, view) in expected {
        let r = &results[&(scenario.to_string(), "droid".to_string())];
        assert_eq!(parity_view(scenario, r), view, "{scenario}");
        assert!(
            r.turn.as_ref().unwrap().component.ends_with("droid.wasm"),
            "{scenario}: {}",
            r.turn.as_ref().unwrap().component
        );
        assert_scenario(&out, scenario, "droid", r, Some(&components));
    }
}

/// Golden replay of the Droid recordings (`tests/corpus/live/droid`, Droid 0.225.2) through
/// the out-of-tree component: each pinned by an insta snapshot, and the shared scenarios'
/// counts.
#[test]
fn droid_recordings_replay_through_the_out_of_tree_component() {
    let components = droid_components();
    let replay_of = |path: &Path| {
        let mut options = ReplayOptions::new("droid");
        options.components.dir = Some(components.to_path_buf());
        replay(path, &options).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    };
    let mut count = 0;
    for path in captures("live/droid") {
        count += 1;
        let mut record = replay_of(&path);
        assert!(record.reducer_error.is_none(), "{}", path.display());
        assert!(
            record.component.ends_with("droid.wasm"),
            "{}",
            record.component
        );
        // The component's path is the scratch folder's: not part of the snapshot.
        record.component = "droid.wasm".into();
        let name = format!("droid__{}", path.file_stem().unwrap().to_str().unwrap());
        insta::assert_json_snapshot!(name, record);
    }
    assert_eq!(count, 4, "hello, parallel, tool_error, probe_hello");

    let r = replay_of(&crate::support::corpus("live/droid/hello.jsonl"));
    assert_eq!((r.num_turns, main_calls(&r)), (3, 3));
    assert_eq!(
        tools(&r),
        [("Create", ToolOutcome::Ok), ("Execute", ToolOutcome::Ok)]
    );
    assert_eq!(r.commands, ["date"]);
    assert_eq!(r.usage.unwrap().input_tokens, 24187);
    assert_eq!(r.usage.unwrap().output_tokens, 42);
    assert_eq!(r.cost_usd, None);
    assert_eq!(r.final_status, TurnStatus::Completed);
    assert!(r.diagnostics.is_empty(), "{:?}", r.diagnostics);

    let r = replay_of(&crate::support::corpus("live/droid/parallel.jsonl"));
    assert_eq!((main_calls(&r), r.tool_calls.len()), (2, 2));
    let r = replay_of(&crate::support::corpus("live/droid/tool_error.jsonl"));
    assert_eq!(r.tool_calls[0].status, ToolOutcome::Error);
    assert_eq!(r.tool_calls[0].exit_code, Some(2));
}

/// A `--components` folder with a component whose `describe` traps (the recurser) and a
/// file that is no component: `harnesses` still lists every other harness (built-in and
/// added), marks the two as failed in each form (table, `--json`, `--parity`), says so on
/// stderr, and exits 2 after printing. A criterion component in the folder is no harness
/// and is left out.
#[test]
fn harnesses_lists_the_others_when_a_component_fails() {
    use crate::support::test_component;
    let dir = scratch("harnesses-bad-component");
    let recursing = dir.join("recursing.wasm");
    std::fs::copy(test_component("test_recurser.wasm"), &recursing).unwrap();
    let junk = dir.join("junk.wasm");
    std::fs::write(&junk, b"\0asm not really").unwrap();
    std::fs::copy(test_component("test_tagger.wasm"), dir.join("tagged.wasm")).unwrap();
    std::fs::copy(
        test_component("test_grader_panic.wasm"),
        dir.join("mycheck.wasm"),
    )
    .unwrap();
    let harnesses = |extra: &[&str]| {
        let out = Command::new(bin())
            .arg("harnesses")
            .args(extra)
            .arg("--components")
            .arg(&dir)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };

    // The table: a line per failed harness naming its file and the error.
    let (code, table, stderr) = harnesses(&[]);
    assert_eq!(code, Some(2), "{table}\n{stderr}");
    let line = |name: &str| {
        table
            .lines()
            .find(|l| l.starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("{name} not listed:\n{table}"))
            .to_string()
    };
    for builtin in ["claude-code", "codex", "pi"] {
        assert!(!line(builtin).contains("failed"), "{table}");
    }
    assert!(!line("tagged").contains("failed"), "{table}");
    let failed = line("recursing");
    assert!(
        failed.contains(&format!("component {} failed: ", recursing.display())),
        "{failed}"
    );
    assert!(failed.contains("trapped in"), "{failed}");
    assert!(failed.contains("out of bounds memory access"), "{failed}");
    let failed = line("junk");
    assert!(
        failed.contains(&format!("component {} failed: ", junk.display())),
        "{failed}"
    );
    assert!(
        failed.contains("is not a valid WebAssembly component"),
        "{failed}"
    );
    assert!(
        !table.contains("mycheck"),
        "a criterion is no harness:\n{table}"
    );
    for name in ["recursing", "junk"] {
        assert!(
            stderr.contains(&format!("error: harness `{name}` (component ")),
            "{stderr}"
        );
    }

    // --json: a row with `error` for each failed one, full rows for the others.
    let (code, json, stderr) = harnesses(&["--json"]);
    assert_eq!(code, Some(2), "{stderr}");
    let rows: Vec<serde_json::Value> = serde_json::from_str(&json).unwrap();
    let row = |name: &str| {
        rows.iter()
            .find(|r| r["harness"] == name)
            .unwrap_or_else(|| panic!("{name} not in:\n{json}"))
    };
    assert!(row("claude-code")["error"].is_null(), "{json}");
    assert!(row("claude-code")["limits"].is_object(), "{json}");
    assert!(row("tagged")["error"].is_null(), "{json}");
    for name in ["recursing", "junk"] {
        let r = row(name);
        assert!(r["error"].as_str().is_some_and(|e| !e.is_empty()), "{r}");
        assert!(
            r["component"]
                .as_str()
                .unwrap()
                .ends_with(&format!("{name}.wasm")),
            "{r}"
        );
    }

    // --parity: each table's row says the component failed.
    let (code, parity, stderr) = harnesses(&["--parity"]);
    assert_eq!(code, Some(2), "{stderr}");
    let prefix = format!(
        "| recursing | the component {} failed: ",
        recursing.display()
    );
    assert_eq!(
        parity.lines().filter(|l| l.starts_with(&prefix)).count(),
        3,
        "{parity}"
    );
    assert!(parity.contains("| claude-code | "), "{parity}");
    assert!(parity.contains("| tagged | "), "{parity}");
}

/// A `--components` entry that is not a readable component file fails naming itself: a
/// broken symlink in a built-in harness's name (it never falls back to the built-in), a
/// FIFO (never read, so never waited on) and a multi-line error (one table line).
#[test]
fn odd_component_files_fail_naming_themselves() {
    let dir = scratch("harnesses-odd-files");
    let broken = dir.join("claude-code.wasm");
    std::os::unix::fs::symlink(dir.join("missing.wasm"), &broken).unwrap();
    let fifo = dir.join("piped.wasm");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let out = Command::new(bin())
        .args(["replay", "--harness", "claude-code", "--components"])
        .arg(&dir)
        .arg(root().join("tests/corpus/live/claude/hello.jsonl"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains(&broken.display().to_string()), "{stderr}");
    // `harnesses` returns (the FIFO is not opened) and keeps each error on one line.
    let out = Command::new(bin())
        .args(["harnesses", "--components"])
        .arg(&dir)
        .output()
        .unwrap();
    let table = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "{table}");
    for (name, file) in [("claude-code", &broken), ("piped", &fifo)] {
        let line = table
            .lines()
            .find(|l| l.starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("{name} not listed:\n{table}"));
        assert!(
            line.contains(&format!("component {} failed: ", file.display())),
            "{line}"
        );
    }
    assert!(table.contains("not a regular file"), "{table}");
}
