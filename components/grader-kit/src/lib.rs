//! Shared code for coder-eval grader components (criteria).
//!
//! A grader implements the WIT world `coder-eval:grader/grader@0.1.0`
//! (`wit/grader@0.1.0/grader.wit`), or `coder-eval:grader/live-grader@0.2.0` when it can
//! also judge live ([`Watch`], [`export_live_grader!`]): one function, `grade`, that
//! judges one run from the
//! criterion's parameters, the agent's trajectory and its workspace (preopened read-only
//! at `/workspace`). The sandbox grants nothing else: no network, no environment, no
//! clock that moves, bounded CPU (fuel) and memory.
//!
//! This crate holds that model as plain Rust ([`GradingInput`], [`Verdict`], the
//! trajectory as [`StampedEvent`]s of [`harness_kit::Event`]) so a criterion's logic
//! compiles and tests natively, helpers most criteria need ([`GradingInput::tool_uses`],
//! [`GradingInput::final_text`], [`GradingInput::workspace_file`], [`unwrap_shell`]), and
//! [`export_grader!`] binds a [`Criterion`] to the WIT world when built for
//! `wasm32-wasip2`.
//!
//! ```ignore
//! struct ReadmeMentionsFiles;
//! impl grader_kit::Criterion for ReadmeMentionsFiles {
//!     fn grade(input: &grader_kit::GradingInput) -> Result<grader_kit::Verdict, String> {
//!         Ok(grader_kit::Verdict::new(1.0, "all good"))
//!     }
//! }
//! grader_kit::export_grader!(ReadmeMentionsFiles);
//! ```

mod live;
mod trajectory;

pub use harness_kit::shell::{shell_command, split_shell, unwrap_shell};
pub use harness_kit::{Event, ToolStatus, UnreportedKind, Usage};
pub use live::{Decidability, LiveVerdict, Watch, watch_all};
pub use trajectory::{ToolUse, build};

use harness_kit::char_prefix;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::path::{Component, Path, PathBuf};

#[cfg(target_arch = "wasm32")]
#[doc(hidden)]
pub mod wasm;
#[cfg(target_arch = "wasm32")]
#[doc(hidden)]
pub mod wasm_live;

/// The guest path where the host preopens the agent's workspace, read-only.
pub const WORKSPACE: &str = "/workspace";

/// The score at or above which [`Verdict::new`] sets `pass` (the task files' default
/// `pass_threshold`). The host applies each criterion's own threshold to the score.
pub const DEFAULT_PASS_THRESHOLD: f64 = 0.9;

/// One event of the trajectory with the host's receive stamp.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StampedEvent {
    /// µs since the turn started, on the host's one monotonic clock.
    pub stamp_us: u64,
    pub event: Event,
}

/// What a criterion is asked to judge.
#[derive(Debug, Clone, PartialEq)]
pub struct GradingInput {
    /// The criterion's parameters from the task file, as a JSON object. For the built-in
    /// criteria the host includes the criterion's `type`; for a `type: component`
    /// criterion this is the task's `params` object verbatim.
    pub params: serde_json::Value,
    /// Every normalized event of the run, in order.
    pub trajectory: Vec<StampedEvent>,
    /// The task's initial prompt.
    pub prompt: String,
    /// Where the workspace is readable: [`WORKSPACE`] inside the sandbox, any folder in
    /// native tests.
    pub workspace: String,
}

/// A criterion's judgement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    /// 0.0 to 1.0.
    pub score: f64,
    /// Whether the criterion considers itself met. Advisory: the host applies the task's
    /// `pass_threshold` to `score`.
    pub pass: bool,
    /// A human-readable explanation. The host keeps at most 64 KiB of it.
    pub details: String,
}

impl Verdict {
    /// A verdict with `score` (clamped to 0–1; NaN becomes 0) and `pass` set when the
    /// score reaches [`DEFAULT_PASS_THRESHOLD`].
    pub fn new(score: f64, details: impl Into<String>) -> Verdict {
        let score = if score.is_nan() {
            0.0
        } else {
            score.clamp(0.0, 1.0)
        };
        Verdict {
            score,
            pass: score >= DEFAULT_PASS_THRESHOLD,
            details: details.into(),
        }
    }

    /// Score 1, passed.
    pub fn pass(details: impl Into<String>) -> Verdict {
        Verdict::new(1.0, details)
    }

    /// Score 0, not passed.
    pub fn fail(details: impl Into<String>) -> Verdict {
        Verdict::new(0.0, details)
    }

    /// 1 when `ok`, else 0.
    pub fn binary(ok: bool, details: impl Into<String>) -> Verdict {
        Verdict::new(if ok { 1.0 } else { 0.0 }, details)
    }
}

/// One criterion (or a family of criteria dispatching on `params["type"]`).
pub trait Criterion: 'static {
    /// Judges one run. `Err` means the criterion could not judge (bad parameters,
    /// unreadable input): the host records it as the criterion's error with score 0.
    /// A run that simply fails the check is an `Ok` verdict with a low score.
    fn grade(input: &GradingInput) -> Result<Verdict, String>;

    /// Checks the parameters without grading: the host's validation call at task load
    /// (a criterion plugin registered with `validates_params: true`). `Err` is the load
    /// error shown to the task's author. The default accepts anything.
    fn validate(params: &serde_json::Value) -> Result<(), String> {
        let _ = params;
        Ok(())
    }
}

/// The prompt of the host's validation call: a `grade` call with this prompt, an empty
/// trajectory and an empty workspace only asks whether the params are valid.
/// [`export_grader!`] answers it with [`Criterion::validate`] (a verdict of score 1, or
/// the error).
pub const VALIDATE_PROMPT: &str = "coder-eval:validate-params@1";

impl GradingInput {
    /// An input with no trajectory and an empty prompt (for tests).
    pub fn new(params: serde_json::Value, workspace: impl Into<String>) -> GradingInput {
        GradingInput {
            params,
            trajectory: Vec::new(),
            prompt: String::new(),
            workspace: workspace.into(),
        }
    }

    /// The `type` parameter, or "" when absent.
    pub fn kind(&self) -> &str {
        self.params
            .get("type")
            .and_then(|t| t.as_str())
            .unwrap_or("")
    }

    /// The parameters as `T`, without the `type` key (see [`params_as`]).
    pub fn params<T: DeserializeOwned>(&self) -> Result<T, String> {
        params_as(&self.params)
    }

    /// The path of `rel` inside the workspace. Refuses absolute paths and `..`, which
    /// the sandbox would refuse anyway, with a clearer message.
    pub fn workspace_file(&self, rel: &str) -> Result<PathBuf, String> {
        Ok(Path::new(&self.workspace).join(check_relative(rel)?))
    }

    /// Every tool call of the trajectory, in order of start, with how it ended.
    pub fn tool_uses(&self) -> Vec<ToolUse> {
        trajectory::tool_uses(&self.trajectory)
    }

    /// The agent's final answer: the text of the last final result that has one, else the
    /// text of the last main-thread assistant message. `None` when there is neither.
    pub fn final_text(&self) -> Option<String> {
        trajectory::final_text(&self.trajectory)
    }
}

/// `params` without its `type` key, deserialized as `T`. Errors name the problem
/// (`unknown field`, `missing field`, `invalid type`) as serde reports it.
pub fn params_as<T: DeserializeOwned>(params: &serde_json::Value) -> Result<T, String> {
    let mut object = match params {
        serde_json::Value::Object(map) => map.clone(),
        serde_json::Value::Null => serde_json::Map::new(),
        other => return Err(format!("params must be an object, got {other}")),
    };
    object.remove("type");
    serde_json::from_value(serde_json::Value::Object(object)).map_err(|e| e.to_string())
}

/// Checks that `rel` is a relative path without `..` and returns it.
pub fn check_relative(rel: &str) -> Result<&Path, String> {
    let path = Path::new(rel);
    if rel.is_empty() {
        return Err("the path is empty".into());
    }
    for part in path.components() {
        match part {
            Component::Normal(_) | Component::CurDir => {}
            Component::ParentDir => {
                return Err(format!(
                    "path `{rel}` leaves the workspace (`..` is not allowed)"
                ));
            }
            Component::RootDir | Component::Prefix(_) => {
                return Err(format!(
                    "path `{rel}` is absolute; give it relative to the workspace"
                ));
            }
        }
    }
    Ok(path)
}

/// Cuts `text` to at most `max` bytes on a character boundary, saying how much was cut.
pub fn truncate(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    format!("{}… [{} bytes in all]", char_prefix(text, max), text.len())
}

/// Exports a [`Criterion`] implementation as the component's `grader` world.
///
/// ```ignore
/// struct MyCriterion;
/// impl grader_kit::Criterion for MyCriterion { ... }
/// grader_kit::export_grader!(MyCriterion);
/// ```
#[macro_export]
macro_rules! export_grader {
    ($criterion:ty) => {
        #[cfg(target_arch = "wasm32")]
        type __GraderComponent = $crate::wasm::Component<$criterion>;
        #[cfg(target_arch = "wasm32")]
        $crate::wasm::export!(__GraderComponent with_types_in $crate::wasm);
    };
}

/// Exports a [`Criterion`] and its live [`Watch`] as the component's `live-grader` world
/// (`coder-eval:grader@0.2.0`: `criterion` and `live`), so the criterion can be armed with
/// `stop_early`.
///
/// ```ignore
/// grader_kit::export_live_grader!(MyCriterion, MyWatcher);
/// ```
#[macro_export]
macro_rules! export_live_grader {
    ($criterion:ty, $watch:ty) => {
        #[cfg(target_arch = "wasm32")]
        type __LiveGraderComponent = $crate::wasm_live::Component<$criterion, $watch>;
        #[cfg(target_arch = "wasm32")]
        $crate::wasm_live::export_live!(__LiveGraderComponent with_types_in $crate::wasm_live);
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn params_drop_type_and_report_unknown_fields() {
        #[derive(Deserialize, Debug)]
        #[serde(deny_unknown_fields)]
        struct P {
            path: String,
        }
        let p: P = params_as(&json!({"type": "x", "path": "a"})).unwrap();
        assert_eq!(p.path, "a");
        let err = params_as::<P>(&json!({"type": "x", "pathh": "a"})).unwrap_err();
        assert!(err.contains("unknown field `pathh`"), "{err}");
        let err = params_as::<P>(&json!([1])).unwrap_err();
        assert!(err.contains("must be an object"), "{err}");
    }

    #[test]
    fn workspace_paths_stay_inside() {
        let input = GradingInput::new(json!({}), "/workspace");
        assert_eq!(
            input.workspace_file("a/b.txt").unwrap(),
            PathBuf::from("/workspace/a/b.txt")
        );
        assert!(input.workspace_file("../x").is_err());
        assert!(input.workspace_file("a/../../x").is_err());
        assert!(input.workspace_file("/etc/passwd").is_err());
        assert!(input.workspace_file("").is_err());
    }

    #[test]
    fn verdict_clamps_and_sets_pass() {
        assert_eq!(Verdict::new(1.5, "").score, 1.0);
        assert_eq!(Verdict::new(f64::NAN, "").score, 0.0);
        assert!(Verdict::new(0.9, "").pass);
        assert!(!Verdict::new(0.89, "").pass);
    }

    #[test]
    fn truncate_respects_char_boundaries() {
        assert_eq!(truncate("abc", 5), "abc");
        let t = truncate("ééé", 3);
        assert!(t.starts_with('é') && t.contains("[6 bytes in all]"), "{t}");
    }
}
