//! Suites that answer "which agent is better": experiments and their variants
//! ([`experiment`], resolved by the 5-layer [`merge`] and prompt [`mutation`]s), replicates of each task ([`UnitId`]), the statistics over them
//! ([`stats`]), `coder-eval compare`, `run --resume` ([`resume`]), and plans split into
//! shards for other machines and merged again ([`plan`], [`shard`]).
//!
//! A suite is a list of units, each a [`UnitId`] (variant, task, harness, replicate);
//! `run::prepare_units` prepares them from the resolved tasks and `run::run_all` runs them
//! like any other prepared task. What a unit's result says of the machine (an
//! infrastructure error, run again) is [`infra`].

/// The most replicates one task × variant may have (`--repeats`, `repeats:` of a task or
/// an experiment): each is a CLI run with its own workspace and result folder, and a
/// typo (`--repeats 100000`) should be an error, not a week of runs.
pub const MAX_REPEATS: u32 = 10_000;

pub(crate) mod chart;
pub mod experiment;
pub mod folders;
pub mod infra;
pub mod lock;
pub mod merge;
pub(crate) mod mutation;
pub mod plan;
pub mod report;
pub mod resume;
pub mod shard;
pub mod stats;

pub use crate::results::{UnitId, replicate_dir_of};

use crate::results::{TaskResult, VariantStatistics};
use std::collections::BTreeMap;

/// The unit a result belongs to, from the fields `task.json` records.
pub fn unit_of(r: &TaskResult) -> UnitId {
    UnitId {
        variant: r.variant.clone(),
        task_id: r.task_id.clone(),
        harness: r.harness.clone(),
        replicate: r.replicate,
        replicates: r.replicates,
    }
}

/// Replicates asked for per (group, task): the group is the variant, else the harness
/// ([`UnitId::group`]).
pub type Expected = BTreeMap<(String, String), u32>;

/// What `units` ask for.
pub fn expected<'a>(units: impl IntoIterator<Item = &'a UnitId>) -> Expected {
    let mut e = Expected::new();
    for u in units {
        *e.entry((u.group(), u.task_id.clone())).or_default() += 1;
    }
    e
}

/// Whether a run's statistics are worth writing: it has variants or replicates.
pub(crate) fn is_suite(results: &[TaskResult]) -> bool {
    results
        .iter()
        .any(|r| r.variant.is_some() || r.replicate.is_some())
}

/// Per group (variant, else harness), in order of first appearance: its tasks'
/// statistics over their replicates. A task asked for (in `expected`) without any result
/// counts its replicates as missing, and so does a result an interrupt stopped
/// ([`resume::interrupted`]: never started, or cut off): `missing` as `merge` counts it,
/// not `errored`.
pub fn statistics(results: &[TaskResult], expected: &Expected) -> Vec<VariantStatistics> {
    let mut groups: Vec<String> = Vec::new();
    let mut by: BTreeMap<(String, String), Vec<stats::Replicate>> = BTreeMap::new();
    let mut order: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut note = |group: &str, task: &str, groups: &mut Vec<String>| {
        if !groups.iter().any(|g| g == group) {
            groups.push(group.to_string());
        }
        let tasks = order.entry(group.to_string()).or_default();
        if !tasks.iter().any(|t| t == task) {
            tasks.push(task.to_string());
        }
    };
    // Per (group, task): the results an interrupt stopped (counted missing).
    let mut stopped: BTreeMap<(String, String), u32> = BTreeMap::new();
    for r in results {
        let group = unit_of(r).group();
        note(&group, &r.task_id, &mut groups);
        if resume::interrupted(r) {
            *stopped.entry((group, r.task_id.clone())).or_default() += 1;
            continue;
        }
        by.entry((group, r.task_id.clone()))
            .or_default()
            .push(stats::Replicate {
                status: r.status,
                weighted_score: r.weighted_score,
            });
    }
    for (group, task) in expected.keys() {
        note(group, task, &mut groups);
    }
    groups
        .iter()
        .map(|g| {
            let tasks = order[g]
                .iter()
                .map(|t| {
                    let key = (g.clone(), t.clone());
                    let reps = by.get(&key).map_or(&[][..], Vec::as_slice);
                    let asked = expected
                        .get(&key)
                        .copied()
                        .unwrap_or(reps.len() as u32 + stopped.get(&key).copied().unwrap_or(0));
                    stats::task_statistics(t, reps, asked)
                })
                .collect();
            stats::variant_statistics(g, tasks)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::TaskStatus;

    /// `results/`'s module doc, which describes the machine output, names the files
    /// `suite/` writes too (by their names here), says where they are, and does not claim
    /// serde types only (it also writes files and names folders).
    #[test]
    fn the_results_doc_names_the_suites_machine_output() {
        let doc: String = include_str!("../results/mod.rs")
            .lines()
            .filter_map(|line| line.strip_prefix("//!"))
            .collect::<Vec<_>>()
            .join("\n");
        assert!(doc.contains("`plan.json`"));
        assert!(doc.contains(&format!("`DIR/{}`", folders::SHARD_FILE)));
        assert!(doc.contains(&format!("`DIR/{}`", folders::INVOCATION_FILE)));
        assert!(!doc.contains("Serde types only"));
    }

    fn result(variant: &str, task: &str, replicate: u32, status: TaskStatus) -> TaskResult {
        let mut r: TaskResult = serde_json::from_str(r#"{"result_version":1,"task_id":"t","harness":"claude-code","status":"SUCCESS","error":null,"description":null,"task_file":"/t.yaml","prompt":"p","requested_model":null,"cli":{"path":null,"version":null,"argv":[],"pgid":null,"caveats":[]},"run_limits":{"max_turns":null,"max_tool_calls":null,"turn_timeout_ms":null,"task_timeout_ms":null,"native":[]},"stop":null,"turn":null,"criteria":[],"weighted_score":null,"post_failure_criteria_results":[],"setup_ms":0,"grading_ms":0,"host_turn_work_us":0,"stderr_tail":"","scripted_model_requests":null,"paths":{"recording":"recording.jsonl","stderr":"stderr.log","workspace":"workspace"}}"#).unwrap();
        r.variant = Some(variant.into());
        r.task_id = task.into();
        r.replicate = Some(replicate);
        r.status = status;
        r
    }

    #[test]
    fn statistics_group_by_variant_and_count_the_missing() {
        let unit = |v: &str, t: &str, i: u32| UnitId {
            variant: Some(v.into()),
            task_id: t.into(),
            harness: "claude-code".into(),
            replicate: Some(i),
            replicates: Some(3),
        };
        // Asked: 2 variants × 2 tasks × 3 replicates; b/y has no result at all.
        let asked: Vec<UnitId> = ["a", "b"]
            .iter()
            .flat_map(|v| {
                ["x", "y"]
                    .iter()
                    .flat_map(move |t| (0..3).map(move |i| unit(v, t, i)))
            })
            .collect();
        let expected = expected(asked.iter());
        let results = vec![
            result("a", "x", 0, TaskStatus::Success),
            result("a", "x", 1, TaskStatus::Failure),
            result("a", "x", 2, TaskStatus::Error),
            result("a", "y", 0, TaskStatus::Success),
            result("b", "x", 0, TaskStatus::Failure),
        ];
        assert!(is_suite(&results));
        let s = statistics(&results, &expected);
        let names: Vec<&str> = s.iter().map(|v| v.variant.as_str()).collect();
        assert_eq!(names, vec!["a", "b"]);
        let a = &s[0];
        assert_eq!((a.graded, a.passes, a.errored, a.missing), (3, 2, 1, 2));
        // Task means 0.5 (x) and 1.0 (y): 0.75.
        assert_eq!(a.pass_rate.as_ref().unwrap().mean, 0.75);
        assert_eq!(a.tasks_flaky, 1);
        let b = &s[1];
        assert_eq!((b.tasks, b.tasks_graded, b.missing), (2, 1, 5));
        // Issue 15 trial: an interrupted shard counted its never-started units `errored`
        // while merge called them `missing`. Stopped by the interrupt, started or not:
        // missing, with or without the units asked for.
        let mut stopped = result("a", "x", 2, TaskStatus::Error);
        stopped.error_kind = Some("interrupted".into());
        let mut results = results;
        results[2] = stopped;
        for expected in [expected.clone(), Expected::new()] {
            let a = &statistics(&results, &expected)[0];
            assert_eq!(
                (a.errored, a.missing),
                (0, if expected.is_empty() { 1 } else { 3 })
            );
        }
        let y = b.per_task.iter().find(|t| t.task_id == "y").unwrap();
        assert_eq!((y.missing, y.pass_rate), (3, None));
        assert_eq!(b.pass_rate.as_ref().unwrap().mean, 0.0);
    }
}
