//! `coder-eval compare`.

use coder_eval::exit_codes;
use coder_eval::results::{ExperimentRecord, RunSummary, TaskResult, VariantStatistics};
use coder_eval::suite::{report, stats};
use std::path::{Path, PathBuf};

/// Compares two runs (or two variants of one run), paired by task id: each run's pass
/// rate, the difference B − A with its 95% t-interval, a paired t-test, and the tasks
/// that flipped pass↔fail, each side named with its run folder; warns (stderr and
/// `warnings`) when the runs come from different experiments or a side has missing
/// replicates. Exit code: 0 compared, 1 no task graded in both (nothing
/// compared: a warning on stderr, the empty comparison still printed), 2 a run cannot be
/// read or a variant is not chosen.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  coder-eval compare runs/baseline runs/candidate
  coder-eval compare runs/exp runs/exp --a-variant sonnet --b-variant opus --html cmp.html")]
pub struct CompareArgs {
    /// The baseline run folder (holding run.json).
    run_a: PathBuf,
    /// The candidate run folder.
    run_b: PathBuf,
    /// The variant (or harness) of run A to compare, when it holds several.
    #[arg(long, value_name = "ID")]
    a_variant: Option<String>,
    /// The variant (or harness) of run B to compare, when it holds several.
    #[arg(long, value_name = "ID")]
    b_variant: Option<String>,
    /// Print the comparison as JSON instead of a table.
    #[arg(long)]
    json: bool,
    /// Also write the comparison as an HTML page.
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
}

pub fn run(args: CompareArgs) -> Result<i32, Box<dyn std::error::Error>> {
    let pick = |dir: &Path,
                want: &Option<String>,
                side: &str|
     -> Result<(VariantStatistics, Option<ExperimentRecord>), String> {
        let (groups, experiment) = groups(dir)?;
        let chosen = |g: VariantStatistics| (g, experiment.clone());
        match want {
            Some(id) => groups
                .iter()
                .find(|g| &g.variant == id)
                .cloned()
                .map(chosen)
                .ok_or_else(|| {
                    format!(
                        "{}: no variant or harness `{id}` (it has {})",
                        dir.display(),
                        names(&groups)
                    )
                }),
            None if groups.len() == 1 => Ok(chosen(groups[0].clone())),
            None => Err(format!(
                "{} holds {}: choose one with --{side}-variant (a variant, or a harness in a run \
                     without variants)",
                dir.display(),
                names(&groups)
            )),
        }
    };
    let (a, b) = match (
        pick(&args.run_a, &args.a_variant, "a"),
        pick(&args.run_b, &args.b_variant, "b"),
    ) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("error: {e}");
            return Ok(exit_codes::USAGE);
        }
    };
    let ((a, a_experiment), (b, b_experiment)) = (a, b);
    let mut c = stats::compare(&a, &b);
    c.a_run = Some(args.run_a.display().to_string());
    c.b_run = Some(args.run_b.display().to_string());
    c.warnings = warnings(
        (&args.run_a, &a, a_experiment.as_ref()),
        (&args.run_b, &b, b_experiment.as_ref()),
    );
    c.warnings.extend(stats::single_task_note(&c, &a, &b));
    for w in &c.warnings {
        eprintln!("warning: {w}");
    }
    if let Some(path) = &args.html {
        std::fs::write(path, report::compare_page(&c))?;
    }
    // No pair: said on stderr, after whatever the output is.
    let verdict = || {
        if c.paired_tasks > 0 {
            return exit_codes::OK;
        }
        eprintln!(
            "warning: nothing compared: no task is graded in both A ({}) and B ({}){}",
            c.a,
            c.b,
            if c.unpaired.is_empty() {
                String::new()
            } else {
                format!(" (graded on one side only: {})", c.unpaired.join(", "))
            }
        );
        exit_codes::FAILED
    };
    if args.json {
        super::print_json(&c);
        return Ok(verdict());
    }
    let mut out = String::new();
    out.push_str(&format!(
        "A {:<24} pass rate {}  (run {})\nB {:<24} pass rate {}  (run {})\n",
        c.a,
        report::estimate(c.a_pass_rate.as_ref()),
        args.run_a.display(),
        c.b,
        report::estimate(c.b_pass_rate.as_ref()),
        args.run_b.display()
    ));
    out.push_str(&format!(
        "B − A over {} paired task(s): {}; t = {}, p = {} ({})\n\n",
        c.paired_tasks,
        report::difference(c.difference.as_ref()),
        report::statistic(&c, c.t_statistic, 3),
        report::statistic(&c, c.p_value, 4),
        c.test
    ));
    out.push_str(&format!(
        "{:<32} {:>7} {:>7} {:>8}  flipped\n",
        "task", "A", "B", "B − A"
    ));
    for t in &c.tasks {
        out.push_str(&format!(
            "{:<32} {:>6.1}% {:>6.1}% {:>+7.1}%  {}\n",
            t.task_id,
            t.a * 100.0,
            t.b * 100.0,
            t.difference * 100.0,
            t.flipped.as_deref().unwrap_or("")
        ));
    }
    if !c.unpaired.is_empty() {
        out.push_str(&format!(
            "graded on one side only: {}\n",
            c.unpaired.join(", ")
        ));
    }
    super::print_stdout(&out);
    Ok(verdict())
}

fn names(groups: &[VariantStatistics]) -> String {
    groups
        .iter()
        .map(|g| format!("`{}`", g.variant))
        .collect::<Vec<_>>()
        .join(", ")
}

/// What makes comparing A and B doubtful (each side: its folder, the variant chosen, its
/// run's experiment): runs of two experiments (or of one and of none) pair tasks by id
/// alone, and missing replicates leave a side's rates over the units that ran.
fn warnings(
    a: (&Path, &VariantStatistics, Option<&ExperimentRecord>),
    b: (&Path, &VariantStatistics, Option<&ExperimentRecord>),
) -> Vec<String> {
    let mut out = Vec::new();
    let id = |e: Option<&ExperimentRecord>| e.map(|e| e.experiment_id.clone());
    if id(a.2) != id(b.2) {
        let of = |e: Option<&ExperimentRecord>| match e {
            Some(e) => format!("a run of experiment `{}` ({})", e.experiment_id, e.file),
            None => "a run without an experiment".to_string(),
        };
        out.push(format!(
            "A ({}) is {} and B ({}) is {}: their tasks are paired by task id alone \
             (check that they ran the same tasks, or compare variants of one run)",
            a.0.display(),
            of(a.2),
            b.0.display(),
            of(b.2)
        ));
    }
    for (side, (dir, stats, _)) in [("A", a), ("B", b)] {
        if stats.missing > 0 {
            out.push(format!(
                "{side} ({}, {}) has {} replicate(s) missing (no result: its run did not \
                 finish, or a shard was not merged): its pass rates are over the {} graded",
                dir.display(),
                stats.variant,
                stats.missing,
                stats.graded
            ));
        }
    }
    out
}

/// A run's statistics per variant: `run.json`'s own, else computed from its `task.json`s;
/// and its experiment.
fn groups(dir: &Path) -> Result<(Vec<VariantStatistics>, Option<ExperimentRecord>), String> {
    let path = dir.join("run.json");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let summary: RunSummary =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    if !summary.statistics.is_empty() {
        return Ok((summary.statistics, summary.experiment));
    }
    let mut results = Vec::new();
    for row in &summary.rows {
        let file = dir.join(&row.result);
        let text =
            std::fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
        let r: TaskResult =
            serde_json::from_str(&text).map_err(|e| format!("{}: {e}", file.display()))?;
        results.push(r);
    }
    Ok((
        coder_eval::suite::statistics(&results, &coder_eval::suite::Expected::new()),
        summary.experiment,
    ))
}
