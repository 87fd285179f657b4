//! Which results are the infrastructure's fault, not the task's or the agent's: a
//! machine failure named by its `error_kind` ([`is_infra_error`]), and an error whose run
//! says nothing of the agent ([`infra_cause`]: the CLI crashed before its first model
//! call, the model API answered HTTP 429 or 5xx, the CLI exited with a code it documents
//! as transient, the time ran out in an outage). Such a unit is retried
//! (`run::retry`), run again by `run --resume` ([`super::resume::kept`]) and makes a
//! shard exit with [`crate::exit_codes::INFRA`]. Reads a [`TaskResult`] only.

use crate::results::{TaskResult, TaskStatus};

/// The `error_kind`s of a result that are the machine's fault, not the task's or the
/// agent's, spelled as `run::RunError::kind` spells them (a test in `run/error.rs` ties
/// the two): the CLI was not found or not executable, or its files could not be written
/// (`launch`), it could not be started or waited for (`cli`: an I/O error, not the CLI's
/// own failing exit, which is `cli_error`), its recording or result could not be written
/// (`recording`, `write_result`), or a signal stopped it (`interrupted`). A shard whose
/// unit ended so exits with [`crate::exit_codes::INFRA`] and may be retried.
pub(crate) const INFRA_ERROR_KINDS: &[&str] =
    &["launch", "cli", "recording", "write_result", "interrupted"];

/// Whether `r` ended in an infrastructure error ([`INFRA_ERROR_KINDS`]).
pub fn is_infra_error(r: &TaskResult) -> bool {
    r.error_kind
        .as_deref()
        .is_some_and(|k| INFRA_ERROR_KINDS.contains(&k))
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
    /// The `cause` of an [`crate::results::InfraRetryRecord`].
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
pub(crate) const TRANSIENT_EXIT_KINDS: &[&str] = &[
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
/// failure that would repeat). See the module docs, and `run::retry`'s, for the rules.
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
pub(crate) fn outage_status(result: &TaskResult) -> Option<u32> {
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
pub(crate) fn api_status(message: Option<&str>, last_retry_status: Option<u32>) -> Option<u32> {
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
pub(crate) fn http_status_in(message: &str) -> Option<u32> {
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
}
