//! `lineage` in an experiment unit's `task.json`: which layer of the 5-layer merge
//! (`suite::merge`) set each of the task's fields, and to what.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The layers, in order (coder_eval's names, as `lineage` spells them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Layer {
    Default,
    ExperimentDefaults,
    Task,
    Variant,
    Cli,
    /// A prompt mutation changed the prompt after the merge.
    Mutation,
}

/// Which layer set a field, and to what.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LineageEntry {
    pub value: serde_json::Value,
    pub source: Layer,
    /// E.g. the variant id, the `-D` argument, or the layers an appended list holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_detail: Option<String>,
}

/// Dotted field path → its lineage.
pub type Lineage = BTreeMap<String, LineageEntry>;
