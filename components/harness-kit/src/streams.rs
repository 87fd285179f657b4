//! Stream reducers shared by the harnesses of CLIs that print the same stream: a fork
//! reuses its parent's reducer instead of a copy, under a cargo feature of this crate.
//!
//! - [`claude`] (feature `claude-stream`): Claude Code's `stream-json`, also printed by
//!   Qwen Code (`qwen -o stream-json`), whose dialect differs in how a model call's lines
//!   are grouped ([`claude::Dialect`]);
//! - [`opencode`] (feature `opencode-stream`): OpenCode's `run --format json`, also printed
//!   unchanged by its fork Kilo (`kilo run --format json`).
//!
//! They live here rather than in their harness crates because a crate that depends on a
//! sibling harness would, in one workspace build, get that harness's exported world too
//! (cargo unifies the sibling's `export` feature).

#[cfg(feature = "claude-stream")]
pub mod claude;
#[cfg(feature = "opencode-stream")]
pub mod opencode;
