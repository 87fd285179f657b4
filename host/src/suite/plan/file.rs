//! `plan.json` as written (version 2: units in groups of replicates) and as read (either
//! version), see the module docs of `suite::plan`.

use super::{PLAN_VERSION, Plan, PlanUnit, UnitInputs, UnitKind};
use crate::results::UnitId;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// `plan.json` as read: version 2's `groups` or version 1's `units`.
#[derive(Deserialize)]
pub(super) struct PlanFile {
    pub(super) plan_version: u32,
    plan_id: String,
    coder_eval_version: String,
    args: Vec<String>,
    #[serde(default)]
    units: Vec<PlanUnit>,
    #[serde(default)]
    groups: Vec<Group>,
}

/// The replicates of one task × variant × harness (version 2).
#[derive(Deserialize)]
struct Group {
    kind: UnitKind,
    variant: Option<String>,
    task_id: String,
    harness: String,
    task_file: PathBuf,
    /// The units' inputs, `replicate` null.
    inputs: UnitInputs,
    /// `None`: one unit that runs once.
    replicates: Option<Vec<u32>>,
    ids: Vec<String>,
}

impl PlanFile {
    /// The plan with its units expanded; `Err((group index, why))` when a group's
    /// replicates and ids do not pair up.
    pub(super) fn into_plan(self) -> Result<Plan, (usize, String)> {
        let mut units = self.units;
        for (g, group) in self.groups.into_iter().enumerate() {
            // The group's count: every replicate of its task × variant × harness is in it.
            let count = group
                .replicates
                .as_ref()
                .and_then(|r| r.iter().max())
                .map(|m| m.saturating_add(1));
            let replicates: Vec<Option<u32>> = match &group.replicates {
                Some(r) => r.iter().copied().map(Some).collect(),
                None => vec![None],
            };
            if replicates.len() != group.ids.len() {
                return Err((
                    g,
                    format!(
                        "{} replicate(s) but {} id(s): the file was edited",
                        replicates.len(),
                        group.ids.len()
                    ),
                ));
            }
            for (replicate, id) in replicates.into_iter().zip(group.ids) {
                let unit = UnitId {
                    variant: group.variant.clone(),
                    task_id: group.task_id.clone(),
                    harness: group.harness.clone(),
                    replicate,
                    replicates: count,
                };
                let mut inputs = group.inputs.clone();
                inputs.replicate = replicate;
                units.push(PlanUnit {
                    id,
                    kind: group.kind,
                    result_dir: unit.rel_dir().display().to_string(),
                    unit,
                    task_file: group.task_file.clone(),
                    inputs,
                });
            }
        }
        Ok(Plan {
            plan_version: self.plan_version,
            plan_id: self.plan_id,
            coder_eval_version: self.coder_eval_version,
            args: self.args,
            units,
        })
    }
}

/// A group as written: borrowed from the plan's units, its inputs once.
#[derive(Serialize)]
struct GroupOut<'a> {
    kind: UnitKind,
    variant: &'a Option<String>,
    task_id: &'a str,
    harness: &'a str,
    task_file: &'a Path,
    inputs: UnitInputs,
    replicates: Option<Vec<u32>>,
    ids: Vec<&'a str>,
}

#[derive(Serialize)]
struct PlanOut<'a> {
    plan_version: u32,
    plan_id: &'a str,
    coder_eval_version: &'a str,
    args: &'a [String],
    groups: Vec<GroupOut<'a>>,
}

/// Whether `b` is another replicate of `a`'s group: all but the replicate index the same.
fn same_group(a: &PlanUnit, b: &PlanUnit) -> bool {
    a.unit.replicate.is_some()
        && b.unit.replicate.is_some()
        && a.kind == b.kind
        && a.unit.variant == b.unit.variant
        && a.unit.task_id == b.unit.task_id
        && a.unit.harness == b.unit.harness
        && a.task_file == b.task_file
        && a.inputs.differences(&b.inputs) == ["the replicate index"]
}

impl Serialize for Plan {
    /// Version 2 ([`PLAN_VERSION`]): consecutive replicates of one task × variant ×
    /// harness are one group.
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut groups: Vec<GroupOut> = Vec::new();
        let mut first: Option<&PlanUnit> = None;
        for u in &self.units {
            if let (Some(f), Some(g)) = (first, groups.last_mut())
                && same_group(f, u)
            {
                g.replicates
                    .get_or_insert_with(Vec::new)
                    .extend(u.unit.replicate);
                g.ids.push(&u.id);
                continue;
            }
            first = Some(u);
            let mut inputs = u.inputs.clone();
            inputs.replicate = None;
            groups.push(GroupOut {
                kind: u.kind,
                variant: &u.unit.variant,
                task_id: &u.unit.task_id,
                harness: &u.unit.harness,
                task_file: &u.task_file,
                inputs,
                replicates: u.unit.replicate.map(|r| vec![r]),
                ids: vec![&u.id],
            });
        }
        PlanOut {
            plan_version: PLAN_VERSION,
            plan_id: &self.plan_id,
            coder_eval_version: &self.coder_eval_version,
            args: &self.args,
            groups,
        }
        .serialize(serializer)
    }
}
