//! The default components, built by `host/build.rs` for `wasm32-wasip2` and embedded in
//! the binary: their bytes and nothing else. Which harness each serves is listed in
//! [`crate::components::BUILTIN_HARNESSES`]; which criterion types each criteria component
//! grades, in [`crate::components::criteria::BUILTIN_CRITERIA`].

/// The bytes of a component that `host/build.rs` built into `CODER_EVAL_COMPONENTS_DIR`.
macro_rules! component {
    ($file:literal) => {
        include_bytes!(concat!(env!("CODER_EVAL_COMPONENTS_DIR"), "/", $file))
    };
}

/// The Claude Code harness component.
pub(crate) const CLAUDE_CODE: &[u8] = component!("claude_code_harness.wasm");
/// The Codex harness component.
pub(crate) const CODEX: &[u8] = component!("codex_harness.wasm");
/// The Pi harness component.
pub(crate) const PI: &[u8] = component!("pi_harness.wasm");
/// The OpenCode harness component.
pub(crate) const OPENCODE: &[u8] = component!("opencode_harness.wasm");
/// The Gemini CLI harness component.
pub(crate) const GEMINI_CLI: &[u8] = component!("gemini_cli_harness.wasm");
/// The Qwen Code harness component.
pub(crate) const QWEN_CODE: &[u8] = component!("qwen_code_harness.wasm");
/// The Kilo harness component.
pub(crate) const KILO: &[u8] = component!("kilo_harness.wasm");
/// The Cline harness component.
pub(crate) const CLINE: &[u8] = component!("cline_harness.wasm");
/// The GitHub Copilot CLI harness component.
pub(crate) const COPILOT: &[u8] = component!("copilot_harness.wasm");
/// The Letta Code harness component.
pub(crate) const LETTA: &[u8] = component!("letta_harness.wasm");
/// The grok-cli harness component.
pub(crate) const GROK_CLI: &[u8] = component!("grok_cli_harness.wasm");
/// The Continue CLI harness component.
pub(crate) const CONTINUE: &[u8] = component!("continue_harness.wasm");

/// The `criteria-files` criteria component.
pub(crate) const CRITERIA_FILES: &[u8] = component!("criteria_files.wasm");
/// The `criteria-json` criteria component.
pub(crate) const CRITERIA_JSON: &[u8] = component!("criteria_json.wasm");
/// The `criteria-trajectory` criteria component.
pub(crate) const CRITERIA_TRAJECTORY: &[u8] = component!("criteria_trajectory.wasm");
