//! A shard's checks before it runs ([`unstartable`]) and its exit code after
//! ([`exit_code`]).

use coder_eval::components::BUILTIN_HARNESSES;
use coder_eval::exit_codes;
use coder_eval::results::TaskResult;
use coder_eval::run::{Prepared, RunOptions};

/// Why a unit of this shard could not start its CLI, if one could not: the `--cli` given
/// (else a built-in harness's program, found as a run finds it) is missing or not an
/// executable file. The same on every retry of the shard: a configuration error.
pub(super) fn unstartable(prepared: &[Prepared], options: &RunOptions) -> Option<String> {
    let mut seen: Vec<&str> = Vec::new();
    for p in prepared {
        if seen.contains(&p.harness.as_str()) {
            continue;
        }
        seen.push(&p.harness);
        let program = BUILTIN_HARNESSES
            .iter()
            .find(|h| h.name == p.harness)
            .map(|h| h.program);
        let path = match (&options.cli_override, program) {
            (Some(path), _) => path.clone(),
            (None, Some(program)) => match coder_eval::locate::find_cli(program, None) {
                Ok(path) => path,
                Err(missing) => return Some(format!("the {} CLI: {missing}", p.harness)),
            },
            // Another harness's program is known to its launch plan only.
            (None, None) => continue,
        };
        if !path.exists() {
            return Some(format!(
                "the {} CLI {}: no such executable",
                p.harness,
                path.display()
            ));
        }
        if let Err(why) = coder_eval::locate::executable(&path) {
            return Some(format!(
                "the {} CLI {}: not executable ({why})",
                p.harness,
                path.display()
            ));
        }
    }
    None
}

/// A shard's exit code once its units ran: [`exit_codes::INFRA`] when one ended in an
/// infrastructure error (a machine failure, `suite::infra::is_infra_error`, or one that
/// was still an infrastructure error when its retries ran out: a crash before the first
/// model call, HTTP 429/5xx, a transient exit code), else 0 (pass or fail: `merge` gives
/// the verdict).
pub(crate) fn exit_code(results: &[TaskResult]) -> i32 {
    let infra: Vec<&TaskResult> = results
        .iter()
        .filter(|r| {
            coder_eval::suite::infra::is_infra_error(r)
                || coder_eval::suite::infra::infra_cause(r).is_some()
        })
        .collect();
    if infra.is_empty() {
        return exit_codes::OK;
    }
    eprintln!(
        "{} unit(s) ended in an infrastructure error ({}): exit {} (running the shard again \
         into the same folder keeps its complete units and runs these again)",
        infra.len(),
        infra
            .iter()
            .map(|r| coder_eval::suite::unit_of(r).label())
            .collect::<Vec<_>>()
            .join(", "),
        exit_codes::INFRA
    );
    exit_codes::INFRA
}
