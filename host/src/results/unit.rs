//! [`UnitId`]: what one unit of a suite is (task × variant × harness × replicate) and
//! where its results go (the layout in [`crate::results`]). Made by `suite`, carried by
//! `run::Prepared`.

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// One unit of work: a task on a harness, under a variant, as one replicate. Its result
/// folder, relative to the run's folder ([`UnitId::rel_dir`]):
///
/// ```text
/// <task_id>/<harness>/                       no experiment, one replicate (as before)
/// <variant>/<task_id>/<harness>/             an experiment: a variant's runs sit together
/// [<variant>/]<task_id>/<harness>/r00/       replicates (--repeats N, N > 1)
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct UnitId {
    /// The variant's `variant_id`; `None` outside an experiment.
    pub variant: Option<String>,
    pub task_id: String,
    pub harness: String,
    /// The replicate index; `None` when the task runs once.
    pub replicate: Option<u32>,
}

impl UnitId {
    /// The unit's result folder, relative to the run's folder.
    pub fn rel_dir(&self) -> PathBuf {
        let mut dir = PathBuf::new();
        if let Some(v) = &self.variant {
            dir.push(v);
        }
        dir.push(&self.task_id);
        dir.push(&self.harness);
        if let Some(r) = self.replicate {
            dir.push(replicate_dir(r));
        }
        dir
    }

    /// `variant/task/harness/r00`, for messages.
    pub fn label(&self) -> String {
        self.rel_dir().display().to_string()
    }

    /// The group its statistics fall into: the variant, else the harness.
    pub fn group(&self) -> String {
        match &self.variant {
            Some(v) if !v.is_empty() => v.clone(),
            _ => self.harness.clone(),
        }
    }
}

/// A replicate's folder name: `r00`, `r01`, … (`r100` past 99).
pub fn replicate_dir(index: u32) -> String {
    format!("r{index:02}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_of_units() {
        let mut u = UnitId {
            variant: None,
            task_id: "suite/row1".into(),
            harness: "claude-code".into(),
            replicate: None,
        };
        assert_eq!(u.label(), "suite/row1/claude-code");
        u.variant = Some("opus".into());
        u.replicate = Some(3);
        assert_eq!(u.label(), "opus/suite/row1/claude-code/r03");
        assert_eq!(u.group(), "opus");
    }
}
