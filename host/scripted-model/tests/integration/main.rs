//! Integration tests of the scripted model: every request goes over loopback TCP to a
//! server started in the test, with request shapes modelled on what each CLI sends.

mod anthropic;
mod chat;
mod common;
mod gemini;
mod hostile;
mod misc;
mod responses;
mod script;
mod threads;

/// Every test file of this folder is a module above: an unlisted one would never run.
#[test]
fn every_test_file_is_listed() {
    let main = include_str!("main.rs");
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/integration");
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "rs") {
            let stem = path.file_stem().unwrap().to_str().unwrap();
            assert!(
                stem == "main" || main.contains(&format!("mod {stem};")),
                "tests/integration/{stem}.rs is not listed in main.rs"
            );
        }
    }
}
