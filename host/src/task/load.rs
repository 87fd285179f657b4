//! Reading a task file: [`Task::load`] and its kin, from a path or from text, into one
//! task or one per `dataset:` row, every error naming the file, line and field.

use super::compat::{self, LoadNote, NoteAction};
use super::file::{TaskFile, common};
use super::rules::{criteria_have_their_inputs, suite_thresholds_need_rows};
use super::{CriterionSpec, LoadedFile, RowInfo, Task, TaskError, dataset, duplicate_key};
use std::path::{Path, PathBuf};

impl Task {
    /// Loads and validates a task file that holds one task (not a `dataset:` task: see
    /// [`Task::load_file`]).
    pub fn load(path: &Path) -> Result<Task, TaskError> {
        let text = read(path)?;
        Task::parse(&text, path)
    }

    /// Loads and validates a task file: one task, or one per dataset row.
    pub fn load_file(path: &Path) -> Result<LoadedFile, TaskError> {
        Task::load_file_with(path, &dataset::Selection::default())
    }

    /// [`Task::load_file`] with a command-line selection of dataset rows.
    pub(crate) fn load_file_with(
        path: &Path,
        select: &dataset::Selection,
    ) -> Result<LoadedFile, TaskError> {
        let text = read(path)?;
        Task::parse_file_with(&text, path, select)
    }

    /// The task with id `task_id` from a task file (a dataset row's id is
    /// `<task_id>/<row_id>`), e.g. to grade a run again.
    pub fn load_id(path: &Path, task_id: &str) -> Result<Task, TaskError> {
        let loaded = Task::load_file(path)?;
        let ids: Vec<String> = loaded.tasks.iter().map(|t| t.task_id.clone()).collect();
        loaded
            .tasks
            .into_iter()
            .find(|t| t.task_id == task_id)
            .ok_or_else(|| TaskError::Rule {
                path: path.to_path_buf(),
                message: format!("holds no task `{task_id}` (it holds {})", ids.join(", ")),
            })
    }

    /// Parses a task file's text that holds one task; `path` names it in errors and
    /// anchors relative paths.
    pub fn parse(text: &str, path: &Path) -> Result<Task, TaskError> {
        let mut loaded = Task::parse_file(text, path)?;
        if loaded.tasks.len() != 1 || loaded.tasks[0].row.is_some() {
            return Err(TaskError::Rule {
                path: path.to_path_buf(),
                message: format!(
                    "a dataset task: it fans out into {} tasks (load it with Task::load_file)",
                    loaded.tasks.len()
                ),
            });
        }
        Ok(loaded.tasks.remove(0))
    }

    /// Parses a task file's text: one task, or one per `dataset:` row.
    pub fn parse_file(text: &str, path: &Path) -> Result<LoadedFile, TaskError> {
        Task::parse_file_with(text, path, &dataset::Selection::default())
    }

    /// [`Task::parse_file`] with a command-line selection of dataset rows.
    pub(crate) fn parse_file_with(
        text: &str,
        path: &Path,
        select: &dataset::Selection,
    ) -> Result<LoadedFile, TaskError> {
        let invalid = |err: serde_yaml_ng::Error| {
            let (line, column) = err.location().map_or((0, 0), |l| (l.line(), l.column()));
            let (line, column, message) =
                duplicate_key::place(text, line, column, with_suggestion(&err.to_string()));
            // A field's own validation error at the field's line, not its mapping's first.
            let (line, column) = super::field_line::place(text, line, column, &message);
            TaskError::Invalid {
                path: path.to_path_buf(),
                line,
                column,
                message,
            }
        };
        // A rule's "line N: ..." (time-budget mode, docker, criteria inputs) in the one
        // location format, `FILE:LINE:COLUMN: ...` (the column of the key on that line).
        let rule = |message: String| match message
            .strip_prefix("line ")
            .and_then(|rest| rest.split_once(": "))
            .and_then(|(n, rest)| Some((n.parse::<usize>().ok()?, rest)))
        {
            Some((line, rest)) => TaskError::Invalid {
                path: path.to_path_buf(),
                line,
                column: super::field_line::column_of(text, line),
                message: rest.to_string(),
            },
            None => TaskError::Rule {
                path: path.to_path_buf(),
                message,
            },
        };
        super::yaml_limits::check(text).map_err(rule)?;
        let value: serde_yaml_ng::Value = serde_yaml_ng::from_str(text).map_err(invalid)?;
        if !value.is_mapping() {
            return Err(rule(
                "a task file is a mapping of keys (task_id, initial_prompt, ...)".into(),
            ));
        }
        let mut notes = compat::top_level_notes(text, &value);
        let is_dataset = value.get("dataset").is_some_and(|d| !d.is_null());
        let dir = path
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from("."));
        let dir = std::path::absolute(&dir).unwrap_or(dir);
        // Kept absolute, so a run's task.json names a file that can be found from anywhere.
        let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
        if !is_dataset {
            let file: TaskFile<CriterionSpec> = serde_yaml_ng::from_str(text).map_err(invalid)?;
            let (mut task, criteria, _) =
                common(file, text, &dir, &absolute, &mut notes).map_err(rule)?;
            suite_thresholds_need_rows(&criteria, text).map_err(rule)?;
            criteria_have_their_inputs(&criteria, &task, text).map_err(rule)?;
            task.success_criteria = criteria;
            task.load_notes = notes.clone();
            return Ok(LoadedFile {
                tasks: vec![task],
                notes,
            });
        }
        // A dataset task: the criteria are parsed per row, after substitution.
        let file: TaskFile<serde_yaml_ng::Value> =
            serde_yaml_ng::from_str(text).map_err(invalid)?;
        let (template, criteria, spec) =
            common(file, text, &dir, &absolute, &mut notes).map_err(rule)?;
        let spec = spec.ok_or_else(|| rule("dataset: an empty block".into()))?;
        let rows = dataset::load_rows_with(&spec, &dir, select).map_err(rule)?;
        if rows.is_empty()
            && let Some(split) = &select.split
        {
            notes.push(LoadNote {
                key: "dataset".into(),
                action: NoteAction::Ignored,
                to: None,
                line: compat::key_line(text, &["dataset"]),
                message: format!(
                    "no row of this dataset is in split `{split}`: the task is left out"
                ),
            });
        }
        let mut tasks = Vec::with_capacity(rows.len());
        for row in rows {
            let mut task = template.clone();
            task.task_id = format!("{}/{}", template.task_id, row.id);
            task.prompt = dataset::substitute(&template.prompt, &row).map_err(rule)?;
            task.success_criteria = Vec::with_capacity(criteria.len());
            for (i, criterion) in criteria.iter().enumerate() {
                let mut criterion = criterion.clone();
                dataset::substitute_value(&mut criterion, &row).map_err(rule)?;
                let parsed: CriterionSpec = serde_yaml_ng::from_value(criterion).map_err(|e| {
                    rule(format!(
                        "dataset row `{}` ({}): success_criteria[{i}]: {}",
                        row.id,
                        row.origin,
                        with_suggestion(&e.to_string())
                    ))
                })?;
                task.success_criteria.push(parsed);
            }
            task.row = Some(RowInfo {
                suite_id: template.task_id.clone(),
                row_id: row.id.clone(),
            });
            task.load_notes = notes.clone();
            tasks.push(task);
        }
        Ok(LoadedFile { tasks, notes })
    }
}

/// The task file's text. A folder is refused by name, pointing at the task file in it
/// when there is one (`coder-eval run tasks/hello_date` is a common first try).
fn read(path: &Path) -> Result<String, TaskError> {
    if path.is_dir() {
        let inside = ["task.yaml", "task.yml"]
            .iter()
            .map(|name| path.join(name))
            .find(|file| file.is_file());
        let message = match inside {
            Some(file) => format!(
                "is a folder, not a task file: name the task file, e.g. {}",
                file.display()
            ),
            None => "is a folder, not a task file".to_string(),
        };
        return Err(TaskError::Rule {
            path: path.to_path_buf(),
            message,
        });
    }
    std::fs::read_to_string(path).map_err(|source| TaskError::Read {
        path: path.to_path_buf(),
        source,
    })
}

/// Drops serde_yaml_ng's trailing " at line L column C" (the error already leads with the
/// position) and adds "did you mean `x`?" to an "unknown field `y`, expected one of ..."
/// message.
pub(super) fn with_suggestion(message: &str) -> String {
    let message = match message.rfind(" at line ") {
        Some(i) => &message[..i],
        None => message,
    };
    let Some((_, rest)) = message.split_once("unknown field `") else {
        return message.to_string();
    };
    let Some((unknown, expected)) = rest.split_once('`') else {
        return message.to_string();
    };
    match crate::suggest::closest(unknown, expected.split('`').skip(1).step_by(2)) {
        Some(best) => format!("{message} (did you mean `{best}`?)"),
        None => message.to_string(),
    }
}
