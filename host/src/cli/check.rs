//! `coder-eval check`.

use super::print_stdout;
use coder_eval::components::BUILTIN_HARNESSES;
use coder_eval::components::ComponentSource;
use coder_eval::exit_codes;
use coder_eval::task::{LoadNote, Task};
use std::path::{Path, PathBuf};

/// Loads and validates task files (and experiment files: `experiment_id:` at the top)
/// without running anything: the same checks `run` makes before any agent starts
/// (schema, paths, dataset rows, the agent fields the task's `agent.type` harness
/// honours; an experiment's sections, variants and prompt mutations). Warnings (keys ignored, dropped or mapped) go to
/// stderr as `warning: FILE:LINE: ...`; every error of a bad file as `error: ...` (not
/// only the first); one `ok` line per good file on stdout. Exit code:
/// 0 when every file loads, 2 otherwise.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  coder-eval check tasks/**/*.yaml
  coder-eval check task.yaml --harness codex
  coder-eval check task.yaml --criteria my-criteria/")]
pub struct CheckArgs {
    /// Task files (YAML).
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Check the agent fields against this harness instead of each task's `agent.type`
    /// (repeatable).
    #[arg(long)]
    harness: Vec<String>,
    /// Register the criterion plugin types of DIR (`DIR/criteria.yaml`, else every
    /// `DIR/<type>.wasm`) before loading the task files, as `run --criteria` does
    /// (repeatable).
    #[arg(long, value_name = "DIR")]
    criteria: Vec<PathBuf>,
}

pub fn run(args: CheckArgs) -> Result<i32, Box<dyn std::error::Error>> {
    // Every bad plugin folder is reported; the task files are not checked without them.
    let mut bad_dirs = 0;
    for dir in &args.criteria {
        if let Err(err) = coder_eval::grading::plugins::register_dir(dir) {
            super::print_error(&err);
            bad_dirs += 1;
        }
    }
    if bad_dirs > 0 {
        return Ok(exit_codes::USAGE);
    }
    let mut failed = 0;
    // Task id → the file that gave it first: `run` refuses one id from two files.
    let mut ids: std::collections::HashMap<String, &Path> = Default::default();
    // An experiment checked alongside that gives every variant an agent.type: its tasks
    // need no harness of their own (`run --experiment` takes it from there).
    let experiment_harness = args.files.iter().any(|f| {
        is_experiment(f)
            && coder_eval::suite::experiment::Experiment::load(f).is_ok_and(|e| e.sets_agent_type())
    });
    for file in &args.files {
        match check_file(file, &args.harness, experiment_harness) {
            Ok((line, task_ids)) => {
                let twice: Vec<String> = task_ids
                    .into_iter()
                    .filter_map(|id| match ids.get(&id) {
                        Some(first) if *first != file.as_path() => Some(format!(
                            "task `{id}` is given twice, by {} and by {} (run refuses it: \
                             task ids must differ)",
                            first.display(),
                            file.display()
                        )),
                        Some(_) => None,
                        None => {
                            ids.insert(id, file);
                            None
                        }
                    })
                    .collect();
                if twice.is_empty() {
                    print_stdout(&format!("{line}\n"));
                } else {
                    eprintln!("error: {}", twice.join("\nerror: "));
                    failed += 1;
                }
            }
            Err(message) => {
                eprintln!("error: {message}");
                failed += 1;
            }
        }
    }
    if failed > 0 {
        // Named by what they are: task files, experiment files, or both.
        let experiments = args.files.iter().filter(|f| is_experiment(f)).count();
        let kind = match experiments {
            0 => "task files",
            n if n == args.files.len() => "experiment files",
            _ => "files",
        };
        eprintln!("{failed} of {} {kind} did not load", args.files.len());
        return Ok(exit_codes::USAGE);
    }
    Ok(exit_codes::OK)
}

/// One file: its warnings on stderr, then `Ok((summary, its task ids))` or
/// `Err(one line)`. A task without `agent.type`, checked without `--harness` and without
/// an experiment that sets one (`experiment_harness`), is a warning: `run` needs
/// `--harness` for it.
fn check_file(
    file: &Path,
    harnesses: &[String],
    experiment_harness: bool,
) -> Result<(String, Vec<String>), String> {
    if is_experiment(file) {
        // An experiment file (`experiment_id:` at the top): loaded and checked as `run
        // --experiment` loads it; it gives no task ids of its own.
        return coder_eval::suite::experiment::Experiment::load(file)
            .map(|e| {
                (
                    format!(
                        "ok {} (experiment `{}`, {} variant{})",
                        file.display(),
                        e.experiment_id,
                        e.variants.len(),
                        if e.variants.len() == 1 { "" } else { "s" }
                    ),
                    Vec::new(),
                )
            })
            .map_err(|first| {
                // Every error of the file, not only the first (each on its own line).
                let all = std::fs::read_to_string(file)
                    .map(|text| {
                        coder_eval::suite::experiment::every_error::every_error(file, &text)
                    })
                    .unwrap_or_default();
                match all.len() {
                    0 | 1 => error_chain(&first),
                    _ => all
                        .iter()
                        .map(|e| error_chain(e))
                        .collect::<Vec<_>>()
                        .join("\nerror: "),
                }
            });
    }
    let loaded = Task::load_file(file).map_err(|first| {
        // Every error of the file, not only the first (each on its own `error:` line),
        // and the refusals of the checks after loading, run on what is left of the file
        // without the parts that failed: all in one pass, not one layer at a time.
        let (all, rest) = std::fs::read_to_string(file)
            .map(|text| coder_eval::task::every_error::every_error_and_rest(file, &text))
            .unwrap_or_default();
        let mut lines: Vec<String> = if all.len() > 1 {
            all.iter().map(|e| error_chain(e)).collect()
        } else {
            vec![error_chain(&first)]
        };
        if let Some(loaded) = rest.and_then(|text| Task::parse_file(&text, file).ok()) {
            for refusal in refusals(file, &loaded.tasks, harnesses) {
                if !lines.contains(&refusal) {
                    lines.push(refusal);
                }
            }
        }
        lines.join("\nerror: ")
    })?;
    print_warnings(file, &loaded.notes);
    if harnesses.is_empty()
        && !experiment_harness
        && let Some(task) = loaded.tasks.iter().find(|t| t.agent.harness.is_none())
    {
        eprintln!(
            "warning: {}: task `{}`: no harness given (set agent.type or pass --harness): \
             `coder-eval run` needs --harness for it",
            file.display(),
            task.task_id
        );
    }
    let errors = refusals(file, &loaded.tasks, harnesses);
    if !errors.is_empty() {
        return Err(errors.join("\nerror: "));
    }
    let skipped = loaded.tasks.iter().filter(|t| t.skip).count();
    let line = format!(
        "ok {} ({} task{}{})",
        file.display(),
        loaded.tasks.len(),
        if loaded.tasks.len() == 1 { "" } else { "s" },
        if skipped > 0 {
            format!(", {skipped} marked skip")
        } else {
            String::new()
        }
    );
    Ok((
        line,
        loaded.tasks.iter().map(|t| t.task_id.clone()).collect(),
    ))
}

/// Every refusal of every task of `file` after loading (its early stop, each harness),
/// each once, in that order.
fn refusals(file: &Path, tasks: &[Task], harnesses: &[String]) -> Vec<String> {
    let mut errors: Vec<String> = Vec::new();
    let mut refuse = |message: String| {
        if !errors.contains(&message) {
            errors.push(message);
        }
    };
    for task in tasks {
        let agentless = task.agent.harness.as_deref() == Some(coder_eval::run::NO_AGENT);
        if !agentless {
            // The early stop `run` checks before any agent starts (harness-independent).
            if let Err(e) = coder_eval::run::prepare::early_stop(task) {
                refuse(with_file(file, &error_chain(&e)));
            }
        }
    }
    for task in tasks {
        for harness in harnesses_of(task, harnesses) {
            if let Err(message) = check_on(file, task, &harness, harnesses.is_empty()) {
                refuse(message);
            }
        }
    }
    errors
}

/// The harnesses `task` is checked on: `--harness` (`given`), else its own `agent.type`;
/// none for an agentless task (no agent field to check).
fn harnesses_of(task: &Task, given: &[String]) -> Vec<String> {
    let agentless = task.agent.harness.as_deref() == Some(coder_eval::run::NO_AGENT);
    if given.is_empty() || agentless {
        task.agent
            .harness
            .iter()
            .filter(|h| !agentless || h.as_str() != coder_eval::run::NO_AGENT)
            .cloned()
            .collect()
    } else {
        given.to_vec()
    }
}

/// The refusals `run` makes of `task` on `harness`, by the one function it uses: an
/// unknown harness, or the first refusal of [`check_on_harness`]
/// (`coder_eval::run::prepare`). `own`: the harness is the task's `agent.type` (else
/// `--harness`).
///
/// [`check_on_harness`]: coder_eval::run::prepare::check_on_harness
fn check_on(file: &Path, task: &Task, harness: &str, own: bool) -> Result<(), String> {
    if !BUILTIN_HARNESSES.iter().any(|h| h.name == harness) {
        let known: Vec<&str> = BUILTIN_HARNESSES.iter().map(|h| h.name).collect();
        let hint = coder_eval::task::closest(harness, known.iter().copied())
            .map(|b| format!(" (did you mean `{b}`?)"))
            .unwrap_or_default();
        return Err(format!(
            "{}: agent.type `{harness}` is not a harness here{hint}; the harnesses are {}",
            file.display(),
            known.join(", ")
        ));
    }
    let from = if own {
        format!("{}: agent.type", file.display())
    } else {
        "--harness".into()
    };
    let loaded = ComponentSource::default()
        .harness(harness)
        .map_err(|e| format!("harness `{harness}`: {e}"))?;
    coder_eval::run::prepare::check_on_harness(task, harness, &loaded, &from)
        .map_err(|e| with_file(file, &error_chain(&e)))
}

/// Prints load notes as `warning: FILE:LINE: message`.
pub fn print_warnings(file: &Path, notes: &[LoadNote]) {
    for note in notes {
        match note.line {
            Some(line) => eprintln!("warning: {}:{line}: {}", file.display(), note.message),
            None => eprintln!("warning: {}: {}", file.display(), note.message),
        }
    }
}

/// `message`, led by `FILE: ` unless it names the file already.
fn with_file(file: &Path, message: &str) -> String {
    let name = file.display().to_string();
    if message.contains(&name) {
        message.to_string()
    } else {
        format!("{name}: {message}")
    }
}

/// An error and its causes on one line.
fn error_chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        let c = cause.to_string();
        if !text.contains(&c) {
            text = format!("{text}: {c}");
        }
        source = cause.source();
    }
    text
}

/// Whether `file` is an experiment file: a YAML mapping with `experiment_id` at its top
/// level (a task file has `task_id`).
fn is_experiment(file: &Path) -> bool {
    std::fs::read_to_string(file)
        .ok()
        .and_then(|text| serde_yaml_ng::from_str::<serde_yaml_ng::Value>(&text).ok())
        .is_some_and(|v| v.get("experiment_id").is_some() && v.get("task_id").is_none())
}
