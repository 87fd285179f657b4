//! What the agent did, in order, and where the time went: the two parts of a run's
//! section in `report.html` drawn from its turn record.
//!
//! - [`trajectory`]: the prompt, then each model call (its text, usage and cost when the
//!   stream reports them), each tool call with its input and output excerpt, sub-agents
//!   nested under the tool call that started them, diagnostics at the moment they were
//!   met, and the stop reason last. Collapsed by default (`<details>`: the browser's find
//!   opens the part it finds).
//! - [`timeline`]: an SVG on one time axis (ms from the turn's start): head and tail, the
//!   main thread's model calls (generation time), and the tool calls, each on the first
//!   lane free at its start, so parallel calls sit on separate lanes; sub-agents' tool
//!   calls are drawn apart (class `sub`). Where a CLI's caveat changes the picture (tool
//!   starts placed from a reported duration, or reported late), the caption says so.
//!
//! - [`glance`]: for a run of a few tasks, the report's first screen: per run its
//!   timeline and its trajectory as one line of steps.
//!
//! Every value from a run is escaped (maud).

use crate::results::{TaskResult, ToolCallRecord, TurnRecord};
use harness_kit::Caveat;
use maud::{Markup, PreEscaped, html};
use std::collections::BTreeMap;

/// CSS for both parts, added to the report's style sheet.
pub(crate) const STYLE: &str = "
details.trajectory { margin: 0.5em 0; }
details.trajectory ol { padding-left: 1.5em; }
.entry { margin: 0.2em 0; }
.subagent { border-left: 3px solid #beaed4; margin-left: 0.5em; padding-left: 0.5em; }
.model { color: #2a6b2a; } .diag { color: #8a5a00; } .stopped { color: #a00; }
svg.timeline { display: block; margin: 0.5em 0; font: 10px system-ui, sans-serif; }
svg.timeline .head, svg.timeline .tail { fill: #9bb7d4; }
svg.timeline .gen { fill: #7fc97f; } svg.timeline .tool { fill: #fdc086; }
svg.timeline .tool.sub { fill: #beaed4; } svg.timeline .tool.error { stroke: #a00; }
table.glance td { vertical-align: middle; }
.steps { max-width: 40em; font-size: 12px; }
.step { display: inline-block; border: 1px solid #ccc; border-radius: 3px; padding: 0 4px; margin: 1px 0; }
.step.model { background: #eef7ee; } .step.tool { background: #fff3e4; }
.step.error, .step.denied { border-color: #a00; }
";

/// One thing that happened on a thread, for ordering.
enum Entry<'a> {
    Call {
        index: Option<u32>,
        generation_ms: Option<u64>,
    },
    Message(&'a crate::results::MessageRecord),
    Tool(&'a ToolCallRecord),
    Diagnostic(&'a crate::results::DiagnosticRecord),
}

/// The trajectory of run `r` (nothing when no turn ran).
pub(crate) fn trajectory(r: &TaskResult) -> Markup {
    let Some(t) = &r.turn else {
        return html! {};
    };
    // Per thread (None = the main agent; Some(call) = the sub-agent that call started):
    // (ms, order at equal ms, entry).
    let mut threads: BTreeMap<Option<&str>, Vec<(u64, u8, Entry)>> = BTreeMap::new();
    for c in &t.model_calls {
        threads
            .entry(c.parent_call_id.as_deref())
            .or_default()
            .push((
                c.started_ms,
                0,
                Entry::Call {
                    index: c.main_index,
                    generation_ms: c.generation_ms,
                },
            ));
    }
    for m in &t.messages {
        threads
            .entry(m.parent_call_id.as_deref())
            .or_default()
            .push((m.first_ms, 1, Entry::Message(m)));
    }
    for c in &t.tool_calls {
        threads
            .entry(c.parent_call_id.as_deref())
            .or_default()
            .push((c.started_ms, 2, Entry::Tool(c)));
    }
    for d in &t.diagnostics {
        threads
            .entry(None)
            .or_default()
            .push((d.at_ms, 3, Entry::Diagnostic(d)));
    }
    for entries in threads.values_mut() {
        entries.sort_by_key(|(ms, order, _)| (*ms, *order));
    }
    let main = threads.get(&None).map_or(&[][..], Vec::as_slice);
    html! {
        details.trajectory {
            summary {
                "Trajectory: " (t.model_calls.len()) " model call(s), "
                (t.tool_calls.len()) " tool call(s)"
                @if !t.diagnostics.is_empty() { ", " (t.diagnostics.len()) " diagnostic(s)" }
            }
            ol {
                li.entry { b { "Prompt" } pre { (r.prompt) } }
                (entries(main, &threads))
                li.entry.stopped {
                    b { "End: " } (name(&t.final_status))
                    @if let Some(stop) = &r.stop {
                        " · stopped by the host: " (stop.reason.as_str())
                        @if let Some(at) = stop.at_ms { " at " (at) " ms" }
                    }
                    @if let Some(e) = &t.reducer_error {
                        " · reducer error"
                        @if let Some(line) = e.line { " at line " (line) }
                        ": " (e.message)
                    }
                }
            }
        }
    }
}

fn entries(
    list: &[(u64, u8, Entry)],
    threads: &BTreeMap<Option<&str>, Vec<(u64, u8, Entry)>>,
) -> Markup {
    html! {
        @for (ms, _, entry) in list {
            @match entry {
                Entry::Call { index, generation_ms } => li.entry.model {
                    b { "Model call" @if let Some(i) = index { " " (i) } }
                    " at " (ms) " ms"
                    @if let Some(g) = generation_ms { " · generation " (g) " ms" }
                },
                Entry::Message(m) => li.entry {
                    @if m.text.is_empty() { span.muted { "(no text)" } } @else { pre { (m.text) } }
                    @if let Some(u) = &m.usage {
                        span.muted {
                            (u.input_tokens) " in · " (u.output_tokens) " out · "
                            (u.cache_read_tokens) " cache read"
                            @if let Some(c) = m.cost_usd { " · " (format!("{c:.4}")) " USD" }
                        }
                    }
                },
                Entry::Tool(c) => li.entry {
                    details {
                        summary {
                            b { (c.name) } " · " (name(&c.status))
                            @if let Some(code) = c.exit_code { " · exit " (code) }
                            " · " (c.duration_ms) " ms at " (ms) " ms"
                        }
                        pre { (input_text(&c.input)) }
                        @if !c.output_excerpt.is_empty() { pre.muted { (c.output_excerpt) } }
                        @if let Some(sub) = threads.get(&Some(c.call_id.as_str())) {
                            div.subagent {
                                b { "Sub-agent" }
                                ol { (entries(sub, threads)) }
                            }
                        }
                    }
                },
                Entry::Diagnostic(d) => li.entry.diag {
                    b { "Diagnostic " (d.kind) } " at " (ms) " ms (line " (d.line) "): " (d.message)
                },
            }
        }
    }
}

/// A status as `task.json` spells it.
fn name<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_value(value)
        .ok()
        .and_then(|v| v.as_str().map(String::from))
        .unwrap_or_default()
}

/// A tool input as people read it: its shell command (the one reading of it,
/// [`harness_kit::shell::shell_command`], which `TurnRecord.commands` holds too), else the
/// input's JSON.
pub(crate) fn input_text(input: &serde_json::Value) -> String {
    harness_kit::shell::shell_command(input).unwrap_or_else(|| input.to_string())
}

/// At a glance, for a run of a few tasks (the report's first screen): one row per run
/// with its status, its timeline, and its trajectory as a line of steps (model calls'
/// first words, tool calls with their status). Nothing for larger runs (their matrix
/// comes first).
pub(crate) fn glance(results: &[TaskResult]) -> Markup {
    const MAX_RUNS: usize = 12;
    if results.len() > MAX_RUNS || results.iter().all(|r| r.turn.is_none()) {
        return html! {};
    }
    html! {
        h2 { "At a glance" }
        table.glance {
            @for r in results {
                tr {
                    td class=(r.status.as_str()) {
                        a href={ "#" (super::anchors::run_anchor(r)) } { b { (r.harness) } }
                        br; (r.task_id)
                        @if let Some(v) = &r.variant { br; "variant " (v) }
                        @if let Some(i) = r.replicate { " · " (crate::suite::replicate_dir_of(i, r.replicates)) }
                        br; (r.status.as_str())
                    }
                    @if let Some(t) = &r.turn {
                        td { (timeline_sized(t, &r.cli.caveats, 300.0)) }
                        td.steps { (steps_line(t)) }
                    } @else {
                        td.muted colspan="2" { (r.error.as_deref().unwrap_or("no turn ran")) }
                    }
                }
            }
        }
    }
}

/// A turn's main thread as a line of steps.
fn steps_line(t: &TurnRecord) -> Markup {
    let mut items: Vec<(u64, u8, Markup)> = Vec::new();
    for m in t.messages.iter().filter(|m| m.parent_call_id.is_none()) {
        let words: String = m.text.chars().take(48).collect();
        let more = if m.text.chars().count() > 48 {
            "…"
        } else {
            ""
        };
        if !words.trim().is_empty() {
            items.push((m.first_ms, 0, html! { span.step.model { (words) (more) } }));
        }
    }
    for c in t.tool_calls.iter().filter(|c| c.parent_call_id.is_none()) {
        let what: String = input_text(&c.input).chars().take(32).collect();
        items.push((
            c.started_ms,
            1,
            html! { span class={ "step tool " (name(&c.status)) } { b { (c.name) } " " (what) } },
        ));
    }
    items.sort_by_key(|(ms, order, _)| (*ms, *order));
    html! { @for (_, _, item) in items { (item) " → " } span.step { (name(&t.final_status)) } }
}

/// Width of the drawing area and its left margin, px.
const WIDTH: f64 = 760.0;
const LEFT: f64 = 60.0;
const LANE: f64 = 14.0;

/// The timeline picture of turn `t` of a CLI with `caveats`.
pub(crate) fn timeline(t: &TurnRecord, caveats: &[Caveat]) -> Markup {
    timeline_sized(t, caveats, WIDTH)
}

/// [`timeline`] with a drawing area `width` px wide.
fn timeline_sized(t: &TurnRecord, caveats: &[Caveat], width: f64) -> Markup {
    let total = t.timing.turn_duration_ms.max(1) as f64;
    let x = |ms: u64| LEFT + ms as f64 * width / total;
    let w = |ms: u64| (ms as f64 * width / total).max(1.0);
    let lanes = tool_lanes(&t.tool_calls);
    let tool_lanes = lanes.iter().copied().max().map_or(0, |l| l + 1);
    let height = LANE * (3 + tool_lanes) as f64 + 16.0;
    let tool_y = |lane: usize| LANE * (2 + lane) as f64 + 2.0;
    let head = t.timing.harness_startup_ms;
    let tail = t.timing.harness_teardown_ms;
    let note = caveats.iter().find_map(|c| match c {
        Caveat::ToolStartFromCliDuration => Some(
            "This CLI prints a tool only once finished: each tool's start is placed from the \
             duration the CLI reports (bounded by the model call that asked for it, so a tool \
             printed late can read shorter than it ran).",
        ),
        Caveat::ToolStartReportedLate => Some(
            "This CLI reports a tool's start after it began: each tool bar starts late and \
             reads short by that lag, and the model call before it reads long by the same.",
        ),
        _ => None,
    });
    html! {
        svg.timeline xmlns="http://www.w3.org/2000/svg" width=(LEFT + width + 20.0) height=(height)
            role="img" aria-label="timeline of the turn" {
            text x="0" y=(LANE - 3.0) { "head/tail" }
            @if let Some(h) = head { rect.head x=(x(0)) y="2" width=(w(h)) height=(LANE - 4.0) { title { "head " (h) " ms" } } }
            @if let Some(tl) = tail {
                rect.tail x=(x(t.timing.turn_duration_ms.saturating_sub(tl))) y="2" width=(w(tl)) height=(LANE - 4.0) {
                    title { "tail " (tl) " ms" }
                }
            }
            text x="0" y=(2.0 * LANE - 3.0) { "model" }
            @for c in t.model_calls.iter().filter(|c| c.parent_call_id.is_none()) {
                @if let Some(g) = c.generation_ms {
                    rect.gen x=(x(c.started_ms)) y=(LANE + 2.0) width=(w(g)) height=(LANE - 4.0) {
                        title { "model call " (c.main_index.unwrap_or(0)) ": generation " (g) " ms" }
                    }
                }
            }
            text x="0" y=(3.0 * LANE - 3.0) { "tools" }
            @for (c, lane) in t.tool_calls.iter().zip(&lanes) {
                rect class=(tool_class(c)) x=(x(c.started_ms)) y=(tool_y(*lane)) width=(w(c.duration_ms)) height=(LANE - 4.0) {
                    title { (c.name) " · " (name(&c.status)) " · " (c.duration_ms) " ms" }
                }
            }
            text x=(LEFT) y=(height - 2.0) { "0 ms" }
            text x=(LEFT + width) y=(height - 2.0) text-anchor="end" { (t.timing.turn_duration_ms) " ms" }
        }
        @if let Some(note) = note { p.muted { (PreEscaped("&#9888; ")) (note) } }
    }
}

fn tool_class(c: &ToolCallRecord) -> String {
    let mut class = String::from("tool");
    if c.parent_call_id.is_some() {
        class.push_str(" sub");
    }
    if c.status == crate::results::ToolOutcome::Error {
        class.push_str(" error");
    }
    class
}

/// Each tool call's lane: the first lane whose last call ended by its start (calls in
/// the record's order, which is their start order).
fn tool_lanes(calls: &[ToolCallRecord]) -> Vec<usize> {
    let mut lane_ends: Vec<u64> = Vec::new();
    calls
        .iter()
        .map(|c| {
            let end = c.started_ms + c.duration_ms;
            match lane_ends.iter().position(|&e| e <= c.started_ms) {
                Some(l) => {
                    lane_ends[l] = end;
                    l
                }
                None => {
                    lane_ends.push(end);
                    lane_ends.len() - 1
                }
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::ToolOutcome;

    fn call(id: &str, start: u64, ms: u64) -> ToolCallRecord {
        ToolCallRecord {
            call_id: id.into(),
            name: "bash".into(),
            input: serde_json::json!({"command": "<script>x</script>"}),
            parent_call_id: None,
            status: ToolOutcome::Ok,
            exit_code: None,
            output_excerpt: String::new(),
            started_ms: start,
            finished_ms: Some(start + ms),
            duration_ms: ms,
        }
    }

    #[test]
    fn overlapping_tool_calls_take_separate_lanes_and_free_lanes_are_reused() {
        let calls = [
            call("a", 0, 100),
            call("b", 50, 100),
            call("c", 120, 10),
            call("d", 200, 5),
        ];
        assert_eq!(tool_lanes(&calls), [0, 1, 0, 0]);
    }

    #[test]
    fn the_timeline_draws_one_bar_per_tool_call_and_escapes_its_names() {
        let mut t: TurnRecord = serde_json::from_value(serde_json::json!({
            "record_version": 1, "harness": "pi", "component": "builtin:pi",
            "session_id": null, "cli_version": null, "model": null,
            "final_status": "completed", "num_turns": 1, "cli_num_turns": null,
            "max_turns_exhausted": false, "max_tool_calls_exhausted": false,
            "model_calls": [], "messages": [], "tool_calls": [], "commands": [],
            "usage": {"input_tokens": 0, "output_tokens": 0, "cache_read_tokens": 0, "cache_write_tokens": 0},
            "usage_source": "none", "cost_usd": null, "cli_result": null,
            "timing": {"turn_duration_ms": 1000, "harness_startup_ms": 100,
                       "generation_duration_ms": 500, "tool_union_ms": 150,
                       "harness_teardown_ms": 50, "tool_sum_ms": 200},
            "exit": null, "diagnostics": [], "reducer_error": null,
            "stdout_lines": 0, "stdout_bytes": 0
        }))
        .unwrap();
        t.tool_calls = vec![call("a", 200, 100), call("b", 250, 100)];
        t.tool_calls[1].name = "<b>evil</b>".into();
        let svg = timeline(&t, &[Caveat::ToolStartFromCliDuration]).into_string();
        assert_eq!(svg.matches("<rect class=\"tool").count(), 2, "{svg}");
        assert!(!svg.contains("<b>evil"), "{svg}");
        assert!(svg.contains("&lt;b&gt;evil"), "{svg}");
        assert!(svg.contains("placed from the duration"), "{svg}");
    }
}
