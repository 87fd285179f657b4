//! The Kilo harness: `kilo run --format json -m <provider>/<model> <prompt>`.
//!
//! Kilo (`@kilocode/cli`) is a fork of OpenCode whose stream is OpenCode's line for line
//! (`step_start`, `text`, `tool_use` once a tool finished, `step_finish` with the step's
//! tokens and cost; see `shared/corpus/live/kilo/`), so this harness is OpenCode's
//! reducer and plan ([`harness_kit::streams::opencode`]) with Kilo's names: the `kilo`
//! program, `KILO_CONFIG`, the `KILO_*` opt-outs, and its built-in `kilo` and `apertis`
//! providers turned off (each fetches a model list from the network at start).
//!
//! Checked against Kilo 7.7.7 (the pin in `harnesses/package.json`: 7.8.1's postinstall
//! asks for a platform binary the registry lacks). Its start is slow: 10–12 s from launch
//! to the first model request on a 2-core machine (a silent gap after "session created",
//! not network), which the turn's `harness_startup_ms` shows.

use harness_kit::streams::opencode::OpenCodeReducer;
use harness_kit::streams::opencode::launch::{self, Fork};
use harness_kit::{
    AgentSettings, Capabilities, Harness, LaunchPlan, NeutralAction, RunLimits, ToolCall,
    TotalsScope,
};

/// The Kilo harness.
pub struct Kilo;

/// The config file, relative to the private HOME (`KILO_CONFIG` points at it).
pub const CONFIG_PATH: &str = "kilo.json";

/// The file holding the task's `system_prompt` (the config's `instructions`), relative to
/// HOME.
pub const INSTRUCTIONS_PATH: &str = ".coder-eval/kilo-instructions.md";

/// Kilo 7.7's names and opt-outs (`shared/reference/more_clis.md`): without
/// `KILO_TELEMETRY_LEVEL=off` it reports to PostHog, without `KILO_DISABLE_MODELS_FETCH`
/// it fetches models.dev; with these, the probe run reached nothing.
pub const FORK: Fork = Fork {
    program: "kilo",
    name: "Kilo",
    schema: "https://app.kilo.ai/config.json",
    config_env: "KILO_CONFIG",
    config_path: CONFIG_PATH,
    instructions_path: INSTRUCTIONS_PATH,
    env: &[
        ("KILO_TELEMETRY_LEVEL", "off"),
        ("KILO_DISABLE_MODELS_FETCH", "1"),
        ("KILO_DISABLE_AUTOUPDATE", "1"),
        ("KILO_DISABLE_SHARE", "1"),
        ("KILO_DISABLE_DEFAULT_PLUGINS", "1"),
        ("KILO_DISABLE_SESSION_INGEST", "1"),
        ("KILO_DISABLE_LSP_DOWNLOAD", "1"),
    ],
    disabled_providers: &["kilo", "apertis"],
};

impl Harness for Kilo {
    type Reducer = OpenCodeReducer;

    /// As OpenCode's (`kilo run --help` of 7.7.7 has the same `-m`, `--variant`, `--pure`
    /// and `--session`, and the config the same permissions, tools and `instructions`).
    fn describe() -> Capabilities {
        launch::capabilities()
    }

    /// Tokens and cost come per step (`step_finish`): the host sums them.
    fn totals(_cli_version: Option<&str>) -> TotalsScope {
        TotalsScope::PerCall
    }

    fn plan(settings: &AgentSettings, limits: &RunLimits) -> Result<LaunchPlan, String> {
        Self::describe().check(settings)?;
        launch::plan(&FORK, settings, limits)
    }

    fn translate_action(action: &NeutralAction, workspace: &str) -> ToolCall {
        launch::translate_action(action, workspace)
    }
}

#[cfg(feature = "export")]
harness_kit::export_harness!(Kilo);

#[cfg(test)]
mod tests;
