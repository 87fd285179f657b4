//! A test's scratch folder as a fixture: the files a test writes into it and the
//! `coder-eval` commands it runs there, so that a test states only its inputs and its
//! checks.

use super::{bin, scratch, show};
use std::ops::Deref;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A fresh folder of one test (see [`scratch`]); derefs to its path.
pub struct Folder(PathBuf);

impl Folder {
    /// A fresh, empty folder for the test `name`.
    pub fn new(name: &str) -> Folder {
        Folder(scratch(name))
    }

    /// The folder `rel` inside this one, created (with its parents) if missing.
    pub fn sub(&self, rel: &str) -> Folder {
        let dir = self.0.join(rel);
        std::fs::create_dir_all(&dir).unwrap();
        Folder(dir)
    }

    /// Writes `text` to the file `rel` inside the folder, creating its parent folders;
    /// returns the file's path.
    pub fn write(&self, rel: &str, text: &str) -> PathBuf {
        let path = self.0.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::fs::write(&path, text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        path
    }

    /// `coder-eval ARGS`, run in this folder without a network namespace (for what is
    /// refused before anything runs, or needs no network); waited for.
    pub fn run(&self, args: &[&str]) -> Output {
        Command::new(bin())
            .current_dir(&self.0)
            .args(args)
            .output()
            .expect("coder-eval runs")
    }
}

impl Deref for Folder {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for Folder {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<std::ffi::OsStr> for Folder {
    fn as_ref(&self) -> &std::ffi::OsStr {
        self.0.as_os_str()
    }
}

/// Asserts that the command `o` exited with `code` (showing its output if not) and
/// returns its stderr, decoded lossily.
pub fn exits(o: &Output, code: i32) -> String {
    assert_eq!(o.status.code(), Some(code), "{}", show(o));
    String::from_utf8_lossy(&o.stderr).into_owned()
}
