//! The command line's flags as the library's [`RunOptions`], and the default output
//! folder.

use super::RunArgs;
use coder_eval::components::ComponentSource;
use coder_eval::run::RunOptions;
use coder_eval::run::progress::Progress;
use coder_eval::suite::experiment::Experiment;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// `--out`, else `runs/<UTC now as YYYYMMDD-HHMMSS>`.
pub(super) fn out_dir(args: &RunArgs) -> PathBuf {
    args.out
        .clone()
        .unwrap_or_else(|| PathBuf::from("runs").join(timestamp()))
}

/// The run's options from its flags, its experiment and the progress display.
pub(super) fn run_options(
    args: &RunArgs,
    experiment: Option<&Experiment>,
    out_dir: &Path,
    progress: Arc<Progress>,
) -> RunOptions {
    let mut options = RunOptions::new(out_dir.to_path_buf());
    options.components = ComponentSource {
        dir: args.components.clone(),
        overrides: args.component.iter().cloned().collect(),
    };
    options.cli_override = args.cli.clone();
    options.script_override = args.scripted_model.clone();
    options.native_limits = !args.no_native_limits;
    options.pass_env = args.pass_env.clone();
    options.gateway = args.gateway;
    options.upstream = args.upstream.clone();
    options.gateway_bodies = args.gateway_bodies;
    options.judge_env = args.judge_env.clone();
    options.experiment = experiment.map(|e| coder_eval::results::ExperimentRecord {
        experiment_id: e.experiment_id.clone(),
        description: e.description.clone(),
        file: std::path::absolute(&e.path)
            .unwrap_or_else(|_| e.path.clone())
            .display()
            .to_string(),
        variants: e.variants.iter().map(|v| v.variant_id.clone()).collect(),
    });
    options.pid_namespace = args.pid_namespace || !args.no_pid_namespace;
    // Above each task file's `retry:` block.
    options.retry_given.max_retries = args.infra_retries;
    options.retry_given.initial_delay = args.retry_initial_delay;
    options.progress = Some(progress);
    options
}

/// UTC now as `YYYYMMDD-HHMMSS`.
fn timestamp() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Civil from days (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}{month:02}{day:02}-{:02}{:02}{:02}",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// The options given in `args` that choose or shape the units (tasks, variants, harnesses,
/// replicates, what the agent and its criteria are given): what `--resume` and
/// `run --plan` refuse, since the run's or the plan's own would silently win.
pub(super) fn unit_options_given(args: &RunArgs) -> Vec<&'static str> {
    [
        (!args.tasks.is_empty(), "task files"),
        (args.experiment.is_some(), "--experiment"),
        (args.repeats.is_some(), "--repeats"),
        (!args.harness.is_empty(), "--harness"),
        (!args.define.is_empty(), "-D"),
        (args.model.is_some(), "--model"),
        (args.scripted_model.is_some(), "--scripted-model"),
        (args.components.is_some(), "--components"),
        (!args.component.is_empty(), "--component"),
        (args.no_native_limits, "--no-native-limits"),
        (!args.pass_env.is_empty(), "--pass-env"),
        (!args.judge_env.is_empty(), "--judge-env"),
        (args.gateway, "--gateway"),
        (args.upstream.is_some(), "--upstream"),
        (args.gateway_bodies, "--gateway-bodies"),
        (args.price_table.is_some(), "--price-table"),
        (!args.criteria.is_empty(), "--criteria"),
        (!args.tags.is_empty(), "--tags"),
        (!args.exclude_tags.is_empty(), "--exclude-tags"),
        (args.include_skipped, "--include-skipped"),
        (args.split.is_some(), "--split"),
        (args.sample.is_some(), "--sample"),
        (args.sample_per_stratum.is_some(), "--sample-per-stratum"),
    ]
    .into_iter()
    .filter_map(|(given, flag)| given.then_some(flag))
    .collect()
}
