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
/// [<variant>/]<task_id>/<harness>/r00/       replicates (--repeats N, N > 1): r00 … r99
/// [<variant>/]<task_id>/<harness>/r000/      N from 101 to 1000: r000 … r999 (and r0000
///                                            from 1001), so the folders sort in order
/// ```
///
/// A unit is the same unit whatever its [`UnitId::replicates`] (equality, hashing and
/// order leave it out): it only says how wide the replicate folder's number is.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct UnitId {
    /// The variant's `variant_id`; `None` outside an experiment.
    pub variant: Option<String>,
    pub task_id: String,
    pub harness: String,
    /// The replicate index; `None` when the task runs once.
    pub replicate: Option<u32>,
    /// How many replicates the unit's task × variant × harness has: its folder's number
    /// is as wide as the largest index's ([`replicate_dir_of`]). `None` (a result of an
    /// older coder-eval, which wrote `r{index:02}`): two digits at least.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicates: Option<u32>,
}

impl UnitId {
    /// What a unit is, `replicates` left out.
    fn key(&self) -> (&Option<String>, &str, &str, Option<u32>) {
        (&self.variant, &self.task_id, &self.harness, self.replicate)
    }
}

impl PartialEq for UnitId {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}

impl Eq for UnitId {}

impl std::hash::Hash for UnitId {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.key().hash(state);
    }
}

impl PartialOrd for UnitId {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for UnitId {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.key().cmp(&other.key())
    }
}

impl UnitId {
    /// The unit's result folder, relative to the run's folder.
    pub fn rel_dir(&self) -> PathBuf {
        self.rel_dir_with(self.replicate.map(|r| replicate_dir_of(r, self.replicates)))
    }

    /// Where the unit's result folder may be, relative to the run's folder: its own
    /// ([`UnitId::rel_dir`]) first, then its replicate folder at each other width
    /// coder-eval has written (`r05` of an older coder-eval, or of a run whose repeat
    /// count was another; `r005`, `r0005`), for `--resume` and `merge` to find it.
    pub fn candidate_dirs(&self) -> Vec<PathBuf> {
        let own = self.rel_dir();
        let Some(r) = self.replicate else {
            return vec![own];
        };
        let mut dirs = vec![own];
        for width in 2..=MAX_REPLICATE_DIGITS {
            let dir = self.rel_dir_with(Some(format!("r{r:0width$}")));
            if !dirs.contains(&dir) {
                dirs.push(dir);
            }
        }
        dirs
    }

    fn rel_dir_with(&self, replicate: Option<String>) -> PathBuf {
        let mut dir = PathBuf::new();
        if let Some(v) = &self.variant {
            dir.push(v);
        }
        dir.push(&self.task_id);
        dir.push(&self.harness);
        if let Some(r) = replicate {
            dir.push(r);
        }
        dir
    }

    /// `variant/task/harness/r00`, for messages.
    pub fn label(&self) -> String {
        self.rel_dir().display().to_string()
    }

    /// The group its statistics fall into: the variant, else the harness.
    pub(crate) fn group(&self) -> String {
        match &self.variant {
            Some(v) if !v.is_empty() => v.clone(),
            _ => self.harness.clone(),
        }
    }
}

/// The widest replicate number a folder has: 10000 replicates at most (`r0000`…`r9999`).
const MAX_REPLICATE_DIGITS: usize = 4;

/// A replicate's folder name among `replicates` replicates: its number as wide as the
/// largest index's, two digits at least (`r00`…`r99` up to 100 replicates, `r000`…`r999`
/// up to 1000, so that the folders sort in their order). `None`: two digits at least
/// (what coder-eval wrote before it padded to the count).
pub fn replicate_dir_of(index: u32, replicates: Option<u32>) -> String {
    let largest = replicates.map_or(0, |n| n.saturating_sub(1)).max(index);
    let width = match replicates {
        Some(_) => largest.to_string().len().max(2),
        None => 2,
    };
    format!("r{index:0width$}")
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
            replicates: None,
        };
        assert_eq!(u.label(), "suite/row1/claude-code");
        u.variant = Some("opus".into());
        u.replicate = Some(3);
        assert_eq!(u.label(), "opus/suite/row1/claude-code/r03");
        assert_eq!(u.group(), "opus");
    }

    #[test]
    fn replicate_folders_are_as_wide_as_the_largest_index() {
        // Up to 100 replicates: two digits, as before.
        assert_eq!(replicate_dir_of(7, Some(100)), "r07");
        assert_eq!(replicate_dir_of(99, Some(100)), "r99");
        // 101 to 1000: three; 1001 to 10000: four.
        assert_eq!(replicate_dir_of(7, Some(101)), "r007");
        assert_eq!(replicate_dir_of(100, Some(101)), "r100");
        assert_eq!(replicate_dir_of(999, Some(1000)), "r999");
        assert_eq!(replicate_dir_of(5, Some(10000)), "r0005");
        // Unknown count (an older result): two digits at least.
        assert_eq!(replicate_dir_of(5, None), "r05");
        assert_eq!(replicate_dir_of(1079, None), "r1079");
        // In order by name, whatever the count.
        let mut names: Vec<String> = (0..1100).map(|i| replicate_dir_of(i, Some(1100))).collect();
        let in_order = names.clone();
        names.sort();
        assert_eq!(names, in_order);
    }

    #[test]
    fn a_unit_is_the_same_whatever_its_count_and_is_found_at_either_width() {
        let unit = |replicates| UnitId {
            variant: None,
            task_id: "t".into(),
            harness: "codex".into(),
            replicate: Some(5),
            replicates,
        };
        assert_eq!(unit(Some(200)), unit(None));
        assert_eq!(unit(Some(200)).label(), "t/codex/r005");
        let dirs: Vec<String> = unit(Some(200))
            .candidate_dirs()
            .iter()
            .map(|d| d.display().to_string())
            .collect();
        assert_eq!(dirs, ["t/codex/r005", "t/codex/r05", "t/codex/r0005"]);
    }
}
