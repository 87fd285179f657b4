//! Which component serves a harness: the embedded default, or a replacement file. The
//! built-in criteria components, and loading one by name, are the submodule `criteria`'s
//! (`components/criteria.rs`).
//!
//! Resolution order for harness `NAME` (e.g. `claude-code`):
//! 1. a per-harness override (`--component NAME=PATH`);
//! 2. `DIR/NAME.wasm` in a `--components DIR` folder, when the file exists;
//! 3. the default built with the host and embedded in the binary (`builtin:NAME`).
//!
//! Files are read afresh at every resolution, so a long suite picks up a replaced file
//! between tasks; the precompiled cache makes an unchanged file cost ~1 ms.

pub(crate) mod criteria;

use crate::embedded;
use crate::runtime::{ComponentCache, ComponentError, LoadedComponent, harness};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A harness the host knows, with its embedded default component.
pub struct BuiltinHarness {
    /// The harness name used on the command line and in task files.
    pub name: &'static str,
    /// The CLI's program name (`argv[0]` of its launch plan).
    pub program: &'static str,
    /// The component's bytes (see `embedded.rs`).
    pub wasm: &'static [u8],
}

/// The harnesses built into this binary.
pub const BUILTIN_HARNESSES: &[BuiltinHarness] = &[
    BuiltinHarness {
        name: "claude-code",
        program: "claude",
        wasm: embedded::CLAUDE_CODE,
    },
    BuiltinHarness {
        name: "codex",
        program: "codex",
        wasm: embedded::CODEX,
    },
    BuiltinHarness {
        name: "pi",
        program: "pi",
        wasm: embedded::PI,
    },
    BuiltinHarness {
        name: "opencode",
        program: "opencode",
        wasm: embedded::OPENCODE,
    },
    BuiltinHarness {
        name: "gemini-cli",
        program: "gemini",
        wasm: embedded::GEMINI_CLI,
    },
    BuiltinHarness {
        name: "qwen-code",
        program: "qwen",
        wasm: embedded::QWEN_CODE,
    },
    BuiltinHarness {
        name: "kilo",
        program: "kilo",
        wasm: embedded::KILO,
    },
    BuiltinHarness {
        name: "cline",
        program: "cline",
        wasm: embedded::CLINE,
    },
    BuiltinHarness {
        name: "copilot",
        program: "copilot",
        wasm: embedded::COPILOT,
    },
    BuiltinHarness {
        name: "letta",
        program: "letta",
        wasm: embedded::LETTA,
    },
    BuiltinHarness {
        name: "grok-cli",
        program: "grok",
        wasm: embedded::GROK_CLI,
    },
    BuiltinHarness {
        name: "continue",
        program: "cn",
        wasm: embedded::CONTINUE,
    },
];

/// The built-in harnesses whose every event reaches the host only after the CLI exited
/// (grok-cli's transcript, Continue's session file): nothing can stop them early, so a
/// live rule (early stop, budget) that decides on their events gives the verdict but does
/// not cut the record (`turn::pipeline`). By construction of their output, not measured.
/// A host table keyed by harness name: an out-of-tree harness cannot declare it.
pub const EVENTS_AFTER_EXIT: &[&str] = &["grok-cli", "continue"];

/// The built-in harnesses whose stream carries no tool results (Letta Code 0.25.x shows
/// only each call's approval): every tool call ends `unknown`, with no output and no exit
/// code, once the next model call shows, so a failed command looks like any other; when
/// the next call never shows (held past `max_turns`), the last call's tools end
/// interrupted, not commands, though they ran. The parity view (`coder-eval harnesses --parity`, the live parity test) says so, with the
/// files each writes into the workspace.
pub const TOOL_RESULTS_UNREPORTED: &[(&str, &str)] = &[(
    "letta",
    ".letta/settings.local.json and .letta/.lettaignore",
)];

/// The built-in harnesses whose stream omits nested sub-agents: Claude Code (2.1.332's
/// general-purpose sub-agent has the `Agent` tool) prints no line for a sub-agent's own
/// sub-agents, so their tool calls and commands are missing from the turn record, and
/// their tokens are only in the CLI's cost (trial14c `sub1`: 4 threads ran
/// `echo after >> after.txt`, `commands` lists 2). The parity view (`coder-eval harnesses
/// --parity`) says so; [`NESTED_SUBAGENTS_TEXT`] is its wording.
pub const NESTED_SUBAGENTS_UNREPORTED: &[&str] = &["claude-code"];

/// What a harness in [`NESTED_SUBAGENTS_UNREPORTED`] cannot report, as the parity table
/// says it.
pub const NESTED_SUBAGENTS_TEXT: &str = "a sub-agent's own sub-agents (nested) print nothing \
     to the stream: their tool calls and commands are missing from the record \
     (command_executed, decide_within and the commands list do not see them; max_tool_calls \
     still holds against the scripted model, which counts every thread), and their tokens \
     are in the CLI's cost only";

/// A harness a `--components` folder adds ([`ComponentSource::added_harnesses`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AddedHarness {
    /// The harness name: the file's stem.
    pub name: String,
    /// The CLI's program name (`argv[0]` of its launch plan), when the plan gives one.
    pub program: Option<String>,
    /// Why the file cannot serve as a harness, with its causes: it does not load as a
    /// harness component, or its launch plan traps. `None` for a working component.
    pub error: Option<String>,
}

/// Where replacement components come from.
#[derive(Debug, Clone, Default)]
pub struct ComponentSource {
    /// `--components DIR`: `DIR/<name>.wasm` replaces the default for `<name>`.
    pub dir: Option<PathBuf>,
    /// `--component NAME=PATH` overrides, by name.
    pub overrides: BTreeMap<String, PathBuf>,
}

/// Errors resolving a harness.
#[derive(Debug, thiserror::Error)]
pub enum ResolveError {
    /// No such harness is built in and no file provides it. `hint` is empty or
    /// " (did you mean `x`?)" for the closest known name.
    #[error("unknown harness `{name}`{hint} (known: {known})")]
    UnknownHarness {
        name: String,
        hint: String,
        known: String,
    },
    /// The component failed to load or does not fit the contract.
    #[error(transparent)]
    Component(#[from] ComponentError),
}

impl ComponentSource {
    /// The file that replaces the default for `name`, if any.
    pub fn file_for(&self, name: &str) -> Option<PathBuf> {
        if let Some(path) = self.overrides.get(name) {
            return Some(path.clone());
        }
        let candidate = self.dir.as_ref()?.join(format!("{name}.wasm"));
        // Any entry of that name, a broken symlink included: it fails to load, naming
        // itself, rather than leave the default in its place unsaid.
        std::fs::symlink_metadata(&candidate)
            .is_ok()
            .then_some(candidate)
    }

    /// The harnesses a `--components DIR` folder adds to the built-in ones: each
    /// `DIR/NAME.wasm` whose `NAME` is no built-in harness, with the program its launch
    /// plan starts (`argv[0]` of a plan with no settings; `None` when the plan refuses
    /// them). A criterion component (it exports the grader world) is left out; any other
    /// file that does not load as a harness component, or whose launch plan traps, is
    /// listed with its `error` (and no program). Sorted by name; empty without a folder or
    /// when it cannot be read.
    pub fn added_harnesses(&self) -> Vec<AddedHarness> {
        let Some(dir) = &self.dir else {
            return Vec::new();
        };
        let Ok(entries) = std::fs::read_dir(dir) else {
            return Vec::new();
        };
        let mut names: Vec<String> = entries
            .filter_map(|e| e.ok())
            .filter_map(|e| {
                let path = e.path();
                (path.extension()? == "wasm")
                    .then(|| path.file_stem()?.to_str().map(String::from))
                    .flatten()
            })
            .filter(|name| !BUILTIN_HARNESSES.iter().any(|h| h.name == name))
            .collect();
        names.sort();
        names
            .into_iter()
            .filter_map(|name| {
                let failed = |name: String, err: &dyn std::error::Error| AddedHarness {
                    name,
                    program: None,
                    error: Some(error_chain(err)),
                };
                let loaded = match self.harness(&name) {
                    Ok(loaded) => loaded,
                    Err(err) if is_criterion(&err) => return None,
                    Err(err) => return Some(failed(name, &err)),
                };
                let planned = harness::Launcher::new(&loaded)
                    .and_then(|mut l| l.plan(&Default::default(), &Default::default()));
                Some(match planned {
                    Ok(plan) => AddedHarness {
                        name,
                        program: plan.ok().and_then(|p| p.argv.first().cloned()),
                        error: None,
                    },
                    Err(err) => failed(name, &err),
                })
            })
            .collect()
    }

    /// Loads and checks the harness component for `name`.
    pub fn harness(&self, name: &str) -> Result<LoadedComponent, ResolveError> {
        let cache = ComponentCache::harnesses();
        let loaded = match self.file_for(name) {
            Some(path) => cache.load_file(&path)?,
            None => {
                let builtin = BUILTIN_HARNESSES
                    .iter()
                    .find(|h| h.name == name)
                    .ok_or_else(|| {
                        let known = BUILTIN_HARNESSES.iter().map(|h| h.name);
                        ResolveError::UnknownHarness {
                            name: name.to_string(),
                            hint: crate::suggest::closest(name, known.clone())
                                .map(|best| format!(" (did you mean `{best}`?)"))
                                .unwrap_or_default(),
                            known: known.collect::<Vec<_>>().join(", "),
                        }
                    })?;
                cache.load_bytes(&format!("builtin:{name}"), builtin.wasm)?
            }
        };
        harness::check(&loaded)?;
        Ok(loaded)
    }
}

/// Whether a file refused as a harness is a criterion component: it exports the grader
/// world instead (a `--components` folder holds both kinds).
fn is_criterion(err: &ResolveError) -> bool {
    matches!(
        err,
        ResolveError::Component(ComponentError::WrongWorld { exports, .. })
            if exports.contains("coder-eval:grader/")
    )
}

/// The error's message followed by its causes, `: `-separated.
fn error_chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        text += &format!(": {cause}");
        source = cause.source();
    }
    text
}

/// Parses a `NAME=PATH` override.
pub fn parse_override(text: &str) -> Result<(String, PathBuf), String> {
    let (name, path) = text
        .split_once('=')
        .ok_or_else(|| format!("expected NAME=PATH, got `{text}`"))?;
    if name.is_empty() || path.is_empty() {
        return Err(format!("expected NAME=PATH, got `{text}`"));
    }
    Ok((name.to_string(), Path::new(path).to_path_buf()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The module docs of `embedded.rs` and this file point to where the criteria
    /// components are listed (`criteria::BUILTIN_CRITERIA`), not to where they were.
    #[test]
    fn the_docs_point_to_the_criteria_components_list() {
        let doc = |source: &str| -> String {
            source
                .lines()
                .filter_map(|line| line.strip_prefix("//!"))
                .collect::<Vec<_>>()
                .join(" ")
        };
        let embedded = doc(include_str!("embedded.rs"));
        assert!(
            embedded.contains("components::criteria::BUILTIN_CRITERIA"),
            "{embedded}"
        );
        assert!(!embedded.contains("grading::builtin"), "{embedded}");
        assert!(!criteria::BUILTIN_CRITERIA.is_empty());
        let components = doc(include_str!("components.rs"));
        assert!(
            components.contains("(`components/criteria.rs`)"),
            "{components}"
        );
    }

    #[test]
    fn an_unknown_harness_names_the_closest_one() {
        let err = ComponentSource::default()
            .harness("claud-code")
            .err()
            .expect("no such harness")
            .to_string();
        assert!(
            err.starts_with(
                "unknown harness `claud-code` (did you mean `claude-code`?) (known: claude-code, "
            ),
            "{err}"
        );
        let err = ComponentSource::default()
            .harness("zzz")
            .err()
            .expect("no such harness")
            .to_string();
        assert!(err.starts_with("unknown harness `zzz` (known: "), "{err}");
    }
}
