//! The commands' arguments: `coder-eval plan` and `coder-eval merge` ([`plan`],
//! [`merge`]) and `run --plan --shard` ([`shard_mode`]), each resolved into a [`Mode`].

use super::super::{RunArgs, StoredRun};
use super::{Emit, MergeArgs, Mode, PlanArgs};
use coder_eval::exit_codes;
use coder_eval::suite::plan::Plan;
use coder_eval::suite::shard::Shard;
use std::path::{Path, PathBuf};

/// The plan's flags of `run` that name no run option ( `--out` of `plan` is the plan
/// file), left out of the arguments the plan stores.
const PLAN_ONLY_FLAGS: &[&str] = &[
    "--out",
    "--emit",
    "--image",
    "--shards",
    "--parallelism",
    "--backoff-limit-per-index",
    "--results-claim",
    "--job-name",
    "--secret",
];

/// The options of `run` that `run --plan` takes anew (they change no unit).
const SHARD_MAY_GIVE: &[&str] = &[
    "--shard",
    "--shard-from-env",
    "--shard-count",
    "--out",
    "--jobs",
    "--isolate-network",
    "--pid-namespace",
    "--no-pid-namespace",
    "--cli",
    "--infra-retries",
    "--retry-initial-delay",
    "--otlp-endpoint",
];

/// `coder-eval plan`.
pub fn plan(mut args: PlanArgs) -> Result<i32, Box<dyn std::error::Error>> {
    let refused: Vec<&str> = [
        (args.run.resume.is_some(), "--resume"),
        (args.run.plan.is_some(), "--plan"),
        (args.run.shard.is_some(), "--shard"),
        (args.run.shard_from_env, "--shard-from-env"),
    ]
    .into_iter()
    .filter_map(|(given, flag)| given.then_some(flag))
    .collect();
    if !refused.is_empty() {
        eprintln!(
            "error: plan resolves a new suite: {} cannot be given",
            refused.join(", ")
        );
        return Ok(exit_codes::USAGE);
    }
    let Some(out) = args.run.out.take() else {
        // The shards and merge read the plan file: a manifest alone is of no use.
        eprintln!("error: plan needs --out PLAN.json");
        return Ok(exit_codes::USAGE);
    };
    if let Some(problem) = not_a_plan(&out) {
        eprintln!("error: --out {}: {problem}", out.display());
        return Ok(exit_codes::USAGE);
    }
    if args.emit == Some(Emit::K8sJob) && args.k8s.image.is_none() {
        eprintln!(
            "error: --emit k8s-job needs --image (the image holding coder-eval, its CLIs and the task files)"
        );
        return Ok(exit_codes::USAGE);
    }
    let manifest_only = manifest_flags(std::env::args().skip(2));
    if args.emit.is_none() && !manifest_only.is_empty() {
        eprintln!(
            "error: {} shape(s) the manifest that --emit k8s-job prints: give --emit k8s-job \
             too, or leave them out",
            manifest_only.join(", ")
        );
        return Ok(exit_codes::USAGE);
    }
    let cwd = std::env::current_dir().unwrap_or_default();
    let stored = stored_args(std::env::args().skip(2))
        .into_iter()
        .map(|a| relative_arg(&a, &cwd))
        .collect();
    let mode = Mode::Plan {
        out,
        args: stored,
        emit: args.emit,
        k8s: args.k8s,
    };
    super::super::run_as(args.run, Some(mode))
}

/// Why `plan --out` must not write `out`, if it must not: `out` exists and is not a plan
/// file (a task file, a run's `run.json`, a folder). A plan file is replaced.
fn not_a_plan(out: &Path) -> Option<String> {
    let meta = std::fs::symlink_metadata(out).ok()?;
    if !meta.is_file() {
        return Some("exists and is not a file: give the plan file's path".into());
    }
    match std::fs::read(out) {
        Ok(bytes) if coder_eval::suite::plan::is_plan_file(&bytes) => None,
        Ok(_) => Some(
            "exists and is not a plan file (no plan_version, plan_id and groups or units): not \
             overwritten; give a new path, or remove it first"
                .into(),
        ),
        Err(e) => Some(format!("exists and cannot be read ({e}): not overwritten")),
    }
}

/// The manifest's flags among `args` (the plan-only flags but `--out` and `--emit`).
fn manifest_flags(args: impl Iterator<Item = String>) -> Vec<&'static str> {
    let args: Vec<String> = args.collect();
    PLAN_ONLY_FLAGS
        .iter()
        .filter(|f| !matches!(**f, "--out" | "--emit"))
        .filter(|f| {
            args.iter()
                .any(|a| a == *f || a.starts_with(&format!("{f}=")))
        })
        .copied()
        .collect()
}

/// `arg` (a path, or `--flag=PATH`) with an absolute path inside `cwd` made relative to
/// it: a plan names no path of its checkout (`plan $PWD/tasks/a/task.yaml` runs in a
/// checkout mounted elsewhere). Anything else is kept as given.
fn relative_arg(arg: &str, cwd: &Path) -> String {
    let (flag, value) = match arg.split_once('=') {
        Some((flag, value)) if flag.starts_with("--") => (Some(flag), value),
        _ => (None, arg),
    };
    let path = Path::new(value);
    if !path.is_absolute() {
        return arg.to_string();
    }
    let real_cwd = cwd.canonicalize().unwrap_or_else(|_| cwd.to_path_buf());
    let rel = path
        .strip_prefix(cwd)
        .or_else(|_| path.strip_prefix(&real_cwd))
        .ok()
        .filter(|r| !r.as_os_str().is_empty());
    match (rel, flag) {
        (Some(rel), Some(flag)) => format!("{flag}={}", rel.display()),
        (Some(rel), None) => rel.display().to_string(),
        (None, _) => arg.to_string(),
    }
}

/// `args` without the plan-only flags and their values.
fn stored_args(args: impl Iterator<Item = String>) -> Vec<String> {
    let mut kept = Vec::new();
    let mut skip_value = false;
    for arg in args {
        if std::mem::take(&mut skip_value) {
            continue;
        }
        if PLAN_ONLY_FLAGS.contains(&arg.as_str()) {
            skip_value = true;
        } else if !PLAN_ONLY_FLAGS
            .iter()
            .any(|f| arg.starts_with(&format!("{f}=")))
        {
            kept.push(arg);
        }
    }
    kept
}

/// `coder-eval merge`.
pub fn merge(args: MergeArgs) -> Result<i32, Box<dyn std::error::Error>> {
    // A shard still running (its folder's lock held) has not finished its units yet.
    for dir in &args.dirs {
        if let Some(holder) = coder_eval::suite::lock::holder(dir) {
            if !args.force {
                eprintln!(
                    "error: {}: a shard is still running into this folder ({holder}): merge \
                     once it has ended, or give --force to merge what it has finished (its \
                     other units are listed as missing)",
                    dir.display()
                );
                return Ok(exit_codes::USAGE);
            }
            eprintln!(
                "warning: {}: a shard is still running into this folder ({holder}): merging \
                 what it has finished (--force)",
                dir.display()
            );
        }
    }
    let plan = match Plan::read(&args.plan) {
        Ok(p) => p,
        Err(err) => {
            super::super::super::print_error(&err);
            return Ok(exit_codes::USAGE);
        }
    };
    let run = match parse_stored(&plan) {
        Ok(run) => run,
        Err(code) => return Ok(code),
    };
    let mode = Mode::Merge {
        plan,
        plan_file: args.plan,
        dirs: args.dirs,
        out: args.out,
    };
    super::super::run_as(run, Some(mode))
}

/// The plan's stored `run` arguments, parsed.
fn parse_stored(plan: &Plan) -> Result<RunArgs, i32> {
    match <StoredRun as clap::Parser>::try_parse_from(
        std::iter::once("run".to_string()).chain(plan.args.iter().cloned()),
    ) {
        Ok(stored) => Ok(stored.args),
        Err(err) => {
            eprintln!("error: the plan's arguments do not parse: {err}");
            Err(exit_codes::USAGE)
        }
    }
}

/// `run --plan P --shard K/N`: the plan's arguments in place of `args`' and the shard.
/// `args` may give anew what does not change a unit ([`SHARD_MAY_GIVE`]: where results
/// go, how many run at once, isolation, the CLI binary, infrastructure retries, a trace
/// collector); anything else given is refused (it would be silently the plan's).
pub(crate) fn shard_mode(args: RunArgs) -> Result<(RunArgs, Mode), i32> {
    let plan_file = args.plan.clone().unwrap_or_default();
    let given = super::super::options::unit_options_given(&args);
    if !given.is_empty() {
        eprintln!(
            "error: run --plan runs the plan's units as planned: {} cannot be given with it \
             (make a new plan to change them; with --plan only {} may be given)",
            given.join(", "),
            SHARD_MAY_GIVE.join(", ")
        );
        return Err(exit_codes::USAGE);
    }
    let shard = match (&args.shard, args.shard_from_env) {
        (Some(text), false) => Shard::parse(text),
        (None, true) => Shard::from_env(args.shard_count, |name| std::env::var(name).ok()),
        _ => {
            eprintln!("error: run --plan needs --shard K/N or --shard-from-env");
            return Err(exit_codes::USAGE);
        }
    };
    let shard = match shard {
        Ok(s) => s,
        Err(err) => {
            super::super::super::print_error(&err);
            return Err(exit_codes::USAGE);
        }
    };
    let plan = match Plan::read(&plan_file) {
        Ok(p) => p,
        Err(err) => {
            super::super::super::print_error(&err);
            return Err(exit_codes::USAGE);
        }
    };
    let mut run = parse_stored(&plan)?;
    narrow_to_shard(&mut run, &plan, &shard);
    run.out = Some(args.out.clone().unwrap_or_else(|| {
        PathBuf::from("runs").join(format!("shard-{}-of-{}", shard.index, shard.count))
    }));
    run.isolate_network |= args.isolate_network;
    if args.pid_namespace || args.no_pid_namespace {
        (run.pid_namespace, run.no_pid_namespace) = (args.pid_namespace, args.no_pid_namespace);
    }
    if args.jobs != 1 {
        run.jobs = args.jobs;
    }
    // A CLI binary of another version changes the units' ids: refused as a changed plan.
    run.cli = args.cli.or(run.cli);
    run.infra_retries = args.infra_retries.or(run.infra_retries);
    run.retry_initial_delay = args.retry_initial_delay.or(run.retry_initial_delay);
    run.otlp_endpoint = args.otlp_endpoint.or(run.otlp_endpoint);
    Ok((
        run,
        Mode::Shard {
            plan,
            plan_file,
            shard,
        },
    ))
}

/// Keeps of `run`'s task paths those that hold a unit of `shard` (by the plan's
/// `task_file`s, compared as real paths), so that a shard resolves its own units, not
/// the whole suite's (a shard of 2 units of a 60000-unit plan resolved all 60000). Left
/// as they are when that cannot be told: a unit's task file is missing (resolving them
/// all says which), or a unit's task file is not among the paths given (a folder or a
/// dataset given, whose rows name their file otherwise). A shard with no unit keeps the
/// first path that is a file (a run needs one; it runs nothing).
fn narrow_to_shard(run: &mut RunArgs, plan: &Plan, shard: &Shard) {
    let real = |p: &Path| p.canonicalize().ok();
    let mut owned = std::collections::HashSet::new();
    for unit in plan.units.iter().filter(|u| shard.owns(&u.id)) {
        match real(&unit.task_file) {
            Some(path) => owned.insert(path),
            None => return,
        };
    }
    if owned.is_empty() {
        if let Some(first) = run.tasks.iter().find(|t| t.is_file()).cloned() {
            run.tasks = vec![first];
        }
        return;
    }
    let mut given = std::collections::HashSet::new();
    let kept: Vec<PathBuf> = run
        .tasks
        .iter()
        .filter(|t| {
            real(t).is_some_and(|path| {
                let mine = owned.contains(&path);
                if mine {
                    given.insert(path);
                }
                mine
            })
        })
        .cloned()
        .collect();
    if given.len() == owned.len() {
        run.tasks = kept;
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_manifest_flags_are_found_in_either_spelling() {
        let args = ["t.yaml", "--image=img", "--out", "p.json", "--shards", "3"];
        assert_eq!(
            super::manifest_flags(args.iter().map(|s| s.to_string())),
            vec!["--image", "--shards"]
        );
        let plain = ["t.yaml", "--out", "p.json", "--emit", "k8s-job"];
        assert!(super::manifest_flags(plain.iter().map(|s| s.to_string())).is_empty());
    }

    #[test]
    fn absolute_paths_inside_the_plan_folder_are_stored_relative_to_it() {
        let cwd = std::path::Path::new("/w/repo");
        let rel = |a: &str| super::relative_arg(a, cwd);
        assert_eq!(rel("/w/repo/tasks/a/task.yaml"), "tasks/a/task.yaml");
        assert_eq!(
            rel("--experiment=/w/repo/examples/e.yaml"),
            "--experiment=examples/e.yaml"
        );
        // Outside the folder, or no path: as given.
        assert_eq!(rel("/other/t.yaml"), "/other/t.yaml");
        assert_eq!(rel("/w/repo2/t.yaml"), "/w/repo2/t.yaml");
        assert_eq!(rel("--repeats"), "--repeats");
        assert_eq!(rel("-Dx=/w/repo/y"), "-Dx=/w/repo/y");
    }

    #[test]
    fn the_stored_arguments_leave_out_the_plan_file_and_the_manifest_flags() {
        let args = [
            "--experiment",
            "e.yaml",
            "--out",
            "plan.json",
            "t.yaml",
            "--emit=k8s-job",
            "--image",
            "img",
            "--repeats",
            "3",
        ];
        assert_eq!(
            super::stored_args(args.iter().map(|s| s.to_string())),
            vec!["--experiment", "e.yaml", "t.yaml", "--repeats", "3"]
        );
    }
}
