//! Shared code for coder-eval harness components.
//!
//! A harness component implements the WIT world `coder-eval:harness/harness@0.2.0`
//! (`wit/harness@0.2.0/harness.wit`): what the harness can do (`describe`, `totals`), a
//! launch plan for one agent CLI and a reducer that turns the CLI's stdout lines into the
//! normalized events of `coder-eval:events@0.2.0`. [`export_harness_v0_1!`] exports the
//! released 0.1.0 world instead, for hosts that load only 0.1.0.
//!
//! This crate holds that model as plain Rust ([`Event`], [`LaunchPlan`], ...) so that a
//! harness's logic compiles and tests natively, and [`export_harness!`] binds a
//! [`Harness`] to the WIT world when built for `wasm32-wasip2`.
//!
//! # Writing a reducer
//!
//! Every reducer's [`Reducer::feed`] opens the same way, with [`reduce`]: decode the line
//! (blank and broken lines, the `repaired_line` note), then match on its `type`, with
//! [`reduce::type_diagnostic`] as the fall-through. Made-up ids come from
//! [`reduce::IdMaker`], the shell command of a tool input from [`shell`], excerpts from
//! [`excerpt`], and unit tests read the events through [`testing::Reduced`].
//!
//! A line can be read in two styles; pick by how much the stream costs to read:
//!
//! - **`serde_json::Value`** ([`reduce::decode_object`], then [`str_field`] and friends):
//!   the whole line becomes a map. Short to write and to change, and fast enough for
//!   streams of a few MB per run (Codex, Gemini CLI, OpenCode, Pi). Start here.
//! - **A typed lenient view** ([`reduce::decode`] with a struct of [`lenient`] fields):
//!   only the fields the reducer reads are built, strings borrowed from the line. It made
//!   the Claude Code reducer 2.8× faster natively (2.3× as a component) on long captures,
//!   whose tool results repeat whole files; it costs a struct per line shape. Switch to it
//!   when a replay bench (`cargo bench --bench replay` in the host) shows decoding is the
//!   cost. Both styles share one decoder ([`parse_line`]), so their diagnostics and
//!   repairs are the same.

pub mod lenient;
mod line;
mod model;
pub mod reduce;
pub mod shell;
#[cfg(any(feature = "claude-stream", feature = "opencode-stream"))]
pub mod streams;

pub use line::{
    Parsed, ParsedLine, char_prefix, excerpt, parse_json_line, parse_line, replace_lone_surrogates,
    str_field, truncated_line, u64_field, workspace_path,
};

pub mod testing;
pub mod version;
pub use model::*;

#[cfg(target_arch = "wasm32")]
#[doc(hidden)]
pub mod wasm;
#[cfg(target_arch = "wasm32")]
#[doc(hidden)]
pub mod wasm_v0_1;

#[cfg(target_arch = "wasm32")]
#[global_allocator]
static ALLOCATOR: talc::wasm::WasmDynamicTalc = talc::wasm::new_wasm_dynamic_allocator();

/// One agent CLI: how to launch it and how to read its stream.
pub trait Harness: 'static {
    /// The stream reducer of this CLI.
    type Reducer: Reducer;

    /// What this harness can do: the agent fields its CLI honours, whether it resumes a
    /// session, whether its stream reports cost, and usage per model call. No default:
    /// each harness declares what it checked its CLI for.
    fn describe() -> Capabilities;

    /// The CLI versions this harness was checked against (its recordings replay and its
    /// live scenarios passed on them), as the CLI prints them (`"2.1.332"`). A stream whose
    /// `session-started` names a newer version still reduces, with an
    /// `unchecked_cli_version` diagnostic after that event (see [`version`]). Empty (the
    /// default): not declared, no note.
    const CHECKED_VERSIONS: &'static [&'static str] = &[];

    /// How the totals the CLI reports accumulate, for the CLI version the host saw (`None`
    /// when unknown: answer for the versions the harness was checked against).
    fn totals(cli_version: Option<&str>) -> TotalsScope;

    /// How the token usage the CLI reports accumulates (WIT `usage-totals`), when it
    /// differs from its cost's [`Harness::totals`]; by default the same.
    fn usage_totals(cli_version: Option<&str>) -> TotalsScope {
        Self::totals(cli_version)
    }

    /// The launch plan for these settings and limits, or a sentence saying why the CLI
    /// cannot honour them.
    fn plan(settings: &AgentSettings, limits: &RunLimits) -> Result<LaunchPlan, String>;

    /// This CLI's tool call for a neutral scripted-model action. `workspace` is the
    /// absolute path of the task's workspace.
    fn translate_action(action: &NeutralAction, workspace: &str) -> ToolCall;
}

/// A stream reducer: a pure function of its config, the lines and their stamps.
pub trait Reducer {
    /// A new reducer for one stream.
    fn new(config: ReducerConfig) -> Self;
    /// One stdout line (without its newline) received `stamp_us` µs after the turn began;
    /// returns the events it completes.
    fn feed(&mut self, line: &[u8], stamp_us: u64) -> Vec<Event>;
    /// A side file the launch plan named (`path` as the plan gave it), read after the CLI
    /// exited; `None` when the CLI did not write it. Called before [`Reducer::finish`].
    /// Returns the events the file adds. The default adds none: right for a reducer whose
    /// plan names no side files.
    fn side_file(&mut self, path: &str, content: Option<&[u8]>) -> Vec<Event> {
        let _ = (path, content);
        Vec::new()
    }
    /// End of stream; `truncated` holds bytes after the last newline. Returns the events
    /// still pending.
    fn finish(&mut self, truncated: Option<&[u8]>) -> Vec<Event>;
}

/// Exports a [`Harness`] implementation as the component's world
/// `coder-eval:harness/harness@0.2.0`.
///
/// ```ignore
/// struct ClaudeCode;
/// impl harness_kit::Harness for ClaudeCode { ... }
/// harness_kit::export_harness!(ClaudeCode);
/// ```
#[macro_export]
macro_rules! export_harness {
    ($harness:ty) => {
        #[cfg(target_arch = "wasm32")]
        type __HarnessComponent = $crate::wasm::Component<$harness>;
        #[cfg(target_arch = "wasm32")]
        $crate::wasm::export!(__HarnessComponent with_types_in $crate::wasm);
    };
}

/// Exports a [`Harness`] implementation as the released world
/// `coder-eval:harness/harness@0.1.0`, for a host that loads only 0.1.0 (and to prove a
/// host still loads 0.1.0 components). The harness's [`Harness::describe`] and
/// [`Harness::totals`] are not exported (0.1.0 has neither), the agent fields new in 0.2.0
/// reach it unset, a plan that names side files is refused, and events@0.2.0's new events
/// are converted down (a denied call becomes an error; retries and unreported work are left
/// out).
#[macro_export]
macro_rules! export_harness_v0_1 {
    ($harness:ty) => {
        #[cfg(target_arch = "wasm32")]
        type __HarnessComponentV01 = $crate::wasm_v0_1::Component<$harness>;
        #[cfg(target_arch = "wasm32")]
        $crate::wasm_v0_1::export_v0_1!(__HarnessComponentV01 with_types_in $crate::wasm_v0_1);
    };
}
