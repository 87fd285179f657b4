//! Builds the WebAssembly components (`components/`, a workspace of its own) for
//! `wasm32-wasip2` and tells the host where they are:
//!
//! - `CODER_EVAL_COMPONENTS_DIR`: the folder holding every built `.wasm`;
//! - the default harness and grader components are embedded from there with
//!   `include_bytes!` (see `src/components.rs`).
//!
//! The nested build uses its own target folder, `components/` inside the host's target
//! folder (`$CARGO_TARGET_DIR`, else `<repo>/target`; `CODER_EVAL_COMPONENTS_TARGET`
//! overrides it), so it never waits on the outer cargo's lock, and a clean environment so
//! the host's flags do not leak into it.

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    let manifest_dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let root = manifest_dir.parent().unwrap().to_path_buf();
    // `CODER_EVAL_COMPONENTS_SRC` builds the components from another checkout of
    // `components/` (with its `wit/` beside it), e.g. a snapshot of the last commit.
    println!("cargo:rerun-if-env-changed=CODER_EVAL_COMPONENTS_SRC");
    let components = std::env::var_os("CODER_EVAL_COMPONENTS_SRC")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("components"));
    println!("cargo:rerun-if-changed={}", components.display());
    println!(
        "cargo:rerun-if-changed={}",
        components.parent().unwrap().join("wit").display()
    );

    let target_dir = std::env::var_os("CODER_EVAL_COMPONENTS_TARGET")
        .map(PathBuf::from)
        .unwrap_or_else(|| outer_target_dir(&root).join("components"));
    println!("cargo:rerun-if-env-changed=CODER_EVAL_COMPONENTS_TARGET");

    // Product components, then test components (hostile reducers, a tagging variant, a
    // wrong-version one) in a target folder of their own: the test variants wrap the
    // Claude Code harness with its export turned off, and features must not unify.
    let product = target_dir.join("product");
    let tests = target_dir.join("tests");
    cargo_build(
        &components,
        &product,
        &["--workspace", "--exclude", "test-*"],
    );
    // Each folder `test-components/NAME` is the package `test-NAME`.
    let mut names: Vec<String> = std::fs::read_dir(components.join("test-components"))
        .expect("components/test-components exists")
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let mut args = Vec::new();
    for name in names {
        args.push("-p".to_string());
        args.push(format!("test-{name}"));
    }
    cargo_build(
        &components,
        &tests,
        &args.iter().map(String::as_str).collect::<Vec<_>>(),
    );

    let out = product.join("wasm32-wasip2").join("release");
    check_built(&out, "claude_code_harness.wasm");
    println!(
        "cargo:rustc-env=CODER_EVAL_COMPONENTS_DIR={}",
        out.display()
    );
    let test_out = tests.join("wasm32-wasip2").join("release");
    println!(
        "cargo:rustc-env=CODER_EVAL_TEST_COMPONENTS_DIR={}",
        test_out.display()
    );
}

/// The host's own target folder, wherever `CARGO_TARGET_DIR`, `--target-dir` or a cargo
/// config put it: the ancestor of `OUT_DIR` that cargo marked with `CACHEDIR.TAG`
/// (`<target>/<profile>/build/<pkg>-<hash>/out`), else `<repo>/target`.
fn outer_target_dir(root: &Path) -> PathBuf {
    std::env::var_os("OUT_DIR")
        .map(PathBuf::from)
        .and_then(|out| {
            out.ancestors()
                .skip(1)
                .find(|dir| dir.join("CACHEDIR.TAG").is_file())
                .map(Path::to_path_buf)
        })
        .unwrap_or_else(|| root.join("target"))
}

/// `cargo build --release --target wasm32-wasip2 ARGS` in `dir`, into `target_dir`, with
/// the outer build's environment removed.
fn cargo_build(dir: &Path, target_dir: &Path, args: &[&str]) {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(dir)
        .args(["build", "--release", "--target", "wasm32-wasip2"])
        .args(args)
        .arg("--target-dir")
        .arg(target_dir);
    for (key, _) in std::env::vars_os() {
        let key = key.to_string_lossy().into_owned();
        if key.starts_with("CARGO_") && key != "CARGO_HOME" || key == "RUSTFLAGS" {
            cmd.env_remove(&key);
        }
    }
    for key in [
        "RUSTC_WRAPPER",
        "RUSTC_WORKSPACE_WRAPPER",
        "RUSTC",
        "RUSTDOC",
    ] {
        cmd.env_remove(key);
    }
    let status = cmd
        .status()
        .expect("could not start cargo for the components");
    if !status.success() {
        panic!(
            "building the components for wasm32-wasip2 failed (see above). \
             If the target is missing: `rustup target add wasm32-wasip2`."
        );
    }
}

fn check_built(dir: &Path, file: &str) {
    let path = dir.join(file);
    assert!(
        path.exists(),
        "expected component {} after the build",
        path.display()
    );
}
