//! The Claude Code stream reducer (stream-json, Claude Code 2.1.x).
//!
//! - Assistant lines are grouped by `message.id`: each line adds content blocks to its
//!   message; the message is re-emitted with all its text so far and the latest usage (the
//!   collector counts usage once per id, and the later copy wins for output tokens).
//! - `tool_use` blocks start tool calls (once per id); `tool_result` blocks in `user` lines
//!   finish them, `is_error: true` = error.
//! - Sub-agent lines are attributed by `parent_tool_use_id`, never by order.
//! - **Sub-agents' usage is unreported**: the `result`'s `usage` (the run's token figures)
//!   is the main thread's alone (2.1.197: a run whose sub-agents used 172k input tokens
//!   reports the main thread's 57k; only `modelUsage`, by model, and `total_cost_usd`
//!   include them), and a sub-agent's own sub-agents print no assistant lines at all. Each
//!   sub-agent a `system/task_started` line of `task_type: local_agent` announces is
//!   therefore `Unreported { kind: SubagentWork, call_id: its Agent call }` at the
//!   `result`, so the totals say `partial` rather than look complete.
//! - `stream_event` partial messages: `message_start` starts a model call, and a
//!   `message_delta`'s usage updates the message's output tokens.
//! - `system/task_*` lines (background tasks: sub-agents, background shells), Claude Code
//!   2.1.332's `system/background_tasks_changed` and its `tool_progress` heartbeats are
//!   known and add no diagnostic.
//! - **Several results in one process**: when a background task ends after the final
//!   reply, 2.1.332 starts a follow-up query (another `system/init`, model calls and
//!   `result`) whose result reports its own query's usage and turns but the process's
//!   running cost: each `FinalResult` carries the process's sums (`claude/result.rs`); model calls
//!   after the last result whose result never came are `Unreported { kind: Usage }`.
//! - `rate_limit_event`, `system/compact_boundary`, unknown types and broken lines become
//!   diagnostics; a line with lone UTF-16 surrogate escapes or a repeated key is read
//!   after a repair, with a `repaired_line` diagnostic (see `crate::parse_line`).
//!
//! Lines are read through the typed, lenient view in [`wire`]: only the fields below are
//! read, and a field of an unexpected JSON type reads as absent. So a `usage` that is not
//! an object (`null` included) is "not reported", never a usage of zero tokens, and an
//! assistant line whose `message` is not an object is a `missing_field` diagnostic.
//! (Checked against the earlier `Value`-based reducer by replaying the corpus with random
//! type changes: these two are the only differences.)
//!
//! # Qwen Code's dialect ([`Dialect::QwenCode`])
//!
//! Qwen Code 0.24.x (`qwen -o stream-json`, see `shared/corpus/live/qwen/`) prints the same
//! line shapes, with three differences, checked against its recordings and its bundle:
//!
//! - every `assistant` line has a `message.id` of its own, also when it continues the same
//!   model reply (a text block, then the reply's tool calls with the reply's usage). A
//!   model call is therefore the run of assistant lines of one thread up to the next `user`
//!   line (its tool results) or `result`; it keeps the first line's id;
//! - `usage.input_tokens` is the whole prompt (Gemini's `promptTokenCount`), cache reads
//!   included: the uncached input is `input_tokens - cache_read_input_tokens`, and
//!   `total_tokens` beyond prompt + output is thinking, counted as output;
//! - a failed `run_shell_command` result holds a line `Exit Code: N`; `system/init` names the
//!   version in `qwen_code_version`.

use crate::reduce::{HashMap, HashSet, IdMaker, decode, type_diagnostic};
use crate::{Event, Reducer, ReducerConfig, Usage, truncated_line};
use streaming::inferred_retry;
use wire::Line;

mod result;
mod streaming;
mod wire;

/// Which CLI prints the stream: Claude Code, or Qwen Code (see the module doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// Claude Code 2.1.x.
    ClaudeCode,
    /// Qwen Code 0.24.x (`qwen -o stream-json`).
    QwenCode,
}

/// The Claude Code reducer's state for one stream.
pub struct ClaudeReducer {
    config: ReducerConfig,
    dialect: Dialect,
    /// Qwen Code: the id the open model call of each thread took (its first line's), until
    /// that thread's next `user` line.
    open_call: HashMap<Option<String>, String>,
    /// Messages seen so far, by message id.
    messages: HashMap<String, Message>,
    /// The message a partial-message stream is on, by thread (`None` = main thread), and
    /// whether it was confirmed (a `message_stop`, or a complete `assistant` line). An
    /// unconfirmed one that another message supersedes was an abandoned attempt (B39).
    streaming: HashMap<Option<String>, (String, bool)>,
    /// Tool calls finished as denied (a permission rule refused them).
    tools_denied: HashSet<String>,
    /// Tool calls whose result was an error without an exit code (a refusal may read so).
    tools_failed_silently: HashSet<String>,
    /// The text of the last synthetic (`<synthetic>`) message: the CLI's own error (B38).
    synthetic_text: Option<String>,
    /// Tool calls started (ids), so a repeated block does not start one twice.
    tools_started: HashSet<String>,
    /// Tool calls finished (ids), so a repeated result does not finish one twice.
    tools_finished: HashSet<String>,
    /// Text of the last main-thread message, to rebuild an empty `result` (B01).
    last_main_text: String,
    /// The `Agent` calls of the sub-agents `task_started` announced, in order, once each.
    subagents: Vec<String>,
    /// Claude Code: the figures of the results this process printed so far (several when
    /// it started a follow-up query, see [`result::ProcessResults`]).
    results: Option<result::ProcessResults>,
    /// Claude Code: model calls begun since the last result (a follow-up query's), whose
    /// usage no result has reported yet.
    calls_after_result: u32,
    /// Ids for messages without one.
    made_up_ids: IdMaker,
}

struct Message {
    parent: Option<String>,
    text: String,
    usage: Option<Usage>,
}

impl Reducer for ClaudeReducer {
    fn new(config: ReducerConfig) -> Self {
        Self::with_dialect(config, Dialect::ClaudeCode)
    }

    fn feed(&mut self, line: &[u8], _stamp_us: u64) -> Vec<Event> {
        let mut scratch = String::new();
        let (parsed, mut out) = match decode::<Box<Line>>(line, &mut scratch) {
            Ok(read) => read,
            Err(events) => return events,
        };
        let parent = parsed.parent_tool_use_id.as_deref().map(String::from);
        match parsed.kind.as_deref().unwrap_or("") {
            "system" => self.system(&parsed, line, &mut out),
            "assistant" => self.assistant(&parsed, parent, line, &mut out),
            "user" => {
                // Qwen Code: the thread's tool results end its model call.
                self.open_call.remove(&parent);
                self.user(&parsed, &mut out);
            }
            "stream_event" => self.stream_event(&parsed, parent, &mut out),
            "result" => {
                self.open_call.clear();
                self.result(&parsed, &mut out);
            }
            "rate_limit_event" => {
                let status = parsed
                    .rate_limit_info
                    .as_ref()
                    .and_then(|i| i.status.as_deref())
                    .unwrap_or("unknown");
                let message = if status == "rejected" {
                    "warning: the CLI reports its rate limit was hit (status rejected)".to_string()
                } else {
                    format!("rate limit status: {status}")
                };
                out.push(Event::diagnostic("rate_limit", message, line));
            }
            // Claude Code 2.1.332: a heartbeat every 30 s a tool runs (`heartbeat: true`,
            // `elapsed_time_seconds`, the call's id in `parent_tool_use_id`). The call's
            // start and end carry every fact; Qwen Code writes none.
            "tool_progress" if self.dialect == Dialect::ClaudeCode => {}
            other => out.push(type_diagnostic(other, line)),
        }
        out
    }

    fn finish(&mut self, truncated: Option<&[u8]>) -> Vec<Event> {
        let mut out: Vec<Event> = truncated_line(truncated).into_iter().collect();
        if self.calls_after_result > 0 {
            // A follow-up query (a background task ended after the result) that the
            // stream's end cut before its own result: its usage is in no result.
            out.push(Event::Unreported {
                kind: crate::UnreportedKind::Usage,
                call_id: None,
                reason: format!(
                    "{} model call(s) began after Claude Code's last result (a follow-up query \
                     after a background task ended), and the stream ended before that \
                     query's result: their usage is not in the reported figures",
                    self.calls_after_result
                ),
            });
        }
        out
    }
}

impl ClaudeReducer {
    /// A reducer for `dialect`'s stream ([`Reducer::new`] reads Claude Code's).
    pub fn with_dialect(config: ReducerConfig, dialect: Dialect) -> Self {
        ClaudeReducer {
            config,
            dialect,
            open_call: HashMap::default(),
            messages: HashMap::default(),
            streaming: HashMap::default(),
            tools_denied: HashSet::default(),
            tools_failed_silently: HashSet::default(),
            synthetic_text: None,
            tools_started: HashSet::default(),
            tools_finished: HashSet::default(),
            last_main_text: String::new(),
            subagents: Vec::new(),
            results: None,
            calls_after_result: 0,
            made_up_ids: IdMaker::new(match dialect {
                Dialect::ClaudeCode => "claude-code-msg",
                Dialect::QwenCode => "qwen-code-msg",
            }),
        }
    }

    fn system(&mut self, parsed: &Line, line: &[u8], out: &mut Vec<Event>) {
        if parsed.subtype.as_deref() == Some("task_started")
            && parsed.task_type.as_deref() == Some("local_agent")
            && let Some(call) = parsed.tool_use_id.as_deref()
            && !self.subagents.iter().any(|s| s == call)
        {
            self.subagents.push(call.to_string());
        }
        match parsed.subtype.as_deref().unwrap_or("") {
            "init" => out.push(Event::SessionStarted {
                session_id: parsed.session_id.as_deref().map(String::from),
                cli_version: parsed
                    .claude_code_version
                    .as_deref()
                    .or(parsed.qwen_code_version.as_deref())
                    .map(String::from),
                model: parsed.model.as_deref().map(String::from),
                tools: parsed.tools.iter().map(|t| t.to_string()).collect(),
            }),
            // "requesting" before each model request: no fact beyond what follows.
            "status" => {}
            // Background tasks (2.1.19x: a sub-agent, `local_agent`, or a background shell,
            // `local_bash`): their start, progress and end. A sub-agent's start is read
            // above; its tool call and result carry the rest. 2.1.332 also lists the running
            // background tasks at each start and end of one (`background_tasks_changed`,
            // `tasks: [{task_id, task_type, description}]`): nothing the task_* lines and
            // the calls do not say.
            "task_started"
            | "task_progress"
            | "task_updated"
            | "task_notification"
            | "background_tasks_changed" => {}
            // The CLI retries a failed request (2.1.2xx): an attempt already streaming on
            // this thread is abandoned, and no model call at all when none was.
            "api_retry" => {
                let parent = parsed.parent_tool_use_id.as_deref().map(String::from);
                let abandoned = self.abandon_streaming(&parent);
                out.push(Event::ModelCallRetried {
                    call_started: abandoned.is_some(),
                    abandoned_message_id: abandoned,
                    parent_call_id: parent,
                    attempt: parsed.attempt.map(|a| a as u32),
                    delay_ms: parsed.retry_delay_ms,
                    status: parsed.error_status.map(|s| s as u32),
                    error: parsed.error.as_deref().map(String::from),
                    announced: true,
                });
            }
            "compact_boundary" => {
                let meta = parsed.compact_metadata.as_ref();
                let trigger = meta.and_then(|m| m.trigger.as_deref()).unwrap_or("?");
                let pre = meta.and_then(|m| m.pre_tokens);
                out.push(Event::diagnostic(
                    "compact_boundary",
                    format!(
                        "context compacted (trigger {trigger}, {} tokens before)",
                        pre.map_or("?".into(), |p| p.to_string())
                    ),
                    line,
                ));
            }
            other => out.push(Event::diagnostic(
                "unknown_subtype",
                format!("unknown system subtype `{other}`"),
                line,
            )),
        }
    }

    fn assistant(
        &mut self,
        parsed: &Line,
        parent: Option<String>,
        line: &[u8],
        out: &mut Vec<Event>,
    ) {
        let Some(message) = &parsed.message else {
            out.push(Event::diagnostic(
                "missing_field",
                "assistant line has no `message` object",
                line,
            ));
            return;
        };
        if message.model.as_deref() == Some("<synthetic>") {
            // The CLI's own message (an API error, B38): no model call made it, so it is
            // neither a call, nor a message, nor the agent's answer.
            let text: String = message
                .content
                .iter()
                .filter(|b| b.kind.as_deref() == Some("text"))
                .filter_map(|b| b.text.as_deref())
                .collect();
            let error = parsed.error.as_deref().unwrap_or("unknown");
            out.push(Event::diagnostic(
                "synthetic_message",
                format!("the CLI wrote a synthetic assistant message (error `{error}`), not a model call: {text}"),
                line,
            ));
            self.synthetic_text = Some(text);
            return;
        }
        let mut id = match message.id.as_deref() {
            Some(id) => id.to_string(),
            None => self.made_up_ids.next_id(),
        };
        if self.dialect == Dialect::QwenCode {
            // A later line of the same reply carries an id of its own: the call keeps its
            // first line's.
            match self.open_call.get(&parent) {
                Some(open) => id.clone_from(open),
                None => {
                    self.open_call.insert(parent.clone(), id.clone());
                }
            }
        }
        // The complete message of another id while a streamed one was never confirmed: the
        // streamed attempt was abandoned and retried without streaming (B39).
        match self.streaming.get(&parent).map(|(s, c)| (*s == id, *c)) {
            Some((false, false)) => {
                let abandoned = self.abandon_streaming(&parent);
                out.push(inferred_retry(abandoned, &parent));
            }
            Some((true, false)) => {
                self.streaming.insert(parent.clone(), (id.clone(), true));
            }
            _ => {}
        }
        self.open_message(&id, &parent, out);
        let usage = message.usage.map(|u| usage_of(self.dialect, u));
        let msg = self.messages.get_mut(&id).expect("opened above");
        for block in &message.content {
            match block.kind.as_deref() {
                Some("text") => msg.text.push_str(block.text.as_deref().unwrap_or("")),
                Some("tool_use") => {
                    let Some(call_id) = block.id.as_deref() else {
                        continue;
                    };
                    if self.tools_started.insert(call_id.to_string()) {
                        out.push(Event::ToolCallStarted {
                            call_id: call_id.to_string(),
                            name: block.name.as_deref().unwrap_or("").to_string(),
                            input_json: block.input.map_or("null", |i| i.get()).to_string(),
                            parent_call_id: parent.clone(),
                        });
                    }
                }
                _ => {}
            }
        }
        if let Some(usage) = usage {
            // The later copy wins for output tokens (a streamed message's final count).
            msg.usage = Some(match msg.usage {
                Some(old) => Usage {
                    output_tokens: usage.output_tokens.max(old.output_tokens),
                    ..usage
                },
                None => usage,
            });
        }
        if parent.is_none() {
            self.last_main_text.clone_from(&msg.text);
        }
        out.push(message_event(&id, msg));
    }

    /// Starts a model call the first time a message id is seen.
    fn open_message(&mut self, id: &str, parent: &Option<String>, out: &mut Vec<Event>) {
        if self.messages.contains_key(id) {
            return;
        }
        if self.results.is_some() {
            self.calls_after_result += 1;
        }
        self.messages.insert(
            id.to_string(),
            Message {
                parent: parent.clone(),
                text: String::new(),
                usage: None,
            },
        );
        out.push(Event::ModelCallStarted {
            message_id: Some(id.to_string()),
            parent_call_id: parent.clone(),
        });
    }
}

fn message_event(id: &str, msg: &Message) -> Event {
    Event::AssistantMessage {
        message_id: id.to_string(),
        parent_call_id: msg.parent.clone(),
        text: msg.text.clone(),
        usage: msg.usage,
        cost_usd: None,
    }
}

/// Claude Code (Anthropic usage): `input_tokens` excludes cache reads and writes already.
/// Qwen Code: `input_tokens` is the whole prompt, cache reads included, and `total_tokens`
/// past prompt + output is thinking (counted as output); a cache write it does not report
/// is unknown, not 0.
fn usage_of(dialect: Dialect, u: wire::UsageFields) -> Usage {
    let input = u.input_tokens.unwrap_or(0);
    let output = u.output_tokens.unwrap_or(0);
    let cache_read = u.cache_read_input_tokens.unwrap_or(0);
    match dialect {
        Dialect::ClaudeCode => Usage {
            input_tokens: input,
            output_tokens: output,
            cache_read_tokens: cache_read,
            cache_write_tokens: Some(u.cache_creation_input_tokens.unwrap_or(0)),
        },
        Dialect::QwenCode => Usage {
            input_tokens: input.saturating_sub(cache_read),
            output_tokens: output.max(u.total_tokens.unwrap_or(0).saturating_sub(input)),
            cache_read_tokens: cache_read,
            cache_write_tokens: u.cache_creation_input_tokens,
        },
    }
}

#[cfg(test)]
mod tests;
mod tools;
