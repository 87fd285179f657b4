//! The collector: the one place where events and stamps become counts, caps and timing.
//!
//! Fed event by event (live, so caps can stop the CLI at the right event) and finished
//! once with how the turn ended. Same events and stamps in, same [`TurnRecord`] out.
//!
//! Caps (DESIGN.md): `max_turns: N` lets main-thread call N and its tools run, and fires
//! when main-thread call N+1 begins; `max_tool_calls: N` fires when tool call N+1 starts
//! after N have been made. After a cap fires, later events are kept in the trajectory but
//! no longer counted, so the record shows `num_turns = N + 1`. The same holds after any
//! other stop the host decides ([`Collector::freeze`]).

use crate::record::*;
use harness_kit::{Event, ToolStatus, Usage, excerpt, replace_lone_surrogates};
use std::collections::HashMap;

/// The run limits the collector enforces.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Caps {
    pub max_turns: Option<u32>,
    pub max_tool_calls: Option<u32>,
}

/// A cap fired: the host must end the turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// Main-thread model call `max_turns + 1` began.
    MaxTurns,
    /// Tool call `max_tool_calls + 1` started.
    MaxToolCalls,
}

/// How the turn ended, from outside the stream.
#[derive(Debug, Clone, Default)]
pub struct TurnEnd {
    /// µs from the turn's start.
    pub end_us: u64,
    pub exit: Option<crate::recording::ExitStatus>,
    /// The turn or task timeout fired.
    pub timed_out: bool,
    pub reducer_error: Option<ReducerError>,
    pub stdout_lines: u64,
    pub stdout_bytes: u64,
}

/// Builds one turn's record from its events.
pub struct Collector {
    caps: Caps,
    trajectory: Vec<StampedEvent>,
    stop: Option<Stop>,
    /// The host decided to end the turn (any reason): later events are kept, not counted.
    frozen: bool,
    main_calls: u32,
    tools_started: u32,
    first_output_us: Option<u64>,
    last_output_us: Option<u64>,
    /// When the latest model call began (a back-dated tool start never goes before it).
    last_call_us: Option<u64>,
    session: Option<(Option<String>, Option<String>, Option<String>)>,
    model_calls: Vec<(ModelCallRecord, u64)>,
    messages: Vec<MessageRecord>,
    message_index: HashMap<String, usize>,
    tools: Vec<(ToolCallRecord, u64, Option<u64>)>,
    tool_index: HashMap<String, usize>,
    cli_result: Option<CliResult>,
    diagnostics: Vec<DiagnosticRecord>,
}

impl Collector {
    pub fn new(caps: Caps) -> Collector {
        Collector {
            caps,
            trajectory: Vec::new(),
            stop: None,
            frozen: false,
            main_calls: 0,
            tools_started: 0,
            first_output_us: None,
            last_output_us: None,
            last_call_us: None,
            session: None,
            model_calls: Vec::new(),
            messages: Vec::new(),
            message_index: HashMap::new(),
            tools: Vec::new(),
            tool_index: HashMap::new(),
            cli_result: None,
            diagnostics: Vec::new(),
        }
    }

    /// The cap that fired, if any.
    pub fn stopped(&self) -> Option<Stop> {
        self.stop
    }

    /// The host has decided to end the turn (a timeout, Ctrl-C, ...): events that still
    /// arrive while the CLI is stopped are kept in the trajectory but no longer counted.
    pub fn freeze(&mut self) {
        self.frozen = true;
    }

    /// Whether the CLI's final result has been seen.
    pub fn final_result_seen(&self) -> bool {
        self.cli_result.is_some()
    }

    /// The events so far (the trajectory graders see).
    pub fn trajectory(&self) -> &[StampedEvent] {
        &self.trajectory
    }

    /// A diagnostic from the host itself (line too large, unreadable recording line).
    pub fn host_diagnostic(&mut self, line: u64, stamp_us: u64, kind: &str, message: String) {
        self.push(StampedEvent {
            line,
            stamp_us,
            event: Event::Diagnostic {
                kind: kind.to_string(),
                message,
                raw: String::new(),
            },
        });
    }

    /// Takes one event; returns the cap that fires on it, the first time one does.
    pub fn push(&mut self, stamped: StampedEvent) -> Option<Stop> {
        let at = stamped.stamp_us;
        let counting = self.stop.is_none() && !self.frozen;
        let mut fired = None;
        match &stamped.event {
            Event::Diagnostic { kind, message, raw } => self.diagnostics.push(DiagnosticRecord {
                line: stamped.line,
                at_ms: ms(at),
                kind: kind.clone(),
                message: message.clone(),
                raw: raw.clone(),
            }),
            _ if !counting => {}
            Event::SessionStarted {
                session_id,
                cli_version,
                model,
                ..
            } => {
                if self.session.is_none() {
                    self.session = Some((session_id.clone(), cli_version.clone(), model.clone()));
                }
            }
            Event::ModelCallStarted {
                message_id,
                parent_call_id,
            } => {
                self.output(at);
                self.last_call_us = Some(at);
                let main_index = if parent_call_id.is_none() {
                    self.main_calls += 1;
                    if self.caps.max_turns.is_some_and(|n| self.main_calls > n) {
                        fired = Some(Stop::MaxTurns);
                    }
                    Some(self.main_calls)
                } else {
                    None
                };
                let record = ModelCallRecord {
                    main_index,
                    message_id: message_id.clone(),
                    parent_call_id: parent_call_id.clone(),
                    started_ms: ms(at),
                    generation_ms: None,
                };
                self.model_calls.push((record, at));
            }
            Event::AssistantMessage {
                message_id,
                parent_call_id,
                text,
                usage,
                cost_usd,
            } => {
                self.output(at);
                let record = MessageRecord {
                    message_id: message_id.clone(),
                    parent_call_id: parent_call_id.clone(),
                    text: text.clone(),
                    usage: *usage,
                    cost_usd: *cost_usd,
                    first_ms: ms(at),
                };
                match self.message_index.get(message_id) {
                    Some(&i) => {
                        let first_ms = self.messages[i].first_ms;
                        self.messages[i] = MessageRecord { first_ms, ..record };
                    }
                    None => {
                        self.message_index
                            .insert(message_id.clone(), self.messages.len());
                        self.messages.push(record);
                    }
                }
            }
            Event::ToolCallStarted {
                call_id,
                name,
                input_json,
                parent_call_id,
            } => {
                if self.tool_index.contains_key(call_id) {
                    // A repeated start does not open the call again.
                } else if self
                    .caps
                    .max_tool_calls
                    .is_some_and(|n| self.tools_started >= n)
                {
                    fired = Some(Stop::MaxToolCalls);
                } else {
                    self.tools_started += 1;
                    let input = match tool_input(input_json) {
                        Ok(input) => input,
                        Err(err) => {
                            // Kept as the string it came as, and said so.
                            self.diagnostics.push(DiagnosticRecord {
                                line: stamped.line,
                                at_ms: ms(at),
                                kind: "tool_input_not_json".into(),
                                message: format!(
                                    "the input of tool call `{call_id}` is not JSON the host \
                                     can read ({err}); kept as a string"
                                ),
                                raw: excerpt(input_json, 64 * 1024),
                            });
                            serde_json::Value::String(input_json.clone())
                        }
                    };
                    self.tool_index.insert(call_id.clone(), self.tools.len());
                    self.tools.push((
                        ToolCallRecord {
                            call_id: call_id.clone(),
                            name: name.clone(),
                            input,
                            parent_call_id: parent_call_id.clone(),
                            status: ToolOutcome::Interrupted,
                            exit_code: None,
                            output_excerpt: String::new(),
                            started_ms: ms(at),
                            finished_ms: None,
                            duration_ms: 0,
                        },
                        at,
                        None,
                    ));
                }
            }
            Event::ToolCallFinished {
                call_id,
                status,
                output_excerpt,
                exit_code,
                cli_duration_ms,
            } => {
                // The first end closes a call; a repeated one changes nothing.
                if let Some(&i) = self.tool_index.get(call_id) {
                    let floor = self.last_call_us.unwrap_or(0);
                    let (record, start, end) = &mut self.tools[i];
                    if end.is_none() {
                        *end = Some(at);
                        // A CLI that prints a tool only once finished: start and end came
                        // on one line. Place the start by the CLI's own duration (a
                        // duration, anchored to our stamp: no clock bases meet).
                        if let (true, Some(ms_long)) = (*start == at, cli_duration_ms) {
                            *start = at.saturating_sub(ms_long * 1000).max(floor.min(at));
                            record.started_ms = ms(*start);
                        }
                        record.status = match status {
                            ToolStatus::Ok => ToolOutcome::Ok,
                            ToolStatus::Error => ToolOutcome::Error,
                            ToolStatus::Unknown => ToolOutcome::Unknown,
                        };
                        record.exit_code = *exit_code;
                        record.output_excerpt = output_excerpt.clone();
                        record.finished_ms = Some(ms(at));
                    }
                }
            }
            Event::FinalResult {
                success,
                error_kind,
                error_message,
                max_turns_reached,
                num_turns,
                cost_usd,
                duration_ms,
                text,
                usage,
            } => {
                self.cli_result = Some(CliResult {
                    success: *success,
                    error_kind: error_kind.clone(),
                    error_message: error_message.clone(),
                    max_turns_reached: *max_turns_reached,
                    num_turns: *num_turns,
                    cost_usd: *cost_usd,
                    duration_ms: *duration_ms,
                    text: text.clone(),
                    usage: *usage,
                })
            }
        }
        self.trajectory.push(stamped);
        if fired.is_some() {
            self.stop = fired;
        }
        fired
    }

    /// A main-thread model call the stream does not show began: the scripted model holds
    /// its request, which it does only past `max_turns`. It counts as a call (in the
    /// trajectory without a message id), and the `max_turns` cap fires on it even if the
    /// stream is behind in showing the calls before it: no answer will come.
    pub fn held_call(&mut self, stamp_us: u64) -> Option<Stop> {
        let counting = self.stop.is_none() && !self.frozen;
        let fired = self.push(StampedEvent {
            line: 0,
            stamp_us,
            event: Event::ModelCallStarted {
                message_id: None,
                parent_call_id: None,
            },
        });
        if fired.is_none() && counting {
            self.stop = Some(Stop::MaxTurns);
            return self.stop;
        }
        fired
    }

    fn output(&mut self, at: u64) {
        self.first_output_us.get_or_insert(at);
        self.last_output_us = Some(self.last_output_us.map_or(at, |l| l.max(at)));
    }

    /// The turn record and the trajectory, given how the turn ended.
    pub fn finish(
        self,
        harness: &str,
        component: &str,
        end: TurnEnd,
    ) -> (TurnRecord, Vec<StampedEvent>) {
        let end_us = end.end_us;
        // No final result, but the CLI exited with its documented turn-limit code (the
        // stream was cut as it exited): its own cap stopped it all the same.
        let exit_turn_limit = self.cli_result.is_none()
            && self.stop.is_none()
            && end.exit.is_some_and(|e| e.turn_limit);
        let mut diagnostics = self.diagnostics;
        if exit_turn_limit {
            diagnostics.push(DiagnosticRecord {
                line: 0,
                at_ms: ms(end_us),
                kind: "cap_from_exit_code".into(),
                message: format!(
                    "no final result, but exit code {} is the CLI's own turn limit: its \
                     max_turns cap stopped it",
                    end.exit.and_then(|e| e.code).unwrap_or_default()
                ),
                raw: String::new(),
            });
        }
        let cli_max = exit_turn_limit
            || self
                .cli_result
                .as_ref()
                .is_some_and(|r| r.max_turns_reached);
        let max_turns_exhausted = self.stop == Some(Stop::MaxTurns) || cli_max;
        let cli_num_turns = self.cli_result.as_ref().and_then(|r| r.num_turns);
        let num_turns = if cli_max && self.stop.is_none() {
            // The CLI's own cap stopped it before call N+1 reached the stream.
            self.main_calls
                .max(cli_num_turns.unwrap_or(self.main_calls + 1))
        } else {
            self.main_calls
        };

        // Tool intervals in µs; an interrupted call runs to the turn's end.
        let intervals: Vec<(u64, u64)> = self
            .tools
            .iter()
            .map(|(_, start, stop)| (*start, stop.unwrap_or(end_us).max(*start)))
            .collect();
        let last_activity_us = intervals
            .iter()
            .map(|&(_, e)| e)
            .chain(self.last_output_us)
            .max();
        let timing = timing(end_us, self.first_output_us, last_activity_us, &intervals);

        let mut model_calls = self.model_calls;
        let main_starts: Vec<(usize, u64)> = model_calls
            .iter()
            .enumerate()
            .filter(|(_, (c, _))| c.main_index.is_some())
            .map(|(i, (_, at))| (i, *at))
            .collect();
        for (k, &(i, start)) in main_starts.iter().enumerate() {
            let window_end = main_starts
                .get(k + 1)
                .map(|&(_, s)| s)
                .or(last_activity_us)
                .unwrap_or(start);
            let (w0, w1) = (ms(start), ms(window_end.max(start)));
            let covered = union_ms(&intervals, w0, w1);
            model_calls[i].0.generation_ms = Some(w1 - w0 - covered);
        }

        let tool_calls: Vec<ToolCallRecord> = self
            .tools
            .into_iter()
            .map(|(mut record, start, stop)| {
                record.duration_ms = ms(stop.unwrap_or(end_us).max(start)) - ms(start);
                record
            })
            .collect();
        let commands = tool_calls.iter().filter_map(command_of).collect();

        let (usage, usage_source) = match self.cli_result.as_ref().and_then(|r| r.usage) {
            Some(u) => (u, "cli_result"),
            None => {
                let per_message: Vec<Usage> =
                    self.messages.iter().filter_map(|m| m.usage).collect();
                if per_message.is_empty() {
                    (Usage::default(), "none")
                } else {
                    (per_message.iter().fold(Usage::default(), add), "messages")
                }
            }
        };
        let cost_usd = self
            .cli_result
            .as_ref()
            .and_then(|r| r.cost_usd)
            .or_else(|| {
                let costs: Vec<f64> = self.messages.iter().filter_map(|m| m.cost_usd).collect();
                (!costs.is_empty()).then(|| costs.iter().sum())
            });

        let final_status = if end.timed_out {
            TurnStatus::Timeout
        } else if max_turns_exhausted {
            TurnStatus::MaxTurnsExhausted
        } else if self.stop == Some(Stop::MaxToolCalls) {
            TurnStatus::MaxToolCallsExhausted
        } else if end.reducer_error.is_some() {
            TurnStatus::ReducerFailed
        } else {
            match &self.cli_result {
                Some(r) if r.success => TurnStatus::Completed,
                Some(_) => TurnStatus::CliError,
                None => TurnStatus::Incomplete,
            }
        };
        let (session_id, cli_version, model) = self.session.unwrap_or_default();
        let record = TurnRecord {
            record_version: TURN_RECORD_VERSION,
            harness: harness.to_string(),
            component: component.to_string(),
            session_id,
            cli_version,
            model,
            final_status,
            num_turns,
            cli_num_turns,
            max_turns_exhausted,
            max_tool_calls_exhausted: self.stop == Some(Stop::MaxToolCalls),
            model_calls: model_calls.into_iter().map(|(c, _)| c).collect(),
            messages: self.messages,
            tool_calls,
            commands,
            usage,
            usage_source: usage_source.to_string(),
            cost_usd,
            cli_result: self.cli_result,
            timing,
            exit: end.exit.map(|e| ExitRecord {
                at_ms: ms(e.stamp_us),
                code: e.code,
                signal: e.signal,
            }),
            diagnostics,
            reducer_error: end.reducer_error,
            stdout_lines: end.stdout_lines,
            stdout_bytes: end.stdout_bytes,
        };
        (record, self.trajectory)
    }
}

/// µs to whole ms (floor). Every bucket is computed from floored stamps, so the buckets
/// add up exactly.
/// A tool call's input as JSON. Lone UTF-16 surrogate escapes (half an emoji, which
/// JavaScript CLIs write and serde_json refuses) read as U+FFFD; other input that is not
/// JSON (a number out of range, nesting past 128) is the error.
fn tool_input(input_json: &str) -> Result<serde_json::Value, serde_json::Error> {
    serde_json::from_str(input_json).or_else(|err| {
        replace_lone_surrogates(input_json)
            .and_then(|fixed| serde_json::from_str(&fixed).ok())
            .ok_or(err)
    })
}

fn ms(us: u64) -> u64 {
    us / 1000
}

fn add(a: Usage, b: &Usage) -> Usage {
    Usage {
        input_tokens: a.input_tokens + b.input_tokens,
        output_tokens: a.output_tokens + b.output_tokens,
        cache_read_tokens: a.cache_read_tokens + b.cache_read_tokens,
        cache_write_tokens: a.cache_write_tokens + b.cache_write_tokens,
    }
}

/// The four buckets. Without any model output, the whole turn is head.
fn timing(
    end_us: u64,
    first_output_us: Option<u64>,
    last_activity_us: Option<u64>,
    intervals: &[(u64, u64)],
) -> Timing {
    let total = ms(end_us);
    let tool_sum_ms = intervals.iter().map(|&(s, e)| ms(e) - ms(s)).sum();
    let Some(first) = first_output_us else {
        return Timing {
            turn_duration_ms: total,
            harness_startup_ms: Some(total),
            generation_duration_ms: Some(0),
            tool_union_ms: Some(0),
            harness_teardown_ms: Some(0),
            tool_sum_ms,
        };
    };
    let head_end = ms(first).min(total);
    let middle_end = ms(last_activity_us.unwrap_or(first)).clamp(head_end, total);
    let tool_union = union_ms(intervals, head_end, middle_end);
    Timing {
        turn_duration_ms: total,
        harness_startup_ms: Some(head_end),
        generation_duration_ms: Some(middle_end - head_end - tool_union),
        tool_union_ms: Some(tool_union),
        harness_teardown_ms: Some(total - middle_end),
        tool_sum_ms,
    }
}

/// Length in ms of the union of `intervals` (µs) clipped to `[from_ms, to_ms]`.
fn union_ms(intervals: &[(u64, u64)], from_ms: u64, to_ms: u64) -> u64 {
    let mut clipped: Vec<(u64, u64)> = intervals
        .iter()
        .map(|&(s, e)| (ms(s).max(from_ms), ms(e).min(to_ms)))
        .filter(|(s, e)| s < e)
        .collect();
    clipped.sort_unstable();
    let mut total = 0;
    let mut current: Option<(u64, u64)> = None;
    for (s, e) in clipped {
        match current {
            Some((cs, ce)) if s <= ce => current = Some((cs, ce.max(e))),
            Some((cs, ce)) => {
                total += ce - cs;
                current = Some((s, e));
            }
            None => current = Some((s, e)),
        }
    }
    total + current.map_or(0, |(s, e)| e - s)
}

/// The shell command of a tool call, when its input has one (`command`, or `cmd` as a
/// string or argv list).
fn command_of(tool: &ToolCallRecord) -> Option<String> {
    let input = tool.input.as_object()?;
    match input.get("command").or_else(|| input.get("cmd"))? {
        serde_json::Value::String(s) => Some(s.clone()),
        serde_json::Value::Array(parts) => Some(
            parts
                .iter()
                .filter_map(serde_json::Value::as_str)
                .collect::<Vec<_>>()
                .join(" "),
        ),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(stamp_ms: u64, event: Event) -> StampedEvent {
        StampedEvent {
            line: 0,
            stamp_us: stamp_ms * 1000,
            event,
        }
    }

    fn call(id: &str) -> Event {
        Event::ModelCallStarted {
            message_id: Some(id.into()),
            parent_call_id: None,
        }
    }

    fn tool(id: &str) -> Event {
        Event::ToolCallStarted {
            call_id: id.into(),
            name: "Bash".into(),
            input_json: r#"{"command":"sleep 1"}"#.into(),
            parent_call_id: None,
        }
    }

    fn done(id: &str) -> Event {
        Event::ToolCallFinished {
            call_id: id.into(),
            status: ToolStatus::Ok,
            output_excerpt: String::new(),
            exit_code: None,
            cli_duration_ms: None,
        }
    }

    #[test]
    fn overlapping_tools_count_once_and_buckets_tile() {
        let mut c = Collector::new(Caps::default());
        for e in [
            at(100, call("m1")),
            at(110, tool("a")),
            at(120, tool("b")),
            at(300, done("a")),
            at(400, done("b")),
            at(450, call("m2")),
        ] {
            c.push(e);
        }
        let (r, _) = c.finish(
            "h",
            "c",
            TurnEnd {
                end_us: 500_000,
                ..Default::default()
            },
        );
        let t = &r.timing;
        assert_eq!(t.tool_union_ms, Some(290));
        assert_eq!(t.tool_sum_ms, 470);
        assert_eq!(t.harness_startup_ms, Some(100));
        assert_eq!(t.harness_teardown_ms, Some(50));
        assert_eq!(t.generation_duration_ms, Some(60));
        let sum = [
            t.harness_startup_ms,
            t.generation_duration_ms,
            t.tool_union_ms,
            t.harness_teardown_ms,
        ]
        .iter()
        .map(|b| b.unwrap())
        .sum::<u64>();
        assert_eq!(sum, t.turn_duration_ms);
        assert_eq!(r.model_calls[0].generation_ms, Some(60));
        assert_eq!(r.commands, ["sleep 1", "sleep 1"]);
    }

    #[test]
    fn odd_tool_inputs_keep_their_command_or_say_why_not() {
        let mut c = Collector::new(Caps::default());
        let input = |id: &str, json: &str| Event::ToolCallStarted {
            call_id: id.into(),
            name: "Bash".into(),
            input_json: json.into(),
            parent_call_id: None,
        };
        c.push(at(100, call("m1")));
        // Half an emoji (JavaScript writes lone surrogates; serde_json refuses them).
        c.push(at(110, input("a", r#"{"command":"echo \ud83d"}"#)));
        // A number serde_json cannot hold.
        c.push(at(120, input("b", r#"{"command":"echo hi","n":1e400}"#)));
        let (r, _) = c.finish(
            "h",
            "c",
            TurnEnd {
                end_us: 500_000,
                ..Default::default()
            },
        );
        assert_eq!(r.commands, ["echo \u{fffd}"]);
        assert!(r.tool_calls[1].input.is_string());
        let kinds: Vec<&str> = r.diagnostics.iter().map(|d| d.kind.as_str()).collect();
        assert_eq!(kinds, ["tool_input_not_json"]);
        assert!(r.diagnostics[0].message.contains("`b`"));
    }

    #[test]
    fn a_held_call_counts_and_fires_the_cap_even_if_the_stream_is_behind() {
        let caps = Caps {
            max_turns: Some(2),
            max_tool_calls: None,
        };
        // The stream showed both allowed calls: the held one is call 3.
        let mut c = Collector::new(caps);
        c.push(at(1, call("m1")));
        c.push(at(2, call("m2")));
        assert_eq!(c.held_call(3_000), Some(Stop::MaxTurns));
        let (r, _) = c.finish(
            "h",
            "c",
            TurnEnd {
                end_us: 4_000,
                ..Default::default()
            },
        );
        assert_eq!(r.num_turns, 3);
        assert!(r.max_turns_exhausted);
        assert_eq!(r.model_calls[2].message_id, None);
        // The stream is one call behind: the cap still fires (no answer will come).
        let mut c = Collector::new(caps);
        c.push(at(1, call("m1")));
        assert_eq!(c.held_call(3_000), Some(Stop::MaxTurns));
        let (r, _) = c.finish(
            "h",
            "c",
            TurnEnd {
                end_us: 4_000,
                ..Default::default()
            },
        );
        assert!(r.max_turns_exhausted);
    }

    #[test]
    fn an_exit_code_documented_as_the_turn_limit_is_the_clis_own_cap() {
        let caps = Caps {
            max_turns: Some(2),
            max_tool_calls: None,
        };
        let end = |turn_limit| TurnEnd {
            end_us: 4_000,
            exit: Some(crate::recording::ExitStatus {
                stamp_us: 4_000,
                code: Some(53),
                signal: None,
                turn_limit,
            }),
            ..Default::default()
        };
        for turn_limit in [true, false] {
            let mut c = Collector::new(caps);
            c.push(at(1, call("m1")));
            c.push(at(2, call("m2")));
            let (r, _) = c.finish("h", "c", end(turn_limit));
            assert_eq!(r.max_turns_exhausted, turn_limit);
            assert_eq!(r.num_turns, if turn_limit { 3 } else { 2 });
            assert_eq!(
                r.final_status,
                if turn_limit {
                    TurnStatus::MaxTurnsExhausted
                } else {
                    TurnStatus::Incomplete
                }
            );
        }
    }

    #[test]
    fn max_turns_fires_on_call_n_plus_one_and_freezes_counts() {
        let mut c = Collector::new(Caps {
            max_turns: Some(2),
            max_tool_calls: None,
        });
        assert_eq!(c.push(at(1, call("m1"))), None);
        assert_eq!(c.push(at(2, tool("a"))), None);
        assert_eq!(c.push(at(3, done("a"))), None);
        assert_eq!(c.push(at(4, call("m2"))), None);
        assert_eq!(c.push(at(5, call("m3"))), Some(Stop::MaxTurns));
        assert_eq!(c.push(at(6, call("m4"))), None);
        let (r, _) = c.finish(
            "h",
            "c",
            TurnEnd {
                end_us: 7000,
                ..Default::default()
            },
        );
        assert_eq!(r.num_turns, 3);
        assert!(r.max_turns_exhausted);
        assert_eq!(r.final_status, TurnStatus::MaxTurnsExhausted);
    }

    #[test]
    fn interrupted_tool_runs_to_turn_end() {
        let mut c = Collector::new(Caps {
            max_turns: None,
            max_tool_calls: Some(1),
        });
        c.push(at(1, call("m1")));
        c.push(at(2, tool("a")));
        assert_eq!(c.push(at(3, tool("b"))), Some(Stop::MaxToolCalls));
        let (r, _) = c.finish(
            "h",
            "c",
            TurnEnd {
                end_us: 10_000,
                timed_out: true,
                ..Default::default()
            },
        );
        assert_eq!(r.tool_calls.len(), 1);
        assert_eq!(r.tool_calls[0].status, ToolOutcome::Interrupted);
        assert_eq!(r.tool_calls[0].duration_ms, 8);
        assert_eq!(r.final_status, TurnStatus::Timeout);
        assert_eq!(r.timing.harness_teardown_ms, Some(0));
    }

    #[test]
    fn a_tool_printed_only_when_finished_is_placed_by_its_cli_duration() {
        let mut c = Collector::new(Caps::default());
        c.push(at(100, call("m1")));
        // Start and end on one line at 5000 ms; the CLI says it ran 3000 ms.
        c.push(at(5000, tool("a")));
        c.push(at(
            5000,
            Event::ToolCallFinished {
                call_id: "a".into(),
                status: ToolStatus::Ok,
                output_excerpt: String::new(),
                exit_code: None,
                cli_duration_ms: Some(3000),
            },
        ));
        // A duration longer than the call so far is clipped to the call's start.
        c.push(at(6000, call("m2")));
        c.push(at(6500, tool("b")));
        c.push(at(
            6500,
            Event::ToolCallFinished {
                call_id: "b".into(),
                status: ToolStatus::Ok,
                output_excerpt: String::new(),
                exit_code: None,
                cli_duration_ms: Some(10_000),
            },
        ));
        let (r, _) = c.finish(
            "h",
            "c",
            TurnEnd {
                end_us: 7_000_000,
                ..Default::default()
            },
        );
        assert_eq!(
            (r.tool_calls[0].started_ms, r.tool_calls[0].duration_ms),
            (2000, 3000)
        );
        assert_eq!(
            (r.tool_calls[1].started_ms, r.tool_calls[1].duration_ms),
            (6000, 500)
        );
        assert_eq!(r.timing.tool_union_ms, Some(3500));
    }

    #[test]
    fn no_output_is_all_head() {
        let (r, _) = Collector::new(Caps::default()).finish(
            "h",
            "c",
            TurnEnd {
                end_us: 5000,
                ..Default::default()
            },
        );
        assert_eq!(r.timing.harness_startup_ms, Some(5));
        assert_eq!(r.final_status, TurnStatus::Incomplete);
    }
}
