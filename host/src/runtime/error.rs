//! The typed errors a component's failure becomes. A guest error value (a WIT `result`) is
//! not here: it is the call's ordinary return. These are the failures: could not load,
//! wrong contract, or a trap (out of fuel, past the deadline, out of memory, panic).

use std::path::PathBuf;

/// A component could not be loaded or failed during a call. Every variant names the
/// component (its file path, or `builtin:<name>`).
#[derive(Debug, thiserror::Error)]
pub enum ComponentError {
    /// The component file could not be read.
    #[error("component `{component}`: could not read {path}")]
    Read {
        component: String,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The bytes are not a valid WebAssembly component for this engine.
    #[error("component `{component}` is not a valid WebAssembly component")]
    Invalid {
        component: String,
        #[source]
        source: wasmtime::Error,
    },
    /// The component implements another version of the contract than this host.
    #[error(
        "component `{component}` implements {package}@{found}, but this host supports \
         {package}@{supported}; rebuild it against wit/{package_dir}@{supported}"
    )]
    UnsupportedVersion {
        component: String,
        package: String,
        package_dir: String,
        found: String,
        supported: String,
    },
    /// The component does not export the world it is used as.
    #[error("component `{component}` does not export the `{world}` world (exports: {exports})")]
    WrongWorld {
        component: String,
        world: String,
        exports: String,
    },
    /// The component imports an interface its world does not grant.
    #[error("component `{component}` imports `{import}`, which its world does not grant")]
    ForbiddenImport { component: String, import: String },
    /// Instantiation failed (a missing import, a start function trap).
    #[error("component `{component}` could not be instantiated")]
    Instantiate {
        component: String,
        #[source]
        source: wasmtime::Error,
    },
    /// The call used up its fuel budget (a deterministic CPU limit).
    #[error("component `{component}` ran out of fuel in `{call}` (budget {fuel} units)")]
    OutOfFuel {
        component: String,
        call: String,
        fuel: u64,
    },
    /// The call ran past its wall-clock deadline (epoch interruption). `rule`: how the
    /// deadline grows with the call's input (e.g. `2 s + 1 s per MiB of input`), for a
    /// budget whose deadline does; the message then adds it after the call, so an odd
    /// figure such as 2001 ms reads as the rule's sum.
    #[error(
        "component `{component}` passed its wall-clock deadline of {deadline_ms} ms in \
         `{call}`{}",
        rule.as_deref().map(|r| format!(" ({r})")).unwrap_or_default()
    )]
    Deadline {
        component: String,
        call: String,
        deadline_ms: u64,
        rule: Option<String>,
    },
    /// The component tried to grow its memory past the cap.
    #[error("component `{component}` exceeded its memory cap of {cap_bytes} bytes in `{call}`")]
    OutOfMemory {
        component: String,
        call: String,
        cap_bytes: usize,
    },
    /// Any other trap: a panic (`unreachable`), a bad memory access, ... `message` is the
    /// trap and, for a panic, the guest's own message from its captured stderr.
    #[error("component `{component}` trapped in `{call}`: {message}")]
    Trap {
        component: String,
        call: String,
        message: String,
    },
    /// The component was used after an earlier trap left its instance unusable.
    #[error("component `{component}` is unusable after an earlier failure")]
    Poisoned { component: String },
}

impl ComponentError {
    /// A short snake_case kind, for records and diagnostics.
    pub fn kind(&self) -> &'static str {
        match self {
            ComponentError::Read { .. } => "read",
            ComponentError::Invalid { .. } => "invalid",
            ComponentError::UnsupportedVersion { .. } => "unsupported_version",
            ComponentError::WrongWorld { .. } => "wrong_world",
            ComponentError::ForbiddenImport { .. } => "forbidden_import",
            ComponentError::Instantiate { .. } => "instantiate",
            ComponentError::OutOfFuel { .. } => "out_of_fuel",
            ComponentError::Deadline { .. } => "deadline",
            ComponentError::OutOfMemory { .. } => "out_of_memory",
            ComponentError::Trap { .. } => "trap",
            ComponentError::Poisoned { .. } => "poisoned",
        }
    }
}
