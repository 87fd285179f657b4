//! One run's section of `report.html` (one task × harness, or one replicate): where the
//! turn's time went, its tool calls, the criteria with score and details, the error or
//! stop, and what the agent left running.

use super::{plural, seconds, url_segment};
use crate::results::{CriterionResult, TaskResult};
use maud::{Markup, html};

pub(super) fn run_detail(r: &TaskResult) -> Markup {
    let status = r.status.as_str();
    let folder = crate::suite::unit_of(r)
        .rel_dir()
        .iter()
        .map(|c| url_segment(&c.to_string_lossy()))
        .collect::<Vec<_>>()
        .join("/");
    html! {
        div.run id=(crate::run::anchors::run_anchor(r)) {
            h4 {
                span class=(status) { (status) } " " (r.harness)
                @if let Some(v) = &r.variant { " · " (v) }
                @if let Some(i) = r.replicate { " · " (crate::suite::replicate_dir_of(i, r.replicates)) }
                " · score " (r.weighted_score.map_or("-".into(), |s| format!("{s:.2}")))
                " · " a href={ (folder) "/task.json" } { "task.json" }
                " · " a href={ (folder) "/recording.jsonl" } { "recording" }
                " · " a href={ (folder) "/workspace/" } { "workspace" }
            }
            @if let Some(error) = &r.error { p { b { "Error: " } (error) } }
            @if let Some(note) = r.cap_note() {
                p { b { "Capped: " } (note) ", a clean stop: the criteria decide the status." }
            }
            @if let Some(note) = r.early_stop_note() {
                p {
                    b { "Early stop: " } (note.strip_prefix("early stop: ").unwrap_or(&note))
                    ", a clean stop: the armed criteria decide the status, the others are advisory."
                }
            }
            @if let Some(outcome) = r.turn.as_ref().and_then(|t| t.early_stop.as_ref()) {
                p.muted {
                    "Armed (threshold " (format!("{:.2}", outcome.gate_threshold)) "): "
                    @for a in &outcome.armed {
                        (a.criterion) " (weight " (a.weight) "): " (a.verdict) ". "
                    }
                    @if let Some(why) = &outcome.disarmed { "Disarmed: " (why) }
                }
            }
            @if let Some(note) = r.budget_note() {
                p { b { "Budget: " } (note) ", a clean stop: the criteria decide the status." }
            }
            @if let Some(note) = r.soft_budget_note() {
                p { span.badge { (note) } " (a soft budget: a warning, not a stop)" }
            }
            @for inert in &r.early_stop_inert {
                p.muted { "Inert early-stop trigger: " (inert) }
            }
            @if let Some(stop) = &r.stop {
                p {
                    b { "Stopped by the host: " } (stop.reason.as_str())
                    @if let Some(at) = stop.at_ms { " at " (seconds(at)) }
                }
            }
            @if let Some(tb) = &r.time_budget { (sessions(tb)) }
            @if let Some(n) = r.cli.leftover_processes.filter(|n| *n > 0) {
                p { (n) " process(es) the agent left running were stopped." }
            }
            @if let Some(t) = &r.turn {
                // The whole run's figures: in time-budget mode every session's (the
                // turn is the last session's), tokens and cost from cost.json's totals.
                @let sessions = r.time_budget.as_ref().map_or(0, |tb| tb.sessions.len());
                @let (usage, cost_usd) = match (&r.time_budget, &r.cost) {
                    (Some(_), Some(c)) => (c.usage, c.total_cost_usd),
                    (Some(_), None) => (None, None),
                    (None, _) => (t.usage, t.cost_usd),
                };
                p.muted {
                    (t.cli_version.as_deref().or(r.cli.version.as_deref()).unwrap_or("unknown version"))
                    " · model " (t.model.as_deref().unwrap_or("not reported"))
                    " · " (plural(r.task_num_turns().unwrap_or(t.num_turns) as usize, "turn")) " · "
                    (plural(r.task_tool_calls().unwrap_or(t.tool_calls.len()), "tool call")) " · "
                    @match usage {
                        Some(u) => { (u.input_tokens) " in / " (u.output_tokens) " out tokens" }
                        None => { "tokens not reported" }
                    }
                    @if let Some(c) = cost_usd { " · " (format!("{c:.4}")) " USD" }
                    @if sessions > 1 { " (all " (sessions) " sessions)" }
                }
                @if let Some(g) = &t.gateway {
                    @let s = g.summary(&t.usage_source);
                    p.muted {
                        "Model gateway: " (plural(s.calls as usize, "request")) " ("
                        (s.main_calls) " main, " (s.side_calls) " side"
                        @if g.held { ", call " (g.num_turns) " held" }
                        ") · time to first byte "
                        @match s.ttft_median_ms {
                            Some(ms) => { "median " (ms) " ms" }
                            None => { "-" }
                        }
                        " · usage from " (s.usage_source)
                    }
                }
                (timing(&t.timing))
                (crate::run::trajectory_view::timeline(t, &r.cli.caveats))
                (crate::run::trajectory_view::trajectory(r))
                @if !t.tool_calls.is_empty() { (tool_calls(&t.tool_calls)) }
            }
            @if !r.criteria.is_empty() { (criteria("Criteria", &r.criteria)) }
            @if !r.post_failure_criteria_results.is_empty() {
                (criteria("Criteria as evidence (after a timeout or crash)", &r.post_failure_criteria_results))
            }
        }
    }
}

/// A time-budget run's sessions: one row per launch of the CLI (times from the run's
/// agent start, as in `task.json`), and why no further session was started.
fn sessions(tb: &crate::results::TimeBudgetRecord) -> Markup {
    let ended = serde_json::to_value(tb.ended)
        .ok()
        .and_then(|v| v.as_str().map(String::from))
        .unwrap_or_default();
    html! {
        p {
            b { "Time budget: " } (seconds(tb.budget_ms)) ", "
            (plural(tb.sessions.len(), "session")) "; ended: " (ended)
            @if let Some(note) = &tb.ended_note { " (" (note) ")" }
        }
        table.sessions {
            tr {
                th { "session" } th { "resumed" } th { "started" } th { "duration" }
                th { "timeout" } th { "ended" } th { "turns" } th { "tool calls" }
                th { "recording" }
            }
            @for s in &tb.sessions {
                tr {
                    td { (s.index) }
                    td { (if s.resumed { "yes" } else { "no" }) }
                    td { (seconds(s.started_ms)) }
                    td { (seconds(s.duration_ms)) }
                    td { (s.timeout_ms.map_or("-".into(), seconds)) }
                    td {
                        (serde_json::to_value(s.final_status).ok().and_then(|v| v.as_str().map(String::from)).unwrap_or_default())
                        @if let Some(stop) = s.stop_reason { " (stopped: " (stop.as_str()) ")" }
                    }
                    td { (s.num_turns) }
                    td { (s.tool_calls) }
                    td { (s.recording) }
                }
            }
        }
    }
}

fn timing(t: &crate::results::Timing) -> Markup {
    let total = t.turn_duration_ms.max(1) as f64;
    let parts = [
        ("head", "head (start to first output)", t.harness_startup_ms),
        ("gen", "generation", t.generation_duration_ms),
        ("tools", "tools (union)", t.tool_union_ms),
        ("tail", "tail (last activity to end)", t.harness_teardown_ms),
    ];
    html! {
        div.bar title="head, generation, tools, tail" {
            @for (class, label, ms) in parts {
                @if let Some(ms) = ms {
                    span class=(class) title={ (label) ": " (ms) " ms" }
                        style={ "width:" (format!("{:.2}", ms as f64 * 100.0 / total)) "%" } {}
                }
            }
        }
        p.muted {
            "turn " (t.turn_duration_ms) " ms"
            @for (_, label, ms) in parts {
                " · " (label) " " (ms.map_or("not measured".into(), |ms| format!("{ms} ms")))
            }
        }
    }
}

fn tool_calls(calls: &[crate::results::ToolCallRecord]) -> Markup {
    html! {
        table {
            tr {
                th { "tool call" } th { "status" } th { "exit code" } th { "ms" }
                th { "input" } th { "output (excerpt)" }
            }
            @for c in calls {
                tr {
                    td { (c.name) }
                    td {
                        (serde_json::to_value(c.status).ok().and_then(|v| v.as_str().map(String::from)).unwrap_or_default())
                    }
                    td { (c.exit_code.map_or("-".into(), |e| e.to_string())) }
                    td { (c.duration_ms) }
                    td { pre { (crate::run::trajectory_view::input_text(&c.input)) } }
                    td { pre { (c.output_excerpt) } }
                }
            }
        }
    }
}

fn criteria(title: &str, criteria: &[CriterionResult]) -> Markup {
    html! {
        table {
            tr {
                th { (title) } th { "type" } th { "weight" } th { "verdict" }
                th { "score / pass threshold" } th { "details" }
            }
            @for c in criteria {
                @let informational = c.weight == 0.0;
                tr class=(if informational { "" } else if c.passed { "SUCCESS" } else { "FAILURE" }) {
                    td { (c.description) }
                    td { (c.kind) }
                    td { (c.weight) }
                    td {
                        (if c.passed { "passed" } else { "failed" })
                        @if informational { span.muted { " (informational)" } }
                        @if c.advisory { span.muted { " (advisory: early stop)" } }
                    }
                    td { (format!("{:.2}", c.score)) " / " (format!("{:.2}", c.pass_threshold)) }
                    td {
                        @if let Some(e) = &c.error { b { (e.kind) ": " } (e.message) }
                        @else { pre { (c.details) } }
                    }
                }
            }
        }
    }
}
