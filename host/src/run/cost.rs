//! A task's `cost.json` (format: `results::cost`): one [`CostAttempt`] per launch of the
//! CLI, built from the task's result, totalled into a [`CostRecord`], written beside
//! `task.json`. A task launches its CLI once, or, in time-budget mode, once per session
//! (`task.json`'s `time_budget.sessions`): one attempt each (see [`attempts`]).

use super::Prepared;
use crate::limits::budget::usage_floor;
use crate::results::{
    AttemptSettings, CostAttempt, CostRecord, ProviderReports, SessionRecord, TaskResult,
    TotalsStatus, TurnRecord, write_json_atomically,
};
use crate::runtime::harness::Launcher;
use harness_kit::TotalsScope;
use std::path::Path;

/// The `error_kind`s of a launch that failed once the CLI was to start (its argv, its
/// process): the attempt is recorded with its launcher error. Earlier stages launched
/// nothing.
const LAUNCH_KINDS: &[&str] = &["launch", "cli"];

/// The task's cost record, or `None` when no CLI was launched. `earlier_turns`: in
/// time-budget mode, the turn records of the sessions before the last (each attempt
/// then carries its provider reports and model, as the last does); empty when they are
/// not at hand (the task failed after its turn), then those attempts are made from
/// `task.json`'s session records alone.
pub(super) fn record(
    p: &Prepared,
    result: &TaskResult,
    earlier_turns: &[TurnRecord],
) -> Option<CostRecord> {
    let attempts = attempts(p, result, earlier_turns);
    (!attempts.is_empty()).then(|| CostRecord::new(&result.task_id, &result.harness, attempts))
}

/// One attempt per launch of the CLI, in order (`earlier_turns`: as [`record`]'s).
pub(super) fn attempts(
    p: &Prepared,
    result: &TaskResult,
    earlier_turns: &[TurnRecord],
) -> Vec<CostAttempt> {
    let launcher_error = result
        .error
        .clone()
        .filter(|_| LAUNCH_KINDS.contains(&result.error_kind.as_deref().unwrap_or("")));
    if result.turn.is_none() && launcher_error.is_none() {
        return Vec::new();
    }
    // The harness's declared totals scope for this CLI version (asked again: the launch
    // stage's instance is gone; a component that cannot answer leaves it unknown).
    let version = result.cli.version.as_deref();
    let (scope, usage_scope) = match Launcher::new(&p.loaded) {
        Ok(mut l) => (l.totals(version).ok(), l.usage_totals(version).ok()),
        Err(_) => (None, None),
    };
    let settings = AttemptSettings {
        requested_model: result.requested_model.clone(),
        model: None,
        cli_version: result.cli.version.clone(),
        argv: result.cli.argv.clone(),
        max_turns: result.run_limits.max_turns,
        max_tool_calls: result.run_limits.max_tool_calls,
        timeout_ms: result.run_limits.turn_timeout_ms,
    };
    let sessions: &[SessionRecord] = result
        .time_budget
        .as_ref()
        .map_or(&[], |t| t.sessions.as_slice());
    // Whether the harness's stream reports cost at all (asked again, as above).
    let reports_cost = super::caps::describe(&p.loaded).is_ok_and(|d| d.caps.reports_cost);
    let Some((_, earlier)) = sessions.split_last() else {
        let mut only = CostAttempt::new(1, result.turn.as_ref(), settings, scope, launcher_error);
        only.usage_totals_scope = usage_scope;
        below_the_stream(&mut only, result);
        cut_before_final_result(&mut only, result, reports_cost);
        return vec![only];
    };
    // Time-budget mode: the sessions before the last from their records (each launch's
    // own figures: a resumed launch's running total was read with what the session had
    // spent before it), the last from the turn record.
    let turns = (earlier_turns.len() == earlier.len()).then_some(earlier_turns);
    let mut attempts: Vec<CostAttempt> = earlier
        .iter()
        .enumerate()
        .map(|(i, s)| match turns.map(|t| &t[i]) {
            Some(turn) => session_turn_attempt(s, turn, &settings, scope, usage_scope),
            None => session_attempt(s, &settings, scope, usage_scope),
        })
        .collect();
    let mut last = CostAttempt::new(
        sessions.len() as u32,
        result.turn.as_ref(),
        AttemptSettings {
            argv: sessions.last().map(|s| s.argv.clone()).unwrap_or_default(),
            timeout_ms: sessions
                .last()
                .and_then(|s| s.timeout_ms)
                .or(settings.timeout_ms),
            ..settings
        },
        scope,
        launcher_error,
    );
    last.usage_totals_scope = usage_scope;
    below_the_stream(&mut last, result);
    cut_before_final_result(&mut last, result, reports_cost);
    if sessions.len() > 1 {
        last.resumed = true;
    }
    attempts.push(last);
    attempts
}

/// A final result whose usage is below what the launch's own stream already showed (the
/// sum of its messages' usage, in any count): not complete. Claude Code's
/// `error_max_budget_usd` result (its native `--max-budget-usd` stop) reports only its
/// first model call's usage; any CLI's result could. Each count becomes the larger of
/// the two (a lower bound, `limits::budget::usage_floor`), the usage `partial`, with
/// that reason. A usage read from the messages alone, or not a figure, is left alone.
fn below_the_stream(attempt: &mut CostAttempt, result: &TaskResult) {
    let Some(turn) = result.turn.as_ref() else {
        return;
    };
    if !matches!(
        turn.usage_source.as_str(),
        "cli_result" | "cli_result_less_earlier"
    ) || !matches!(
        attempt.usage_status,
        TotalsStatus::Complete | TotalsStatus::Partial
    ) {
        return;
    }
    let Some(total) = attempt.usage else {
        return;
    };
    let messages = attempt.provider_reports.messages.iter();
    let Some(floor) = usage_floor(total, messages.clone().filter_map(|m| m.usage.as_ref())) else {
        return;
    };
    let count = messages.filter(|m| m.usage.is_some()).count();
    attempt.usage = Some(floor);
    attempt.usage_status = TotalsStatus::Partial;
    attempt.reasons.push(format!(
        "the CLI's final result{} reports less token usage ({} input, {} output) than its \
         stream's own {count} message(s) showed: each count is the larger of the two \
         ({} input, {} output), a lower bound",
        turn.cli_result
            .as_ref()
            .and_then(|r| r.error_kind.as_deref())
            .map(|k| format!(" (`{k}`)"))
            .unwrap_or_default(),
        total.input_tokens,
        total.output_tokens,
        floor.input_tokens,
        floor.output_tokens,
    ));
}

/// A launch the host stopped (a cap, a budget, an early stop, a timeout) before the CLI's
/// final result, and a figure not seen: the CLI did not fail to report it, the stop cut it
/// off. Cost, on a harness whose stream reports it (Claude Code reports cost only in its
/// final result); token usage, on any harness (Codex reports it in `turn.completed`,
/// Gemini CLI in its final `result`). `partial`, the figure unknown (`null`), with that
/// reason.
fn cut_before_final_result(attempt: &mut CostAttempt, result: &TaskResult, reports_cost: bool) {
    let Some(turn) = result.turn.as_ref() else {
        return;
    };
    if result.stop.is_none() || turn.cli_result.is_some() {
        return;
    }
    // A CLI that reports no usage at all (grok-cli) lost nothing to the stop: not reported.
    let reports_usage = !crate::limits::budget::REPORTS_NO_USAGE.contains(&result.harness.as_str());
    if reports_usage && attempt.usage.is_none() && attempt.usage_status == TotalsStatus::NotReported
    {
        attempt.usage_status = TotalsStatus::Partial;
        attempt
            .reasons
            .retain(|r| !r.starts_with("the CLI reported no token usage"));
        attempt.reasons.push(
            "the host stopped the CLI before it reported its token usage (at the end of \
             its turn or in its final result): the usage is unknown"
                .into(),
        );
    }
    if reports_cost
        && attempt.cost_usd.is_none()
        && attempt.cost_status == TotalsStatus::NotReported
    {
        attempt.cost_status = TotalsStatus::Partial;
        attempt
            .reasons
            .retain(|r| !r.starts_with("the CLI reported no cost"));
        attempt.reasons.push(
            "the host stopped the CLI before its final result, where it reports cost: the \
             cost is unknown (never estimated from tokens)"
                .into(),
        );
    }
}

/// The attempt of one earlier session of a time-budget run, from its turn record (its
/// provider reports and model kept, as an iterations-mode attempt's) and its session
/// record (its argv, timeout, duration).
fn session_turn_attempt(
    s: &SessionRecord,
    turn: &TurnRecord,
    settings: &AttemptSettings,
    scope: Option<TotalsScope>,
    usage_scope: Option<TotalsScope>,
) -> CostAttempt {
    let mut attempt = CostAttempt::new(
        s.index,
        Some(turn),
        AttemptSettings {
            argv: s.argv.clone(),
            timeout_ms: s.timeout_ms.or(settings.timeout_ms),
            ..settings.clone()
        },
        scope,
        None,
    );
    attempt.session_id = s.stream_session_id.clone().or_else(|| s.session_id.clone());
    attempt.resumed = s.resumed;
    attempt.agent_seconds = Some(s.duration_ms as f64 / 1000.0);
    attempt.usage_totals_scope = usage_scope;
    attempt
}

/// The attempt of one earlier session of a time-budget run, from its record alone.
fn session_attempt(
    s: &SessionRecord,
    settings: &AttemptSettings,
    scope: Option<TotalsScope>,
    usage_scope: Option<TotalsScope>,
) -> CostAttempt {
    let mut reasons = Vec::new();
    let cost_status = if s.cost_usd.is_some() {
        TotalsStatus::Complete
    } else {
        reasons.push("the CLI reported no cost for this session, or its share of a running total could not be told".into());
        TotalsStatus::NotReported
    };
    // The session's usage was read through the harness's usage scope when it ran (a
    // resumed launch's running total less the earlier launches' usage).
    let ambiguous = s.usage_source == "cli_result_session_total";
    let reported = s.usage_source != "none" && !ambiguous;
    if ambiguous {
        reasons.push(
            "a resumed launch reports the session's running token usage, and what its \
             earlier launches used is not known: not counted"
                .into(),
        );
    } else if !reported {
        reasons.push("the CLI reported no token usage".into());
    }
    CostAttempt {
        attempt: s.index,
        session_id: s.stream_session_id.clone().or_else(|| s.session_id.clone()),
        resumed: s.resumed,
        settings: AttemptSettings {
            argv: s.argv.clone(),
            // Each session's own timeout (the time left of the budget when it began).
            timeout_ms: s.timeout_ms.or(settings.timeout_ms),
            ..settings.clone()
        },
        agent_seconds: Some(s.duration_ms as f64 / 1000.0),
        launcher_error: None,
        totals_scope: scope,
        usage_totals_scope: usage_scope,
        cost_usd: s.cost_usd,
        usage: s.usage.filter(|_| reported),
        cost_status,
        usage_status: if ambiguous {
            TotalsStatus::Ambiguous
        } else if reported {
            TotalsStatus::Complete
        } else {
            TotalsStatus::NotReported
        },
        reasons,
        // Time-budget tasks do not run under the gateway.
        gateway_cost: None,
        provider_reports: ProviderReports::default(),
    }
}

/// Writes `cost.json` into `dir` atomically. A failure is a warning: the record never
/// changes the task's outcome, and no temporary file is left behind.
pub(super) fn write(dir: &Path, record: &CostRecord) {
    let path = dir.join("cost.json");
    if let Err(err) = write_json_atomically(&path, record) {
        let _ = std::fs::remove_file(path.with_extension("json.tmp"));
        eprintln!("warning: {}: cost.json not written: {err}", dir.display());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::{CliResult, MessageRecord};
    use harness_kit::Usage;

    fn usage(input: u64, output: u64) -> Usage {
        Usage {
            input_tokens: input,
            output_tokens: output,
            cache_read_tokens: 0,
            cache_write_tokens: Some(0),
        }
    }

    /// Trial 16u S2: Claude Code stopped by its own `--max-budget-usd`; its
    /// `error_max_budget_usd` result reports 19054 input tokens, the stream's two
    /// messages 19054 + 19160.
    #[test]
    fn a_final_usage_below_the_streams_messages_is_partial_with_the_larger_figure() {
        let (mut turn, _) = crate::turn::collect::Collector::new(Default::default())
            .finish(crate::turn::finish::TurnEnd::default());
        let message = |id: &str, input| MessageRecord {
            message_id: id.into(),
            parent_call_id: None,
            text: String::new(),
            usage: Some(usage(input, 1)),
            cost_usd: None,
            first_ms: 0,
        };
        turn.messages = vec![message("a", 19054), message("b", 19160)];
        turn.usage = Some(usage(19054, 20));
        turn.usage_source = "cli_result".into();
        turn.cost_usd = Some(0.19207);
        turn.cli_result = Some(CliResult {
            success: false,
            error_kind: Some("error_max_budget_usd".into()),
            error_message: None,
            max_turns_reached: false,
            num_turns: Some(2),
            cost_usd: Some(0.19207),
            duration_ms: None,
            text: None,
            usage: Some(usage(19054, 20)),
        });
        let mut result: TaskResult = serde_json::from_str(r#"{"result_version":1,"task_id":"t","harness":"claude-code","status":"FAILURE","error":null,"description":null,"task_file":"/t.yaml","prompt":"p","requested_model":null,"cli":{"path":null,"version":null,"argv":[],"pgid":null,"caveats":[]},"run_limits":{"max_turns":null,"max_tool_calls":null,"turn_timeout_ms":null,"task_timeout_ms":null,"native":[]},"stop":null,"turn":null,"criteria":[],"weighted_score":null,"post_failure_criteria_results":[],"setup_ms":0,"grading_ms":0,"host_turn_work_us":0,"stderr_tail":"","scripted_model_requests":null,"paths":{"recording":"r","stderr":"s","workspace":"w"}}"#).unwrap();
        result.turn = Some(turn.clone());
        let attempt = |result: &TaskResult| {
            let mut a = CostAttempt::new(
                1,
                result.turn.as_ref(),
                AttemptSettings::default(),
                None,
                None,
            );
            below_the_stream(&mut a, result);
            a
        };
        let a = attempt(&result);
        assert_eq!(a.usage_status, TotalsStatus::Partial);
        assert_eq!(
            a.usage.map(|u| (u.input_tokens, u.output_tokens)),
            Some((38214, 20))
        );
        assert!(
            a.reasons.iter().any(|r| r.contains("error_max_budget_usd")
                && r.contains("19054 input")
                && r.contains("lower bound")),
            "{:?}",
            a.reasons
        );
        assert_eq!(
            a.cost_status,
            TotalsStatus::Complete,
            "the cost covers both calls"
        );
        let record = CostRecord::new("t", "claude-code", vec![a]);
        assert_eq!(record.usage_status, TotalsStatus::Partial);
        assert_eq!(record.usage.map(|u| u.input_tokens), Some(38214));
        // A result that covers its messages stays complete, its figure unchanged.
        let mut covered = turn;
        covered.usage = Some(usage(38214, 20));
        result.turn = Some(covered);
        let a = attempt(&result);
        assert_eq!(a.usage_status, TotalsStatus::Complete);
        assert_eq!(a.usage.map(|u| u.input_tokens), Some(38214));
    }

    #[test]
    fn a_failed_write_leaves_no_temporary_file() {
        let dir =
            std::env::temp_dir().join(format!("coder-eval-cost-write-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        // A folder named cost.json (not empty) makes the rename fail.
        std::fs::create_dir_all(dir.join("cost.json/x")).unwrap();
        write(&dir, &CostRecord::new("t", "h", Vec::new()));
        assert!(!dir.join("cost.json.tmp").exists());
        assert!(dir.join("cost.json").is_dir(), "nothing else was touched");
        std::fs::remove_dir_all(dir.join("cost.json")).unwrap();
        // And a good write leaves the record alone.
        write(&dir, &CostRecord::new("t", "h", Vec::new()));
        let text = std::fs::read_to_string(dir.join("cost.json")).unwrap();
        assert!(text.contains("\"cost_version\": 1"), "{text}");
        assert!(!dir.join("cost.json.tmp").exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Trial 14u finding 3: a stopped run of a CLI that reports no usage at all (grok-cli)
    /// stays `not_reported` (the stop cut nothing off); a CLI that reports usage at the
    /// end (Continue) stopped before it did is `partial`.
    #[test]
    fn a_stop_cuts_off_no_usage_of_a_cli_that_reports_none() {
        let (turn, _) = crate::turn::collect::Collector::new(Default::default())
            .finish(crate::turn::finish::TurnEnd::default());
        let mut result: TaskResult = serde_json::from_str(r#"{"result_version":1,"task_id":"t","harness":"grok-cli","status":"FAILURE","error":null,"description":null,"task_file":"/t.yaml","prompt":"p","requested_model":null,"cli":{"path":null,"version":null,"argv":[],"pgid":null,"caveats":[]},"run_limits":{"max_turns":null,"max_tool_calls":null,"turn_timeout_ms":null,"task_timeout_ms":null,"native":[]},"stop":{"reason":"max_turns","at_ms":5},"turn":null,"criteria":[],"weighted_score":null,"post_failure_criteria_results":[],"setup_ms":0,"grading_ms":0,"host_turn_work_us":0,"stderr_tail":"","scripted_model_requests":null,"paths":{"recording":"r","stderr":"s","workspace":"w"}}"#).unwrap();
        result.turn = Some(turn);
        let status = |result: &TaskResult| {
            let mut a = CostAttempt::new(
                1,
                result.turn.as_ref(),
                AttemptSettings::default(),
                None,
                None,
            );
            cut_before_final_result(&mut a, result, false);
            (a.usage_status, a.usage)
        };
        assert_eq!(status(&result), (TotalsStatus::NotReported, None));
        result.harness = "continue".into();
        assert_eq!(status(&result), (TotalsStatus::Partial, None));
    }
}
