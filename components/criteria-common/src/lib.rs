//! Helpers shared by the built-in criteria components (`criteria-files`, `criteria-json`,
//! `criteria-trajectory`), and by the host, which calls the criteria's `validate` and
//! `param_kind` ([`ParamKind`]) at load time.
//!
//! Regexes use the Rust `regex` syntax (no look-around, no back-references); the task
//! files' `flags` keep Python's numbers so existing task files carry over.

mod params;

pub use params::{ParamKind, ParamKindFn, PathSeg, kinds_in, sibling, with_each_bad_value};

use grader_kit::{GradingInput, check_relative};
use regex::{Regex, RegexBuilder};
use std::path::Path;

/// Python's `re.IGNORECASE`.
pub const FLAG_IGNORECASE: u32 = 2;
/// Python's `re.MULTILINE`.
pub const FLAG_MULTILINE: u32 = 8;
/// Python's `re.DOTALL`.
pub const FLAG_DOTALL: u32 = 16;
/// Python's `re.VERBOSE`.
pub const FLAG_VERBOSE: u32 = 64;

/// Bytes of a file a criterion reads at most.
pub const MAX_FILE_BYTES: u64 = 64 << 20;
/// Entries a glob walk visits at most.
pub const MAX_WALK_ENTRIES: usize = 200_000;

/// Compiles `pattern` with Python-style `flags` (IGNORECASE 2, MULTILINE 8, DOTALL 16,
/// VERBOSE 64). `what` names the parameter in the error.
pub fn regex(what: &str, pattern: &str, flags: u32) -> Result<Regex, String> {
    let known = FLAG_IGNORECASE | FLAG_MULTILINE | FLAG_DOTALL | FLAG_VERBOSE;
    if flags & !known != 0 {
        return Err(format!(
            "{what}: unsupported regex flags {flags} (supported: IGNORECASE=2, MULTILINE=8, \
             DOTALL=16, VERBOSE=64)"
        ));
    }
    RegexBuilder::new(pattern)
        .case_insensitive(flags & FLAG_IGNORECASE != 0)
        .multi_line(flags & FLAG_MULTILINE != 0)
        .dot_matches_new_line(flags & FLAG_DOTALL != 0)
        .ignore_whitespace(flags & FLAG_VERBOSE != 0)
        .build()
        .map_err(|e| {
            format!(
                "{what}: invalid regex `{pattern}`: {}",
                one_line(&e.to_string())
            )
        })
}

/// Searches `text` with `re` the way Python's `re.search` reads `$`: a match is also
/// tried on `text` without one final newline, so `^42$` finds `"42\n"`.
pub fn search<'t>(re: &Regex, text: &'t str) -> Option<regex::Match<'t>> {
    re.find(text)
        .or_else(|| text.strip_suffix('\n').and_then(|t| re.find(t)))
}

fn one_line(text: &str) -> String {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Whether `path` is a glob pattern (holds `*`, `?`, `[` or `{`).
pub fn is_glob(path: &str) -> bool {
    path.contains(['*', '?', '[', '{'])
}

/// Checks a workspace path parameter: relative, no `..`, and a valid glob if it is one.
pub fn check_path(what: &str, path: &str) -> Result<(), String> {
    check_relative(path).map_err(|e| format!("{what}: {e}"))?;
    if is_glob(path) {
        glob(path).map_err(|e| format!("{what}: {e}"))?;
    }
    Ok(())
}

fn glob(pattern: &str) -> Result<globset::GlobMatcher, String> {
    Ok(globset::GlobBuilder::new(pattern.trim_start_matches("./"))
        .literal_separator(true)
        .build()
        .map_err(|e| format!("invalid glob `{pattern}`: {e}"))?
        .compile_matcher())
}

/// The workspace files (relative paths, `/`-separated, sorted) that `path` names: the
/// path itself when it is not a glob and exists, else every file and folder the glob
/// matches. Symlinks are not followed while walking.
pub fn resolve(input: &GradingInput, path: &str) -> Result<Vec<String>, String> {
    if !is_glob(path) {
        let full = input.workspace_file(path)?;
        return Ok(if full.exists() {
            vec![path.to_string()]
        } else {
            Vec::new()
        });
    }
    check_relative(path)?;
    let matcher = glob(path)?;
    let root = Path::new(&input.workspace);
    let mut found = Vec::new();
    let mut stack = vec![(root.to_path_buf(), String::new())];
    let mut visited = 0usize;
    while let Some((dir, rel)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            visited += 1;
            if visited > MAX_WALK_ENTRIES {
                return Err(format!(
                    "glob `{path}`: the workspace has more than {MAX_WALK_ENTRIES} entries"
                ));
            }
            let name = entry.file_name().to_string_lossy().into_owned();
            let child = if rel.is_empty() {
                name
            } else {
                format!("{rel}/{name}")
            };
            if matcher.is_match(&child) {
                found.push(child.clone());
            }
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push((entry.path(), child));
            }
        }
    }
    found.sort();
    Ok(found)
}

/// What one file-reading criterion found at `path`.
pub enum Target {
    /// Exactly one file: its relative path and content (lossy UTF-8).
    One(String, String),
    /// Nothing to judge (missing, a glob matching 0 or several files): why, for details.
    Missing(String),
}

/// Reads the one file `path` names (a plain path, or a glob that must match exactly one
/// file). Errors: a path outside the workspace, a file over [`MAX_FILE_BYTES`].
pub fn read_target(input: &GradingInput, path: &str) -> Result<Target, String> {
    let matches = resolve(input, path)?;
    let rel = match matches.as_slice() {
        [] if is_glob(path) => return Ok(Target::Missing(format!("no file matches `{path}`"))),
        [] => return Ok(Target::Missing(format!("file `{path}` does not exist"))),
        [one] => one.clone(),
        many => {
            return Ok(Target::Missing(format!(
                "`{path}` matches {} files, expected one: {}",
                many.len(),
                many.iter().take(10).cloned().collect::<Vec<_>>().join(", ")
            )));
        }
    };
    let full = input.workspace_file(&rel)?;
    let meta = std::fs::metadata(&full).map_err(|e| format!("cannot read `{rel}`: {e}"))?;
    if meta.is_dir() {
        return Ok(Target::Missing(format!("`{rel}` is a folder, not a file")));
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(format!(
            "`{rel}` is {} bytes; criteria read at most {MAX_FILE_BYTES}",
            meta.len()
        ));
    }
    let bytes = std::fs::read(&full).map_err(|e| format!("cannot read `{rel}`: {e}"))?;
    Ok(Target::One(
        rel,
        String::from_utf8_lossy(&bytes).into_owned(),
    ))
}

/// A scratch workspace for native tests: a fresh folder under the system temp dir.
pub fn scratch_workspace(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("criteria-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn python_flags_map_to_rust_regex() {
        assert!(
            regex("p", "^abc$", FLAG_IGNORECASE)
                .unwrap()
                .is_match("ABC")
        );
        assert!(
            regex("p", "^b$", FLAG_MULTILINE)
                .unwrap()
                .is_match("a\nb\nc")
        );
        assert!(regex("p", "a.b", FLAG_DOTALL).unwrap().is_match("a\nb"));
        assert!(!regex("p", "a.b", 0).unwrap().is_match("a\nb"));
        let err = regex("pattern", "a(", 0).unwrap_err();
        assert!(err.starts_with("pattern: invalid regex `a(`"), "{err}");
        assert!(!err.contains('\n'));
        assert!(
            regex("p", "a", 1)
                .unwrap_err()
                .contains("unsupported regex flags")
        );
    }

    #[test]
    fn globs_resolve_inside_the_workspace() {
        let dir = scratch_workspace("glob");
        std::fs::create_dir_all(dir.join("src/deep")).unwrap();
        std::fs::write(dir.join("app.py"), "x").unwrap();
        std::fs::write(dir.join("src/a.py"), "x").unwrap();
        std::fs::write(dir.join("src/deep/b.py"), "x").unwrap();
        let input = GradingInput::new(json!({}), dir.to_str().unwrap());
        assert_eq!(resolve(&input, "*.py").unwrap(), vec!["app.py"]);
        assert_eq!(
            resolve(&input, "**/*.py").unwrap(),
            vec!["app.py", "src/a.py", "src/deep/b.py"]
        );
        assert_eq!(resolve(&input, "src/*.py").unwrap(), vec!["src/a.py"]);
        assert_eq!(resolve(&input, "app.py").unwrap(), vec!["app.py"]);
        assert!(resolve(&input, "nope.py").unwrap().is_empty());
        assert!(check_path("path", "[").is_err());
        assert!(check_path("path", "../x").is_err());
        match read_target(&input, "**/*.py").unwrap() {
            Target::Missing(why) => assert!(why.contains("matches 3 files"), "{why}"),
            Target::One(..) => panic!("three files match"),
        }
        match read_target(&input, "src/deep/*.py").unwrap() {
            Target::One(rel, content) => {
                assert_eq!((rel.as_str(), content.as_str()), ("src/deep/b.py", "x"))
            }
            Target::Missing(why) => panic!("{why}"),
        }
    }
}
