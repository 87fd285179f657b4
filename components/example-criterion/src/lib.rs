//! An example user-written criterion: **the README mentions every file the agent
//! created.** Copy this crate to write your own.
//!
//! # How a criterion works
//!
//! A criterion is a WebAssembly component implementing the WIT world
//! `coder-eval:grader/grader@0.1.0` (see `wit/grader@0.1.0/grader.wit`). The host calls
//! its one function, `grade`, once per run with:
//!
//! - `params`: the `params:` object of the task file's criterion, as JSON;
//! - `trajectory`: every normalized event of the run (tool calls, messages, final result);
//! - `prompt`: the task's prompt;
//! - `workspace`: `/workspace`, where the agent's workspace is preopened **read-only**.
//!
//! It returns a [`Verdict`] (score 0–1, pass, details) or an error string when it cannot
//! judge (bad params). It runs in a sandbox: no network, no environment variables, no
//! files outside the workspace, a fuel (CPU) budget and a memory cap. A panic, a loop or
//! a memory bomb becomes this criterion's error; the other criteria still run.
//!
//! `grader-kit` does the WIT plumbing: implement [`Criterion`], call
//! [`grader_kit::export_grader!`], build with
//! `cargo build --release --target wasm32-wasip2`, and point a task at the `.wasm`:
//!
//! ```yaml
//! success_criteria:
//!   - type: component
//!     component: ../target/wasm32-wasip2/release/example_criterion.wasm  # relative to the task file
//!     description: README lists the files the agent wrote
//!     params:
//!       readme: README.md       # optional, the default
//!       ignore: [".gitignore"]  # optional: files that need no mention
//! ```

use grader_kit::{Criterion, GradingInput, Verdict};
use serde::Deserialize;
use std::collections::BTreeSet;

/// This criterion's parameters. `deny_unknown_fields` turns a typo in the task file into
/// a clear error instead of a silently ignored key.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Params {
    /// The file that must mention the others, relative to the workspace.
    #[serde(default = "default_readme")]
    readme: String,
    /// File names that need no mention (the README itself never does).
    #[serde(default)]
    ignore: Vec<String>,
}

fn default_readme() -> String {
    "README.md".into()
}

/// The names of the files the agent created, from its tool calls: a call to a tool whose
/// name says it writes or creates (`Write`, `write_file`, `create_file`, ...) with a path
/// in its input. Paths in tool inputs are the agent's own (often absolute), so we keep
/// the file name only.
fn created_files(input: &GradingInput) -> BTreeSet<String> {
    let mut files = BTreeSet::new();
    for tool in input.tool_uses() {
        let name = tool.name.to_lowercase();
        if !(name.contains("write") || name.contains("create")) {
            continue;
        }
        let path = ["file_path", "filePath", "path"]
            .iter()
            .find_map(|key| tool.input.get(*key).and_then(|v| v.as_str()));
        if let Some(path) = path
            && let Some(file_name) = path.rsplit(['/', '\\']).next()
            && !file_name.is_empty()
        {
            files.insert(file_name.to_string());
        }
    }
    files
}

/// The criterion. A unit struct: all input comes in through `grade`.
pub struct ReadmeMentionsCreatedFiles;

impl Criterion for ReadmeMentionsCreatedFiles {
    /// The host's validation call at load (when the criterion is registered as a plugin
    /// type with `validates_params: true`): the same parameter parsing as `grade`, and a
    /// README path that stays in the workspace.
    fn validate(params: &serde_json::Value) -> Result<(), String> {
        let params: Params = grader_kit::params_as(params)?;
        grader_kit::check_relative(&params.readme)
            .map(drop)
            .map_err(|e| format!("readme: {e}"))
    }

    fn grade(input: &GradingInput) -> Result<Verdict, String> {
        // 1. Parameters. An `Err` here is reported as the criterion's error (score 0).
        let params: Params = input.params()?;

        // 2. What the agent created, from the trajectory.
        let mut created = created_files(input);
        created.remove(&params.readme);
        for name in &params.ignore {
            created.remove(name);
        }
        if created.is_empty() {
            return Ok(Verdict::pass("the agent created no files to mention"));
        }

        // 3. The README, read from the read-only workspace. `workspace_file` refuses
        //    absolute paths and `..` (the sandbox would refuse them anyway). A missing
        //    README is an ordinary failed check, so it is a verdict, not an error.
        let readme_path = input.workspace_file(&params.readme)?;
        let readme = match std::fs::read_to_string(&readme_path) {
            Ok(text) => text,
            Err(e) => {
                return Ok(Verdict::fail(format!(
                    "cannot read {}: {e}; the agent created {}",
                    params.readme,
                    created.iter().cloned().collect::<Vec<_>>().join(", ")
                )));
            }
        };

        // 4. Score: the share of created files the README mentions.
        let (mentioned, missing): (Vec<&String>, Vec<&String>) =
            created.iter().partition(|f| readme.contains(f.as_str()));
        let score = mentioned.len() as f64 / created.len() as f64;
        let mut details = format!(
            "{} mentions {}/{} created files",
            params.readme,
            mentioned.len(),
            created.len()
        );
        if !missing.is_empty() {
            let names: Vec<&str> = missing.iter().map(|s| s.as_str()).collect();
            details.push_str(&format!(" (missing: {})", names.join(", ")));
        }
        Ok(Verdict::new(score, details))
    }
}

// Binds the criterion to the WIT world when built for wasm32 (a no-op natively).
grader_kit::export_grader!(ReadmeMentionsCreatedFiles);

// Native tests: the same logic, with a temp folder as the workspace.
#[cfg(test)]
mod tests {
    use super::*;
    use grader_kit::ToolStatus;
    use grader_kit::build::{tool_end, tool_start};
    use serde_json::json;

    fn run(readme: Option<&str>, params: serde_json::Value) -> Verdict {
        let dir = std::env::temp_dir().join(format!("example-criterion-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        if let Some(text) = readme {
            std::fs::write(dir.join("README.md"), text).unwrap();
        }
        let mut input = GradingInput::new(params, dir.to_str().unwrap());
        input.trajectory = vec![
            tool_start(
                0,
                "1",
                "Write",
                json!({"file_path": "/w/app.py", "content": ""}),
            ),
            tool_end(1, "1", ToolStatus::Ok, None),
            tool_start(2, "2", "write_file", json!({"path": "lib/util.py"})),
            tool_start(3, "3", "Write", json!({"file_path": "/w/README.md"})),
            tool_start(4, "4", "Read", json!({"file_path": "/w/other.txt"})),
        ];
        ReadmeMentionsCreatedFiles::grade(&input).unwrap()
    }

    #[test]
    fn scores_the_share_of_mentioned_files() {
        assert_eq!(run(Some("see app.py and util.py"), json!({})).score, 1.0);
        let half = run(Some("see app.py"), json!({}));
        assert_eq!(half.score, 0.5);
        assert!(
            half.details.contains("missing: util.py"),
            "{}",
            half.details
        );
        assert_eq!(
            run(Some("see app.py"), json!({"ignore": ["util.py"]})).score,
            1.0
        );
        let none = run(None, json!({}));
        assert_eq!(none.score, 0.0);
        assert!(
            none.details.contains("cannot read README.md"),
            "{}",
            none.details
        );
    }

    #[test]
    fn validate_checks_params_without_grading() {
        assert!(ReadmeMentionsCreatedFiles::validate(&json!({"ignore": ["a"]})).is_ok());
        let err = ReadmeMentionsCreatedFiles::validate(&json!({"readmee": "x"})).unwrap_err();
        assert!(err.contains("unknown field `readmee`"), "{err}");
        assert!(ReadmeMentionsCreatedFiles::validate(&json!({"readme": "../x"})).is_err());
    }

    #[test]
    fn a_typo_in_params_is_an_error() {
        let dir = std::env::temp_dir();
        let input = GradingInput::new(json!({"readmee": "x"}), dir.to_str().unwrap());
        let err = ReadmeMentionsCreatedFiles::grade(&input).unwrap_err();
        assert!(err.contains("unknown field `readmee`"), "{err}");
    }
}
