//! What a task's loading put into its result: the loader's notes on keys it did not take
//! as written (`task.json` → `load_notes`, filled by `task::compat`) and the dataset row
//! a task was made from (`task.json` → `row`).

use serde::{Deserialize, Serialize};

/// What the loader did with a key it did not take as written. Recorded in `task.json`
/// as `load_notes` and printed on stderr as `warning: <file>:<line>: <message>`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoadNote {
    /// The key, dotted from the top (`max_iterations`, `agent.max_turns`).
    pub key: String,
    pub action: NoteAction,
    /// Where a mapped key went (`run_limits.max_turns`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
    /// 1-based line of the key in the task file; `null` when not found.
    pub line: Option<usize>,
    /// One sentence for the user.
    pub message: String,
}

/// [`LoadNote::action`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NoteAction {
    /// An unknown top-level key: not used.
    Ignored,
    /// A key coder_eval once had and no longer uses: not used.
    Dropped,
    /// A legacy placement, moved to `to`.
    Mapped,
    /// Accepted and recorded, but nothing here enforces it (e.g. docker-only limits
    /// under the tempdir driver).
    NotEnforced,
}

/// Which dataset row a task is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RowInfo {
    /// The task file's own `task_id`.
    pub suite_id: String,
    /// The row's id (`dataset.id_field`).
    pub row_id: String,
}
