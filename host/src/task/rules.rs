//! Load-time rules beyond the schema, between a task's criteria and the rest of the
//! task: what a criterion needs is there, and `suite_thresholds` only on dataset tasks.

use super::{CriterionSpec, Task, compat};

/// What a criterion needs from the task, known at load, so a task that could only fail
/// is refused before any agent starts: `reference_comparison` needs the task's
/// `reference:`; a `component` criterion's `.wasm` file must exist.
pub(super) fn criteria_have_their_inputs(
    criteria: &[CriterionSpec],
    task: &Task,
    text: &str,
) -> Result<(), String> {
    use crate::grading::{Criterion, HostCriterion};
    for (i, c) in criteria.iter().enumerate() {
        let line = || {
            compat::key_line(text, &["success_criteria"])
                .map_or(String::new(), |line| format!("line {line}: "))
        };
        match &c.criterion {
            Criterion::Host(HostCriterion::ReferenceComparison(_)) if task.reference.is_none() => {
                return Err(format!(
                    "{}success_criteria[{i}] (reference_comparison): compares with the \
                     task's reference solution, and this task has no `reference:`: add one",
                    line()
                ));
            }
            Criterion::Component { path, .. } if !task.dir.join(path).is_file() => {
                return Err(format!(
                    "{}success_criteria[{i}] (component): no file {} (the path is relative \
                     to the task file's folder)",
                    line(),
                    task.dir.join(path).display()
                ));
            }
            _ => {}
        }
    }
    Ok(())
}

/// `suite_thresholds` are judged over the rows of a dataset task: on a task without
/// `dataset:` they would never be judged, so they are refused, naming the criterion and
/// the line.
pub(super) fn suite_thresholds_need_rows(
    criteria: &[CriterionSpec],
    text: &str,
) -> Result<(), String> {
    let lines: Vec<usize> = text
        .lines()
        .enumerate()
        .filter(|(_, l)| {
            let t = l.trim_start().trim_start_matches("- ");
            t.starts_with("suite_thresholds:") || l.contains(" suite_thresholds:")
        })
        .map(|(i, _)| i + 1)
        .collect();
    let with: Vec<usize> = criteria
        .iter()
        .enumerate()
        .filter(|(_, c)| c.suite_thresholds.is_some())
        .map(|(i, _)| i)
        .collect();
    match with.first() {
        None => Ok(()),
        Some(&i) => Err(format!(
            "{}success_criteria[{i}].suite_thresholds: judged over the rows of a dataset task, \
             and this task has no `dataset:`: add one, or remove suite_thresholds",
            lines
                .first()
                .map_or(String::new(), |line| format!("line {line}: "))
        )),
    }
}
