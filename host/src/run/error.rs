//! Why a task is an ERROR: [`RunError`], a stage of the task's lifecycle that failed,
//! and `error_reason`, a turn that ended without the CLI's success.

use crate::results::{TurnRecord, TurnStatus};
use crate::runtime::ComponentError;
use coder_eval_scripted_model::ServerError;

/// A cause given as a sentence (the setup, launch and shell-step code report their
/// failures so).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct Cause(pub String);

/// Why one task could not be carried out: its status is then ERROR, `task.json`'s `error`
/// is [`RunError::message`] and its `error_kind` is [`RunError::kind`].
#[derive(Debug, thiserror::Error)]
pub(crate) enum RunError {
    /// Making the workspace and HOME, or a `pre_run` step, failed.
    #[error("setup")]
    Setup(#[source] Cause),
    /// The harness's component could not be resolved again for this task.
    #[error("harness component")]
    Resolve(#[source] crate::components::ResolveError),
    /// The harness's component could not be instantiated or called.
    #[error("the harness component failed")]
    Component(#[source] ComponentError),
    /// The scripted model could not start.
    #[error("scripted model")]
    ScriptedModel(#[source] ServerError),
    /// The model gateway could not start (`run --gateway`).
    #[error("model gateway")]
    Gateway(#[source] crate::gateway::GatewayError),
    /// The harness's launch plan refused the task.
    #[error("the harness refused the task")]
    Refused(#[source] Cause),
    /// The CLI could not be found (by name, or the `--cli` path is not there) or is not
    /// executable, or its files could not be written.
    #[error("launching the CLI")]
    Launch(#[source] Cause),
    /// The recording could not be created.
    #[error("recording")]
    Recording(#[source] std::io::Error),
    /// `stderr.log` could not be created.
    #[error("stderr.log")]
    StderrLog(#[source] std::io::Error),
    /// The CLI, found and executable, could not be started or waited for, or the recording
    /// could not be written while it ran.
    #[error("running the CLI")]
    Cli(#[source] std::io::Error),
    /// The reference solution could not be staged for the criteria (after the turn).
    #[error("staging the reference")]
    Reference(#[source] Cause),
    /// `task.json` could not be written.
    #[error("could not write task.json")]
    WriteResult(#[source] std::io::Error),
    /// The host was interrupted (SIGINT, SIGTERM or SIGHUP: `crate::interrupt`) before or
    /// while the task ran; its stop reason is `interrupted`.
    #[error("interrupted: the host received a stop signal; what was recorded is kept")]
    Interrupted,
}

impl RunError {
    /// A snake_case kind, for `task.json`'s `error_kind`.
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            RunError::Setup(_) => "setup",
            RunError::Resolve(_) | RunError::Component(_) => "component",
            RunError::ScriptedModel(_) => "scripted_model",
            RunError::Gateway(_) => "gateway",
            RunError::Refused(_) => "refused",
            RunError::Launch(_) => "launch",
            RunError::Recording(_) | RunError::StderrLog(_) => "recording",
            RunError::Cli(_) => "cli",
            RunError::Reference(_) => "reference",
            RunError::WriteResult(_) => "write_result",
            RunError::Interrupted => "interrupted",
        }
    }

    /// The sentence `task.json`'s `error` holds: the stage and its cause.
    pub(crate) fn message(&self) -> String {
        match self {
            // These causes name their stage themselves.
            RunError::Component(e) => e.to_string(),
            RunError::Launch(e) | RunError::Reference(e) => e.to_string(),
            RunError::Setup(e) | RunError::Refused(e) => format!("{self}: {e}"),
            RunError::Resolve(e) => format!("{self}: {e}"),
            RunError::ScriptedModel(e) => format!("{self}: {e}"),
            RunError::Gateway(e) => crate::gateway::error_sentence(e),
            RunError::Interrupted => self.to_string(),
            RunError::Recording(e)
            | RunError::StderrLog(e)
            | RunError::Cli(e)
            | RunError::WriteResult(e) => format!("{self}: {e}"),
        }
    }
}

/// The `error_kind` of a task whose turn made it an ERROR: how the turn ended
/// (`cli_error`, `incomplete`, `reducer_failed`), as the turn record spells it.
pub(super) fn turn_error_kind(turn: &TurnRecord) -> String {
    serde_json::to_value(turn.final_status)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_else(|| "turn".to_string())
}

/// Why a turn is an ERROR, in one sentence. A CLI that printed nothing on stdout (Gemini
/// CLI's auth failures, B33) is explained by its exit code (with what the CLI documents it
/// to mean, `meaning`) and the end of its stderr.
pub(super) fn error_reason(
    turn: &TurnRecord,
    stderr_tail: &str,
    meaning: Option<&harness_kit::ExitCode>,
) -> String {
    // The reducer's failure, not the CLI's: the CLI may well have printed its result,
    // which the failed reducer never read.
    if let (TurnStatus::ReducerFailed, Some(failure)) = (turn.final_status, &turn.reducer_error) {
        // A failure in no line names its place at the end of its message.
        let at = match failure.line {
            Some(line) => format!(" at line {line} of the CLI's stdout"),
            None => String::new(),
        };
        return format!(
            "the harness component's reducer failed ({}){at}: {}",
            failure.kind, failure.message
        );
    }
    let exit = turn.exit.as_ref();
    let last_stderr = stderr_tail
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim();
    if turn.stdout_lines == 0 {
        return format!(
            "the CLI printed nothing on stdout and exited with {}{}",
            exit.map_or("no status".into(), |e| match (e.code, e.signal) {
                (Some(code), _) => match meaning {
                    Some(m) => format!("code {code} ({}: {})", m.kind, m.meaning),
                    None => format!("code {code}"),
                },
                (None, Some(signal)) => format!("signal {signal}"),
                _ => "no status".into(),
            }),
            if last_stderr.is_empty() {
                String::new()
            } else {
                format!(": {last_stderr}")
            }
        );
    }
    match &turn.cli_result {
        Some(r) => format!(
            "the CLI reported {}: {}",
            r.error_kind.as_deref().unwrap_or("a failure"),
            r.error_message.as_deref().unwrap_or("no message")
        ),
        None => format!(
            "turn ended as {} (no final result from the CLI{}){}",
            turn_error_kind(turn),
            meaning.map_or(String::new(), |m| format!(
                "; its exit code {} means {}: {}",
                m.code, m.kind, m.meaning
            )),
            if last_stderr.is_empty() {
                String::new()
            } else {
                format!("; its stderr ends: {last_stderr}")
            }
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether a stage's failure is the machine's, not the task's or the agent's. An
    /// exhaustive match: a new variant must be put on one side.
    fn is_infra(e: &RunError) -> bool {
        match e {
            RunError::Setup(_)
            | RunError::Resolve(_)
            | RunError::Component(_)
            | RunError::ScriptedModel(_)
            | RunError::Gateway(_)
            | RunError::Refused(_)
            | RunError::Reference(_) => false,
            RunError::Launch(_)
            | RunError::Recording(_)
            | RunError::StderrLog(_)
            | RunError::Cli(_)
            | RunError::WriteResult(_)
            | RunError::Interrupted => true,
        }
    }

    /// `suite::infra::INFRA_ERROR_KINDS` (which `run.json` rows are retried and resumed)
    /// is spelled as [`RunError::kind`] spells the infrastructure's errors: every entry is
    /// the kind of an infra variant, and every infra variant's kind is listed. A renamed
    /// kind fails here instead of silently ending its retry.
    #[test]
    fn the_infra_error_kinds_are_the_infra_variants_kinds() {
        let io = || std::io::Error::other("x");
        let cause = || Cause("x".into());
        let samples = [
            RunError::Setup(cause()),
            RunError::Refused(cause()),
            RunError::Reference(cause()),
            RunError::Launch(cause()),
            RunError::Recording(io()),
            RunError::StderrLog(io()),
            RunError::Cli(io()),
            RunError::WriteResult(io()),
            RunError::Interrupted,
        ];
        let listed = crate::suite::infra::INFRA_ERROR_KINDS;
        for e in &samples {
            assert_eq!(listed.contains(&e.kind()), is_infra(e), "{}", e.kind());
        }
        for kind in listed {
            assert!(
                samples.iter().any(|e| is_infra(e) && e.kind() == *kind),
                "`{kind}` is not the kind of an infrastructure error"
            );
        }
        // The variants not sampled (their causes are costly to make) are not infra.
        for kind in ["component", "scripted_model", "gateway"] {
            assert!(!listed.contains(&kind), "{kind}");
        }
    }

    fn record() -> TurnRecord {
        let (record, _) = crate::turn::collect::Collector::new(Default::default())
            .finish(crate::turn::finish::TurnEnd::default());
        record
    }

    /// A failed reducer's ERROR names the reducer's failure, its kind and message, not a
    /// missing result from the CLI (which may have printed it); other statuses read by
    /// their serialized names, never a Rust Debug name.
    #[test]
    fn a_failed_reducer_is_named_with_its_kind_and_message() {
        let mut turn = record();
        turn.stdout_lines = 9;
        turn.final_status = TurnStatus::ReducerFailed;
        turn.reducer_error = Some(crate::results::ReducerError {
            kind: "deadline".into(),
            message: "component `x.wasm` passed its wall-clock deadline of 10000 ms in \
                      `stream-reducer.feed`"
                .into(),
            line: Some(4),
        });
        let reason = error_reason(&turn, "", None);
        assert_eq!(
            reason,
            "the harness component's reducer failed (deadline) at line 4 of the CLI's \
             stdout: component `x.wasm` passed its wall-clock deadline of 10000 ms in \
             `stream-reducer.feed`"
        );
        assert!(!reason.contains("no final result"), "{reason}");
        // A failure in no line: no line number, the message names the place.
        let failure = turn.reducer_error.as_mut().unwrap();
        failure.line = None;
        failure.kind = "trap".into();
        failure.message = "component `x.wasm` trapped in `stream-reducer.finish`: boom (in \
                           `finish`, after the last line of stdout)"
            .into();
        let reason = error_reason(&turn, "", None);
        assert_eq!(
            reason,
            "the harness component's reducer failed (trap): component `x.wasm` trapped in \
             `stream-reducer.finish`: boom (in `finish`, after the last line of stdout)"
        );
        assert!(!reason.contains("line 0"), "{reason}");
        turn.final_status = TurnStatus::Incomplete;
        turn.reducer_error = None;
        let reason = error_reason(&turn, "", None);
        assert!(reason.starts_with("turn ended as incomplete ("), "{reason}");
    }

    #[test]
    fn each_stage_keeps_its_sentence_and_names_its_kind() {
        let cause = |s: &str| Cause(s.to_string());
        let io = || std::io::Error::other("disk full");
        let cases = [
            (
                RunError::Setup(cause("pre_run `x` failed")),
                "setup: pre_run `x` failed",
                "setup",
            ),
            (
                RunError::Refused(cause("no model")),
                "the harness refused the task: no model",
                "refused",
            ),
            (
                RunError::Launch(cause("the `claude` CLI was not found")),
                "the `claude` CLI was not found",
                "launch",
            ),
            (
                RunError::Recording(io()),
                "recording: disk full",
                "recording",
            ),
            (
                RunError::StderrLog(io()),
                "stderr.log: disk full",
                "recording",
            ),
            (RunError::Cli(io()), "running the CLI: disk full", "cli"),
            (
                RunError::Reference(cause("reference: copying /t/ref: disk full")),
                "reference: copying /t/ref: disk full",
                "reference",
            ),
            (
                RunError::WriteResult(io()),
                "could not write task.json: disk full",
                "write_result",
            ),
        ];
        for (error, message, kind) in cases {
            assert_eq!(error.message(), message);
            assert_eq!(error.kind(), kind);
        }
    }
}
