//! `coder-eval grade`.

use super::print_stdout;
use coder_eval::components::{ComponentSource, parse_override};
use coder_eval::exit_codes;
use coder_eval::results::{CriterionResult, TaskStatus};
use coder_eval::run::regrade::regrade;
use std::path::PathBuf;

/// Re-grades a finished run from its kept workspace and recording, without running the
/// agent, and prints the change per criterion. Use it to iterate on criteria.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  coder-eval grade runs/20261129-183000/hello_date/claude-code
  coder-eval grade runs/x/hello_date/claude-code --task tasks/hello_date/task.yaml --write")]
pub struct GradeArgs {
    /// A task's result folder (`<out>/<task_id>/<harness>`, holding task.json).
    run_dir: PathBuf,
    /// Grade with this task file (default: the one the run used).
    #[arg(long)]
    task: Option<PathBuf>,
    /// Replace task.json with the new verdicts.
    #[arg(long)]
    write: bool,
    /// Print the new task result as JSON.
    #[arg(long)]
    json: bool,
    /// A folder of replacement components (`<harness>.wasm`).
    #[arg(long, value_name = "DIR")]
    components: Option<PathBuf>,
    /// Replace one harness's component: NAME=PATH (repeatable).
    #[arg(long, value_name = "NAME=PATH", value_parser = parse_override)]
    component: Vec<(String, PathBuf)>,
    /// Hand this host environment variable to judges (`llm_judge`, `agent_judge`), e.g.
    /// `--judge-env ANTHROPIC_API_KEY` (repeatable).
    #[arg(long, value_name = "NAME")]
    judge_env: Vec<String>,
    /// Register the criterion plugin types of DIR before loading the task file
    /// (repeatable).
    #[arg(long, value_name = "DIR")]
    criteria: Vec<PathBuf>,
}

pub fn run(args: GradeArgs) -> Result<i32, Box<dyn std::error::Error>> {
    for dir in &args.criteria {
        coder_eval::grading::plugins::register_dir(dir)?;
    }
    let source = ComponentSource {
        dir: args.components,
        overrides: args.component.into_iter().collect(),
    };
    let runtime = tokio::runtime::Runtime::new()?;
    let (before, after) = runtime.block_on(regrade(
        &args.run_dir,
        args.task.as_deref(),
        &source,
        &args.judge_env,
        args.write,
    ))?;
    if args.json {
        print_stdout(&(serde_json::to_string_pretty(&after)? + "\n"));
    } else {
        let mut text = String::new();
        let old: Vec<&CriterionResult> = before
            .criteria
            .iter()
            .chain(&before.post_failure_criteria_results)
            .collect();
        for (i, new) in after
            .criteria
            .iter()
            .chain(&after.post_failure_criteria_results)
            .enumerate()
        {
            let was = old.get(i).filter(|o| o.description == new.description);
            let mark = |c: &CriterionResult| {
                format!("{:.2} {}", c.score, if c.passed { "pass" } else { "FAIL" })
            };
            text += &format!(
                "{:<48} {} -> {}{}\n",
                new.description,
                was.map_or("(new)".to_string(), |c| mark(c)),
                mark(new),
                if was.is_some_and(|c| c.passed != new.passed || c.score != new.score) {
                    "  (changed)"
                } else {
                    ""
                }
            );
        }
        text += &format!("status {} -> {}\n", before.status, after.status);
        print_stdout(&text);
    }
    Ok(if after.status == TaskStatus::Success {
        exit_codes::OK
    } else {
        exit_codes::FAILED
    })
}
