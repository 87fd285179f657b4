//! What a run runs: the criterion plugins, the experiment, the task files resolved under
//! its variants and the command line's overrides, the tags' selection, and the harnesses.

use super::{Flow, RunArgs, refused, usage};
use coder_eval::components::{BUILTIN_HARNESSES, ComponentSource};
use coder_eval::locate;
use coder_eval::suite::experiment::{Experiment, Overrides, ResolvedTask};
use coder_eval::task::{LoadNote, Task};
use std::path::PathBuf;

/// The task files of a run, loaded and selected.
pub(super) struct Loaded {
    pub(super) experiment: Option<Experiment>,
    /// An experiment or field overrides are given: the harness is each variant's.
    pub(super) layered: bool,
    /// Each task file's load notes, to print once.
    pub(super) warnings: Vec<(PathBuf, Vec<LoadNote>)>,
    /// The selected tasks to run (not the skipped ones).
    pub(super) tasks: Vec<Task>,
    /// The selected tasks to run, with their variant and replicates.
    pub(super) resolved: Vec<ResolvedTask>,
    /// The selected tasks marked `skip: true` (without `--include-skipped`).
    pub(super) skip: Vec<ResolvedTask>,
}

impl Loaded {
    /// The success criteria of each task to run, by task id (for the suite thresholds).
    pub(super) fn criteria(&self) -> coder_eval::run::thresholds::CriteriaByTask {
        self.tasks
            .iter()
            .map(|t| (t.task_id.clone(), t.success_criteria.clone()))
            .collect()
    }
}

/// Registers `--criteria`, loads `--experiment` and resolves every task file; refuses
/// (exit 2, the error printed) a bad one, or a selection that leaves no task.
pub(super) fn load(args: &RunArgs) -> Flow<Loaded> {
    let select = coder_eval::task::dataset::Selection {
        split: args.split.clone(),
        sample: args.sample,
        sample_per_stratum: args.sample_per_stratum,
    };
    for dir in &args.criteria {
        if let Err(err) = coder_eval::grading::plugins::register_dir(dir) {
            return refused(&err);
        }
    }
    let experiment = match &args.experiment {
        Some(path) => match Experiment::load(path) {
            Ok(e) => Some(e),
            Err(err) => return refused(&err),
        },
        None => None,
    };
    let (overrides, layered) = overrides(args, experiment.as_ref())?;
    let mut tasks = Vec::new();
    let mut resolved = Vec::new();
    let mut warnings = Vec::new();
    for path in &args.tasks {
        match coder_eval::suite::experiment::resolve_file(
            path,
            &select,
            experiment.as_ref(),
            &overrides,
        ) {
            Ok((loaded, notes)) => {
                warnings.push((path.clone(), notes));
                tasks.extend(loaded.iter().map(|r| r.task.clone()));
                resolved.extend(loaded);
            }
            Err(err) => return refused(&err),
        }
    }
    let selected = |t: &Task| {
        (args.tags.is_empty() || t.tags.iter().any(|tag| args.tags.contains(tag)))
            && !t.tags.iter().any(|tag| args.exclude_tags.contains(tag))
    };
    let given = tasks.len();
    tasks.retain(selected);
    if tasks.is_empty() {
        return usage(format!(
            "none of the {given} tasks is selected by --tags / --exclude-tags / --split"
        ));
    }
    resolved.retain(|r| selected(&r.task));
    let (skip, resolved): (Vec<_>, Vec<_>) = resolved
        .into_iter()
        .partition(|r| r.task.skip && !args.include_skipped);
    let tasks: Vec<Task> = resolved.iter().map(|r| r.task.clone()).collect();
    Ok(Loaded {
        experiment,
        layered,
        warnings,
        tasks,
        resolved,
        skip,
    })
}

/// The command line's overrides (`-D`, `--model`, `--repeats`, `--scripted-model`, the
/// one `--harness`), and whether they or an experiment layer the task files.
fn overrides(args: &RunArgs, experiment: Option<&Experiment>) -> Flow<(Overrides, bool)> {
    let mut overrides = Overrides {
        set: args.define.clone(),
        model: args.model.clone(),
        harness: None,
        repeats: args.repeats,
        scripted_model: args.scripted_model.clone(),
    };
    let layered = experiment.is_some() || overrides.sets_fields();
    if layered && !args.harness.is_empty() {
        if args.harness.len() > 1 || args.harness[0] == "all" {
            return usage(
                "with --experiment, -D or --model, --harness names one harness (the \
                 command line's agent.type); compare harnesses with variants",
            );
        }
        overrides.harness = Some(args.harness[0].clone());
    }
    if let Some(e) = experiment {
        for note in overrides.replaced_in(e) {
            eprintln!("note: {note}");
        }
    }
    Ok((overrides, layered))
}

/// A docker task's container is sealed by itself (network none); a tempdir task with
/// `sandbox.network_enabled: false` needs the whole run in a network namespace.
pub(super) fn needs_network_namespace(tasks: &[Task]) -> bool {
    tasks.iter().any(|t| {
        t.sandbox.network_enabled == Some(false)
            && t.sandbox.driver == coder_eval::task::sandbox::Driver::Tempdir
    })
}

/// The harnesses named by `--harness` (`all`: every one installed; none with an
/// experiment or overrides: each variant's own).
pub(super) fn harnesses(args: &RunArgs, layered: bool) -> Flow<Vec<String>> {
    if layered {
        return Ok(Vec::new());
    }
    if !args.harness.iter().any(|h| h == "all") {
        return Ok(args.harness.clone());
    }
    let installed = installed_harnesses(args.components.as_deref());
    if installed.is_empty() {
        return usage(format!(
            "--harness all: no harness's CLI is installed (looked in {} and on \
             PATH); install the pinned CLIs with scripts/setup.sh, or set \
             CODER_EVAL_HARNESSES to a folder holding their node_modules",
            locate::harnesses_dir().join("node_modules/.bin").display()
        ));
    }
    Ok(installed)
}

/// Built-in harnesses, and those a `--components` folder adds, whose CLI can be found.
fn installed_harnesses(components: Option<&std::path::Path>) -> Vec<String> {
    let added = ComponentSource {
        dir: components.map(PathBuf::from),
        ..Default::default()
    }
    .added_harnesses();
    BUILTIN_HARNESSES
        .iter()
        .filter(|h| locate::is_installed(h.program))
        .map(|h| h.name.to_string())
        .chain(
            added
                .into_iter()
                .filter(|h| h.program.as_deref().is_some_and(locate::is_installed))
                .map(|h| h.name),
        )
        .collect()
}
