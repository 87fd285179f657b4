//! The HTML ids of the report's sections (a task, a task on a harness, one run), shared by
//! the report and the trajectory view so a link and its target always agree.

use crate::results::TaskResult;

/// A fragment id for a task, or for a task on one harness: letters, digits and `-` kept,
/// any other byte written `_XX` (hex), so two names never share an id.
pub(crate) fn anchor(task: &str, harness: &str) -> String {
    if harness.is_empty() {
        format!("task-{}", id_part(task))
    } else {
        format!("run-{}-{}", id_part(task), id_part(harness))
    }
}

/// The HTML id of one run's section: its task, harness, variant and replicate (each run
/// its own, so a matrix cell links to the run it shows).
pub(crate) fn run_anchor(r: &TaskResult) -> String {
    let mut id = anchor(&r.task_id, &r.harness);
    if let Some(v) = &r.variant {
        id.push_str(&format!("-v{}", id_part(v)));
    }
    if let Some(i) = r.replicate {
        id.push_str(&format!("-r{i}"));
    }
    id
}

/// `text` as a part of an HTML id: ASCII letters and digits kept, every other byte as
/// `_xx` (`-` too, so the parts' separator cannot come from a name).
fn id_part(text: &str) -> String {
    text.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() {
                (b as char).to_string()
            } else {
                format!("_{b:02x}")
            }
        })
        .collect()
}
