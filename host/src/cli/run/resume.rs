//! `run --resume RUN_DIR`: the interrupted run's own arguments read again, and its units
//! that finished kept as they are.

use super::{Flow, RunArgs, StoredRun, usage};
use coder_eval::results::TaskResult;
use coder_eval::run::Prepared;
use coder_eval::suite::resume::Invocation;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The arguments to go on with after `--resume`.
pub(super) enum Resumed {
    /// A shard's folder: its shard is run again into it.
    Shard(RunArgs),
    /// A run's folder (absolute): its units are resolved again, the finished ones kept.
    Run(RunArgs, PathBuf),
}

/// The run in `dir` resolved from its `invocation.json`, with the options `given` anew
/// that change no unit (the others are refused: [`resume_ignores`]).
pub(super) fn reread(given: RunArgs, dir: PathBuf) -> Flow<Resumed> {
    let ignored = resume_ignores(&given);
    if !ignored.is_empty() {
        return usage(format!(
            "--resume finishes a run with its own options: {} cannot be given with \
             it (start a new run to change them)",
            ignored.join(", ")
        ));
    }
    let invocation = Invocation::read(&dir)?;
    // Without `..` or `.` (`--resume ../runs/x` says `/work/runs/x`, not `/work/suite/../runs/x`).
    let dir = dir.canonicalize().or_else(|_| std::path::absolute(&dir))?;
    if let Some(note) = invocation.enter(&dir)? {
        eprintln!("note: {note}");
    }
    let stored = <StoredRun as clap::Parser>::try_parse_from(
        std::iter::once("run".to_string()).chain(invocation.args),
    )?;
    let mut args = stored.args;
    args.out = Some(dir.clone());
    // invocation.json keeps `--upstream` without its password: it must be given again.
    if let Some(stored_url) = args
        .upstream
        .as_deref()
        .filter(|u| u.contains("[redacted]@"))
    {
        match given.upstream.as_deref() {
            Some(url) if coder_eval::gateway::redact_userinfo(url) == stored_url => {
                args.upstream = given.upstream.clone();
            }
            _ => {
                return usage(format!(
                    "{}: the run's --upstream {stored_url} had a password, which \
                     invocation.json does not keep: give --upstream again with --resume \
                     (the same URL, password included)",
                    dir.display()
                ));
            }
        }
    } else if given.upstream.is_some() {
        return usage(
            "--resume finishes a run with its own options: --upstream cannot be given with \
             it (start a new run to change them)"
                .to_string(),
        );
    }
    // What changes no unit may be given anew (`resume_ignores` refused the rest).
    args.isolate_network |= given.isolate_network;
    if given.jobs != 1 {
        args.jobs = given.jobs;
    }
    if given.pid_namespace || given.no_pid_namespace {
        (args.pid_namespace, args.no_pid_namespace) = (given.pid_namespace, given.no_pid_namespace);
    }
    args.infra_retries = given.infra_retries.or(args.infra_retries);
    args.retry_initial_delay = given.retry_initial_delay.or(args.retry_initial_delay);
    args.otlp_endpoint = given.otlp_endpoint.or(args.otlp_endpoint);
    Ok(if args.plan.is_some() {
        Resumed::Shard(args)
    } else {
        Resumed::Run(args, dir)
    })
}

/// The options given with `--resume` that the resumed run's own options would override.
fn resume_ignores(args: &RunArgs) -> Vec<&'static str> {
    // `--upstream` is checked against the stored one in `reread`.
    let mut given = super::options::unit_options_given(args);
    given.retain(|flag| *flag != "--upstream");
    given.extend(
        [(args.out.is_some(), "--out"), (args.cli.is_some(), "--cli")]
            .into_iter()
            .filter_map(|(given, flag)| given.then_some(flag)),
    );
    given
}

/// Resuming (`resume_dir`): the units with a complete `task.json` are kept as they are,
/// unless their id changed since; returns the units to run and the kept results. Writes
/// `invocation.json` (what `--resume` reads; a resumed run keeps the original, with the
/// ids `unit_ids` of now) when `write`.
pub(super) fn keep_finished(
    prepared: Vec<Prepared>,
    resume_dir: Option<&Path>,
    unit_ids: BTreeMap<String, String>,
    out_dir: &Path,
    write: bool,
) -> Flow<(Vec<Prepared>, Vec<TaskResult>)> {
    let invocation = Invocation {
        cwd: std::env::current_dir()?,
        args: coder_eval::suite::resume::redact_upstream_args(std::env::args().skip(2).collect()),
        unit_ids: Default::default(),
    };
    let invocation = match resume_dir {
        Some(dir) => Invocation::read(dir).unwrap_or(invocation),
        None => invocation,
    };
    let mut kept = Vec::new();
    let prepared = match resume_dir {
        None => prepared,
        Some(dir) => {
            let split = coder_eval::suite::resume::split(
                dir,
                prepared,
                |p| &p.unit,
                &invocation.unit_ids,
                &unit_ids,
            );
            if let Some(note) = split.units_changed_note() {
                eprintln!("note: {}: {note}", dir.display());
            }
            for line in &split.changed {
                eprintln!("note: {line}");
            }
            kept = split.kept;
            eprintln!(
                "resuming {}: {} unit(s) complete and kept, {} to run{}",
                dir.display(),
                kept.len(),
                split.todo.len(),
                match split.changed.len() {
                    0 => String::new(),
                    n => format!(" ({n} of them changed since they ran)"),
                }
            );
            split.todo
        }
    };
    if write {
        Invocation {
            unit_ids,
            ..invocation
        }
        .write(out_dir)?;
    }
    Ok((prepared, kept))
}
