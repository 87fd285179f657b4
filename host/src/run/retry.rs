//! Retries of infrastructure errors: a task whose attempt ended in an error that says
//! nothing of the agent (the CLI crashed before its first model call, the model API
//! answered HTTP 429 or 5xx, the CLI exited with a code it documents as transient) is run
//! again from a fresh workspace, after a backoff, up to [`RetryPolicy::max_retries`]
//! times. Every earlier attempt is kept under `<result folder>/attempts/<n>/` (its own
//! `task.json`, recording, stderr, workspace; a run into the same folder again, a shard
//! run again or `run --resume`, numbers its attempts on after the ones kept there) and
//! listed in the final `task.json`
//! (`attempts`, `infra_retries`). A graded result (SUCCESS, FAILURE), a timeout, a cap,
//! an interrupt or a documented non-transient exit code (`auth_error`, `config_error`, …)
//! is never run again: it is the agent's result, or it would fail the same way. The one
//! timeout that is run again is a sustained outage ([`crate::suite::infra::outage_status`]): the time ran out
//! while the CLI was retrying an HTTP 429/5xx of the model API.
//!
//! Which errors are the infrastructure's ([`crate::suite::infra::infra_cause`]) is
//! decided with the results' other classifications, in `suite::infra` (`run --resume`
//! and a shard's exit code ask it too).
//!
//! The names follow coder_eval's `retry:` block (`max_retries`, `initial_delay`,
//! `backoff_multiplier`).

use super::{Prepared, RunOptions, run_one};
use crate::results::{InfraRetryRecord, TaskResult};
use crate::suite::infra::{InfraCause, infra_cause};
use std::time::Duration;
use tokio::sync::watch;

mod attempts;
use attempts::{keep_attempt, kept_attempts, retry_record};

/// The folder (inside a task's result folder) that keeps its earlier attempts.
pub(crate) const ATTEMPTS_DIR: &str = "attempts";

pub use crate::task::retry::{MAX_INITIAL_DELAY_SECS, MAX_RETRIES};

/// How hard a task tries to survive an infrastructure error.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RetryPolicy {
    /// Attempts after the first (0: never run again). `coder-eval run --infra-retries`.
    pub max_retries: u32,
    /// The wait before the first retry; each later wait is `backoff_multiplier` times the
    /// one before (1 s, 2 s, 4 s by default).
    pub initial_delay: Duration,
    /// Factor between successive waits (≥ 1).
    pub backoff_multiplier: f64,
}

impl RetryPolicy {
    /// 2 retries, 1 s then 2 s.
    pub(crate) const DEFAULT: RetryPolicy = RetryPolicy {
        max_retries: 2,
        initial_delay: Duration::from_secs(1),
        backoff_multiplier: 2.0,
    };

    /// The wait before retry `n` (1-based).
    pub(crate) fn delay(&self, n: u32) -> Duration {
        let factor = self
            .backoff_multiplier
            .max(1.0)
            .powi(n.saturating_sub(1) as i32);
        self.initial_delay.mul_f64(factor.min(3600.0))
    }
}

impl RetryPolicy {
    /// `self` (the built-in policy) with the task file's `retry:` fields, then the
    /// command line's (`--infra-retries`, `--retry-initial-delay`), each where set.
    pub(crate) fn resolve(
        self,
        task: &crate::task::retry::RetrySpec,
        command_line: &crate::task::retry::RetrySpec,
    ) -> RetryPolicy {
        let spec = task.or_over(command_line);
        RetryPolicy {
            max_retries: spec.max_retries.unwrap_or(self.max_retries),
            initial_delay: spec
                .initial_delay
                .and_then(|s| Duration::try_from_secs_f64(s).ok())
                .unwrap_or(self.initial_delay),
            backoff_multiplier: spec.backoff_multiplier.unwrap_or(self.backoff_multiplier),
        }
    }
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy::DEFAULT
    }
}

/// Runs one task (as [`run_one`]) and, while its attempt ends in an infrastructure error
/// and retries are left, keeps that attempt under `attempts/<n>/`, waits the backoff and
/// runs it again. Never fails: what cannot be kept is said in the attempt's record.
pub(crate) async fn run_with_retries(
    p: Prepared,
    options: &RunOptions,
    cancel: watch::Receiver<bool>,
) -> TaskResult {
    let dir = options.out_dir.join(p.unit.rel_dir());
    // The attempts an earlier run into the same folder kept (a shard run again, `run
    // --resume`) stay: this run's are numbered on after them.
    let mut earlier = kept_attempts(&dir);
    let mut records: Vec<InfraRetryRecord> = Vec::new();
    // Its final attempt too, when that ended in an infrastructure error (why the unit
    // runs again): kept as the next attempt, with the records of the ones before it.
    if let Some(old) = std::fs::read_to_string(dir.join("task.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<TaskResult>(&t).ok())
        && let Some(cause) = infra_cause(&old)
    {
        let rel = format!("{ATTEMPTS_DIR}/{}", earlier + 1);
        match keep_attempt(&dir, &dir.join(&rel)) {
            Ok(()) => {
                records.extend(old.infra_retries.iter().cloned());
                records.push(retry_record(earlier + 1, cause, &old, Duration::ZERO, rel));
                earlier += 1;
            }
            Err(e) => eprintln!(
                "warning: {}: could not keep the earlier run's attempt in {rel} ({e}): it is \
                 replaced",
                p.unit.label()
            ),
        }
    }
    let policy = options.retry.resolve(&p.task.retry, &options.retry_given);
    let mut attempt = 1u32;
    loop {
        let mut result = run_one(p.clone(), options, cancel.clone()).await;
        let stopped =
            |c: &watch::Receiver<bool>| *c.borrow() || crate::interrupt::raised().is_some();
        let cause = infra_cause(&result).filter(|_| attempt <= policy.max_retries);
        let delay = policy.delay(attempt);
        if let Some(cause) = cause
            && !stopped(&cancel)
        {
            eprintln!(
                "note: {}: attempt {attempt} ended in an infrastructure error ({}): \
                 running it again in {:.1} s",
                p.unit.label(),
                match cause {
                    InfraCause::ApiStatus(s) => format!("HTTP {s}"),
                    InfraCause::ApiOutage(s) =>
                        format!("HTTP {s} from the model API until the timeout"),
                    _ => cause.name().to_string(),
                },
                delay.as_secs_f64(),
            );
            // The wait ends early on an interrupt; the attempt is then the result.
            let mut watch_cancel = cancel.clone();
            tokio::select! {
                () = tokio::time::sleep(delay) => {}
                _ = watch_cancel.wait_for(|c| *c) => {}
            }
            if !stopped(&cancel) {
                let rel = format!("{ATTEMPTS_DIR}/{}", earlier + attempt);
                match keep_attempt(&dir, &dir.join(&rel)) {
                    Ok(()) => {
                        records.push(retry_record(earlier + attempt, cause, &result, delay, rel));
                        attempt += 1;
                        continue;
                    }
                    // An attempt that cannot be kept is not overwritten: it stays the result.
                    Err(e) => eprintln!(
                        "warning: {}: could not keep attempt {attempt} in {rel} ({e}): not \
                         running it again",
                        p.unit.label()
                    ),
                }
            }
        }
        // An infrastructure error whose retry an interrupt forestalled (the signal came
        // during the backoff, or with the error): the unit is not finished, so `--resume`
        // and a retried shard run it again (`crate::suite::resume::completed`).
        if cause.is_some() && stopped(&cancel) {
            let signal = crate::interrupt::raised()
                .map_or_else(|| "a stop signal".to_string(), crate::interrupt::name);
            result.error = Some(format!(
                "interrupted ({signal}) before retrying an infrastructure error: {}",
                result.error.as_deref().unwrap_or("(no message)")
            ));
            result.error_kind = Some("interrupted".to_string());
        }
        result.attempts = Some(earlier + attempt);
        result.infra_retries = records;
        super::write_result::write_task_json(&dir, &mut result);
        return result;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_backoff_doubles() {
        let p = RetryPolicy::DEFAULT;
        assert_eq!(p.delay(1), Duration::from_secs(1));
        assert_eq!(p.delay(2), Duration::from_secs(2));
        assert_eq!(p.delay(3), Duration::from_secs(4));
    }
}
