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
//! timeout that is run again is a sustained outage ([`outage_status`]): the time ran out
//! while the CLI was retrying an HTTP 429/5xx of the model API.
//!
//! The names follow coder_eval's `retry:` block (`max_retries`, `initial_delay`,
//! `backoff_multiplier`).

use super::{Prepared, RunOptions, run_one};
use crate::results::{InfraRetryRecord, TaskResult, TaskStatus};
use std::time::Duration;
use tokio::sync::watch;

mod attempts;
use attempts::{keep_attempt, kept_attempts, retry_record};

/// The folder (inside a task's result folder) that keeps its earlier attempts.
pub const ATTEMPTS_DIR: &str = "attempts";

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
    pub const DEFAULT: RetryPolicy = RetryPolicy {
        max_retries: 2,
        initial_delay: Duration::from_secs(1),
        backoff_multiplier: 2.0,
    };

    /// The wait before retry `n` (1-based).
    pub fn delay(&self, n: u32) -> Duration {
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
    pub fn resolve(
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

/// Why an attempt's error is the infrastructure's, not the agent's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InfraCause {
    /// The CLI ended with a failure (non-zero exit, a signal) before its first model call.
    CrashBeforeFirstCall,
    /// The model API answered this HTTP status (429 or 5xx), as the stream shows.
    ApiStatus(u32),
    /// The CLI exited with a code its launch plan documents as transient.
    TransientExitCode,
    /// A timeout came while the CLI was retrying the model API's HTTP 429/5xx (this
    /// status): no model reply came after its last retry, so the time went to the outage,
    /// not to the agent.
    ApiOutage(u32),
}

impl InfraCause {
    /// The `cause` of an [`InfraRetryRecord`].
    pub fn name(self) -> &'static str {
        match self {
            InfraCause::CrashBeforeFirstCall => "crash_before_first_call",
            InfraCause::ApiStatus(_) => "api_status",
            InfraCause::TransientExitCode => "transient_exit_code",
            InfraCause::ApiOutage(_) => "api_outage",
        }
    }
}

/// The documented exit-code kinds (a launch plan's `exit_codes[].kind`) that name a
/// transient failure: the same run may well succeed a moment later.
pub const TRANSIENT_EXIT_KINDS: &[&str] = &[
    "rate_limited",
    "rate_limit",
    "overloaded",
    "server_error",
    "api_error",
    "network_error",
    "connection_error",
    "transient",
];

/// Why `result` is an infrastructure error, or `None` when it is the agent's result (or a
/// failure that would repeat). See the module docs for the rules.
pub fn infra_cause(result: &TaskResult) -> Option<InfraCause> {
    if let Some(status) = outage_status(result) {
        return Some(InfraCause::ApiOutage(status));
    }
    if result.status != TaskStatus::Error || result.stop.is_some() {
        return None;
    }
    if result.error_kind.as_deref() == Some("interrupted") {
        return None;
    }
    // A documented exit code decides: transient or not.
    if let Some(meaning) = &result.cli.exit_code_meaning {
        return TRANSIENT_EXIT_KINDS
            .contains(&meaning.kind.as_str())
            .then_some(InfraCause::TransientExitCode);
    }
    let turn = result.turn.as_ref()?;
    if let Some(status) = api_status_of(turn) {
        return Some(InfraCause::ApiStatus(status));
    }
    let failed_exit = turn
        .exit
        .as_ref()
        .is_some_and(|e| e.code != Some(0) || e.signal.is_some());
    let reached_model = !turn.model_calls.is_empty()
        || turn.num_turns > 0
        || result
            .scripted_model_requests
            .as_ref()
            .is_some_and(|r| !r.is_empty());
    (failed_exit && !reached_model).then_some(InfraCause::CrashBeforeFirstCall)
}

/// The HTTP status (429 or 5xx) of a sustained outage a timeout ended in: the host
/// stopped the turn for `turn_timeout` or `task_timeout` while the CLI was retrying the
/// model API: its last main-thread retry reported a 429/5xx (as a status, else in its
/// error's words) and no assistant message of the main thread began after it.
pub fn outage_status(result: &TaskResult) -> Option<u32> {
    use crate::results::StopReason;
    let stop = result.stop.as_ref()?;
    if !matches!(
        stop.reason,
        StopReason::TurnTimeout | StopReason::TaskTimeout
    ) {
        return None;
    }
    let turn = result.turn.as_ref()?;
    let last = turn
        .retries
        .iter()
        .rev()
        .find(|r| r.parent_call_id.is_none())?;
    let status = last
        .status
        .filter(|s| transient_status(*s))
        .or_else(|| last.error.as_deref().and_then(http_status_in))?;
    let replied_after = turn
        .messages
        .iter()
        .any(|m| m.parent_call_id.is_none() && m.first_ms > last.at_ms);
    (!replied_after).then_some(status)
}

/// The HTTP status (429 or 5xx) a failed turn ended on, as its stream shows it: a status
/// number in the CLI's failure message ("API Error: 529 …", "unexpected status 503 …"),
/// else the status of the last request the CLI itself retried, else the words of the
/// message ("rate limit" 429, "service unavailable" 503, "overloaded" 529): a 503 whose
/// message says "overloaded" is recorded as the 503 it was.
pub fn api_status_of(turn: &crate::results::TurnRecord) -> Option<u32> {
    let result = turn.cli_result.as_ref()?;
    if result.success {
        return None;
    }
    api_status(
        result.error_message.as_deref(),
        turn.retries.last().and_then(|r| r.status),
    )
}

/// [`api_status_of`]'s rule over a failure message and the HTTP status of the last
/// request the CLI retried.
pub fn api_status(message: Option<&str>, last_retry_status: Option<u32>) -> Option<u32> {
    message
        .and_then(http_status_number_in)
        .or(last_retry_status.filter(|s| transient_status(*s)))
        .or_else(|| message.and_then(http_status_words_in))
}

fn transient_status(status: u32) -> bool {
    status == 429 || (500..600).contains(&status)
}

/// A transient HTTP status named in an error message: a 429 or 5xx number right after
/// "API error", "error", "status", "HTTP", "error code", "rejected" (Claude Code's "API
/// Error: 529 {…}" and, 2.1, "API Error: Request rejected (429) · …", Codex's
/// "unexpected status 503 Service Unavailable"), else the words of one
/// ("rate limit" 429, "service unavailable" 503, "overloaded" 529). A number beats the
/// words: "Error: 503 overloaded" is a 503.
pub fn http_status_in(message: &str) -> Option<u32> {
    http_status_number_in(message).or_else(|| http_status_words_in(message))
}

/// The status number of [`http_status_in`].
fn http_status_number_in(message: &str) -> Option<u32> {
    static PATTERN: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(
            r"(?i)(?:api[ _]?error|\berror(?:[ _]code)?|status(?:[ _]?code)?|http(?:/[0-9.]+)?|rejected)\W{0,3}(429|5[0-9]{2})\b",
        )
        .expect("a valid pattern")
    });
    PATTERN.captures(message).and_then(|c| c[1].parse().ok())
}

/// The status words of [`http_status_in`].
fn http_status_words_in(message: &str) -> Option<u32> {
    let lower = message.to_ascii_lowercase();
    if lower.contains("rate limit") || lower.contains("rate_limit") {
        Some(429)
    } else if lower.contains("service unavailable") || lower.contains("service_unavailable") {
        Some(503)
    } else if lower.contains("overloaded") {
        Some(529)
    } else {
        None
    }
}

/// Runs one task (as [`run_one`]) and, while its attempt ends in an infrastructure error
/// and retries are left, keeps that attempt under `attempts/<n>/`, waits the backoff and
/// runs it again. Never fails: what cannot be kept is said in the attempt's record.
pub async fn run_with_retries(
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
    fn transient_statuses_are_read_from_the_clis_messages() {
        assert_eq!(
            http_status_in(
                r#"API Error: 529 {"type":"error","error":{"type":"overloaded_error"}}"#
            ),
            Some(529)
        );
        assert_eq!(
            http_status_in("stream error: unexpected status 503 Service Unavailable"),
            Some(503)
        );
        assert_eq!(http_status_in("HTTP 429 Too Many Requests"), Some(429));
        assert_eq!(http_status_in("You hit the rate limit"), Some(429));
        assert_eq!(http_status_in("Error code: 502 - bad gateway"), Some(502));
        // Claude Code 2.1's words for an API error, whatever the message after them.
        assert_eq!(
            http_status_in("API Error: Request rejected (429) · Slow down"),
            Some(429)
        );
        // Not transient, or not a status.
        assert_eq!(http_status_in("API Error: 401 invalid x-api-key"), None);
        assert_eq!(http_status_in("syntax error at line 500"), None);
        assert_eq!(http_status_in("wrote 503 bytes"), None);
    }

    #[test]
    fn a_503_that_says_overloaded_is_recorded_as_503_not_529() {
        assert_eq!(http_status_in("Error: 503 overloaded"), Some(503));
        // The message names no number: the status of the request the CLI retried.
        assert_eq!(api_status(Some("Overloaded"), Some(503)), Some(503));
        assert_eq!(api_status(Some("Service Unavailable"), None), Some(503));
        assert_eq!(api_status(Some("Overloaded"), None), Some(529));
        assert_eq!(
            api_status(Some("API Error: 500 oops"), Some(503)),
            Some(500)
        );
        assert_eq!(api_status(Some("invalid key"), Some(401)), None);
    }

    #[test]
    fn the_backoff_doubles() {
        let p = RetryPolicy::DEFAULT;
        assert_eq!(p.delay(1), Duration::from_secs(1));
        assert_eq!(p.delay(2), Duration::from_secs(2));
        assert_eq!(p.delay(3), Duration::from_secs(4));
    }
}
