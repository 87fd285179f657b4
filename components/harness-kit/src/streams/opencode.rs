//! The OpenCode stream reducer (`opencode run --format json`, OpenCode 1.18.x).
//!
//! - **Model calls**: a `step_start` starts one model call (`ModelCallStarted`, message id
//!   = the step's `part.messageID`); parts of a step whose `step_start` was not seen start
//!   it implicitly. OpenCode runs a step's tools inside the step, before its `step_finish`,
//!   so the next `step_start` comes only after the previous call's tools ended.
//! - **Messages**: one `AssistantMessage` per step, re-emitted as text parts arrive and on
//!   `step_finish` with the step's usage and `cost_usd` (OpenCode reports cost per step; the
//!   collector sums them). A second step on the same message id gets the id `<id>#<n>`, so
//!   usage is never counted once for two calls.
//! - **Tools**: a `tool_use` line carries a part that is already `completed` or `error`, so
//!   it both starts and ends the call (the tool's own `state.time` is the CLI's clock and is
//!   not mixed in). `completed` with a non-zero `metadata.exit` (or `exitCode`) is an error
//!   with that exit code; `error` with `metadata.interrupted: true` is an interrupted call
//!   (B32): status error plus a `tool_interrupted` diagnostic. `pending` / `running` parts,
//!   when a version emits them, only start the call.
//! - **Sub-agents**: a part whose `part.sessionID` differs from the line's `sessionID` (the
//!   run's own session) belongs to a sub-agent. Its parent call id is the `task` tool call
//!   whose `metadata.sessionId` names that session when that is known, else the sub-agent's
//!   session id itself (OpenCode reports the task call only once its sub-agent has ended).
//! - **Unreported work**: a `task` call whose sub-agent session printed no part (1.18
//!   prints only the root session's parts, B45) → [`Unreported`](Event::Unreported)
//!   `subagent-work` for that call; a step with no `step_finish` at the end of the stream →
//!   `Unreported` `usage` for that step. Absent is not zero.
//! - **End**: there is no result line, so `finish` makes the `FinalResult`: failure when an
//!   `error` line was seen; success when the last main-thread step ended with a final reason
//!   (not `tool-calls` / `unknown`, OpenCode's own loop condition); otherwise no result and
//!   an `incomplete_run` diagnostic (the collector then says `incomplete`), as also when the
//!   last step has no text and an interrupted tool (B32). A stream with no line at all ends
//!   in a `no_output` failure. No model id and no user prompt are in the stream (B31): the
//!   host records both.

use crate::reduce::{HashMap, HashSet};
use crate::reduce::{IdMaker, decode_object, no_output, type_diagnostic};
use crate::{
    Event, Reducer, ReducerConfig, UnreportedKind, Usage, str_field, truncated_line, u64_field,
};
use serde_json::{Map, Value};

/// The OpenCode reducer's state for one stream.
pub struct OpenCodeReducer {
    config: ReducerConfig,
    /// Whether `feed` or `finish` saw any bytes at all.
    saw_line: bool,
    /// The run's own session (the lines' top-level `sessionID`).
    main_session: Option<String>,
    /// Steps by the message id they are emitted under.
    steps: HashMap<String, Step>,
    /// The step a CLI message id currently maps to.
    current_step: HashMap<String, String>,
    /// Steps started per CLI message id.
    steps_per_message: HashMap<String, u32>,
    /// The last step started per session, for parts without a `messageID`.
    last_step_in_session: HashMap<String, String>,
    /// Sub-agent session id → the `task` tool call that started it.
    sub_sessions: HashMap<String, String>,
    tools_started: HashSet<String>,
    tools_finished: HashSet<String>,
    /// Main-thread steps seen.
    main_steps: u32,
    /// The message id of the last main-thread step.
    last_main_step: Option<String>,
    /// `error` lines: (name, message).
    errors: Vec<(String, String)>,
    /// Ids for steps without any id.
    made_up_ids: IdMaker,
    /// Step keys in the order the steps started.
    step_order: Vec<String>,
    /// Sessions that had a part in the stream.
    seen_sessions: HashSet<String>,
}

struct Step {
    parent: Option<String>,
    text: String,
    usage: Option<Usage>,
    cost: Option<f64>,
    /// `Some(reason)` once `step_finish` was seen (`""` when it gave no reason).
    finish_reason: Option<String>,
    interrupted_tool: bool,
}

/// Who a part belongs to: its session and its parent call (`None` = main thread).
struct Owner {
    session: String,
    parent: Option<String>,
}

impl Reducer for OpenCodeReducer {
    fn new(config: ReducerConfig) -> Self {
        OpenCodeReducer {
            config,
            saw_line: false,
            main_session: None,
            steps: HashMap::default(),
            current_step: HashMap::default(),
            steps_per_message: HashMap::default(),
            last_step_in_session: HashMap::default(),
            sub_sessions: HashMap::default(),
            tools_started: HashSet::default(),
            tools_finished: HashSet::default(),
            main_steps: 0,
            last_main_step: None,
            errors: Vec::new(),
            made_up_ids: IdMaker::new("opencode-msg"),
            step_order: Vec::new(),
            seen_sessions: HashSet::default(),
        }
    }

    fn feed(&mut self, line: &[u8], _stamp_us: u64) -> Vec<Event> {
        self.saw_line = true;
        let (obj, mut out) = match decode_object(line) {
            Ok(read) => read,
            Err(events) => return events,
        };
        self.announce_session(&obj, &mut out);
        let kind = obj.get("type").and_then(Value::as_str).unwrap_or("");
        let part = obj.get("part").filter(|p| p.is_object());
        match (kind, part) {
            ("step_start", Some(part)) => {
                let owner = self.owner(&obj, part);
                self.start_step(part, owner, &mut out);
            }
            ("text", Some(part)) => {
                let key = self.step_for(&obj, part, &mut out);
                let step = self.steps.get_mut(&key).expect("step_for opens it");
                step.text.push_str(str_field(part, "text").unwrap_or(""));
                out.push(message_event(&key, step));
            }
            // Reasoning text is not answer text; the part only proves the call is on.
            ("reasoning", Some(part)) => {
                self.step_for(&obj, part, &mut out);
            }
            ("tool_use", Some(part)) => self.tool_use(&obj, part, line, &mut out),
            ("step_finish", Some(part)) => {
                let key = self.step_for(&obj, part, &mut out);
                let step = self.steps.get_mut(&key).expect("step_for opens it");
                step.finish_reason = Some(str_field(part, "reason").unwrap_or("").to_string());
                if let Some(tokens) = part.get("tokens") {
                    step.usage = Some(usage_of(tokens));
                }
                if let Some(cost) = part.get("cost").and_then(Value::as_f64) {
                    step.cost = Some(cost);
                }
                out.push(message_event(&key, step));
            }
            ("step_start" | "text" | "reasoning" | "tool_use" | "step_finish", None) => {
                out.push(Event::diagnostic(
                    "missing_field",
                    format!("`{kind}` line has no `part`"),
                    line,
                ))
            }
            ("error", _) => {
                let error = obj.get("error").unwrap_or(&Value::Null);
                let name = str_field(error, "name").unwrap_or("error").to_string();
                let message = error
                    .get("data")
                    .and_then(|d| str_field(d, "message"))
                    .or_else(|| str_field(error, "message"))
                    .map(String::from)
                    .unwrap_or_else(|| format!("OpenCode reported `{name}`"));
                self.errors.push((name, message));
            }
            ("done", _) => {
                let rejected = obj
                    .get("rejected")
                    .and_then(Value::as_array)
                    .filter(|r| !r.is_empty());
                if let Some(rejected) = rejected {
                    out.push(Event::diagnostic(
                        "permission_rejected",
                        format!(
                            "OpenCode auto-rejected {} permission request(s)",
                            rejected.len()
                        ),
                        line,
                    ));
                }
            }
            (other, _) => out.push(type_diagnostic(other, line)),
        }
        out
    }

    fn finish(&mut self, truncated: Option<&[u8]>) -> Vec<Event> {
        let mut out = Vec::new();
        if truncated.is_some() {
            self.saw_line = true;
        }
        out.extend(truncated_line(truncated));
        if !self.saw_line {
            out.push(no_output("OpenCode", None));
            return out;
        }
        // A step without `step_finish` reported no tokens or cost: unknown, not zero.
        for key in &self.step_order {
            if self.steps[key].finish_reason.is_none() {
                out.push(Event::Unreported {
                    kind: UnreportedKind::Usage,
                    call_id: Some(key.clone()),
                    reason: "the step has no step_finish: its tokens and cost are not in the \
                             stream"
                        .into(),
                });
            }
        }
        let last = self.last_main_step.as_ref().and_then(|k| self.steps.get(k));
        let text = last.map(|s| s.text.clone()).filter(|t| !t.is_empty());
        if !self.errors.is_empty() {
            let messages: Vec<&str> = self.errors.iter().map(|(_, m)| m.as_str()).collect();
            let mut result = failure(
                &self.errors[0].0,
                messages.join("\n"),
                Some(self.main_steps),
            );
            if let Event::FinalResult { text: t, .. } = &mut result {
                *t = text;
            }
            out.push(result);
            return out;
        }
        let unfinished = match last {
            None => Some("no main-thread step was seen".to_string()),
            Some(step) => match step.finish_reason.as_deref() {
                None => Some("the last step has no `step_finish`".to_string()),
                Some(reason @ ("tool-calls" | "unknown")) => Some(format!(
                    "the last step finished with `{reason}`, so OpenCode meant to go on"
                )),
                Some(_) if step.interrupted_tool && step.text.is_empty() => {
                    Some("the last step has an interrupted tool call and no text (B32)".to_string())
                }
                Some(_) => None,
            },
        };
        match unfinished {
            Some(why) => out.push(Event::diagnostic(
                "incomplete_run",
                format!("the stream ended before the run finished: {why}"),
                b"",
            )),
            None => out.push(Event::FinalResult {
                success: true,
                error_kind: None,
                error_message: None,
                max_turns_reached: false,
                num_turns: Some(self.main_steps),
                cost_usd: None,
                duration_ms: None,
                text,
                usage: None,
            }),
        }
        out
    }
}

impl OpenCodeReducer {
    /// Emits `SessionStarted` for the first line naming the run's session.
    fn announce_session(&mut self, obj: &Map<String, Value>, out: &mut Vec<Event>) {
        if self.main_session.is_some() {
            return;
        }
        let Some(session) = obj.get("sessionID").and_then(Value::as_str) else {
            return;
        };
        self.main_session = Some(session.to_string());
        // Newer versions may name the model on the part (B31); 1.18.33 does not.
        let part = obj.get("part");
        let model = part.and_then(|p| str_field(p, "modelID")).map(|model| {
            match part.and_then(|p| str_field(p, "providerID")) {
                Some(provider) => format!("{provider}/{model}"),
                None => model.to_string(),
            }
        });
        out.push(Event::SessionStarted {
            session_id: Some(session.to_string()),
            cli_version: None,
            model,
            tools: Vec::new(),
        });
    }

    /// The session a part belongs to and, for a sub-agent's part, its parent call id.
    fn owner(&mut self, obj: &Map<String, Value>, part: &Value) -> Owner {
        let line_session = obj.get("sessionID").and_then(Value::as_str);
        let session = str_field(part, "sessionID")
            .or(line_session)
            .unwrap_or("")
            .to_string();
        if self.main_session.is_none() && !session.is_empty() {
            self.main_session = Some(session.clone());
        }
        self.seen_sessions.insert(session.clone());
        let parent = match &self.main_session {
            Some(main) if *main != session && !session.is_empty() => Some(
                self.sub_sessions
                    .get(&session)
                    .cloned()
                    .unwrap_or_else(|| session.clone()),
            ),
            _ => None,
        };
        Owner { session, parent }
    }

    /// Opens a step (one model call) for `part.messageID`.
    fn start_step(&mut self, part: &Value, owner: Owner, out: &mut Vec<Event>) -> String {
        let key = match str_field(part, "messageID") {
            Some(message_id) => {
                let n = self
                    .steps_per_message
                    .entry(message_id.to_string())
                    .or_insert(0);
                *n += 1;
                let key = if *n == 1 {
                    message_id.to_string()
                } else {
                    format!("{message_id}#{n}")
                };
                self.current_step
                    .insert(message_id.to_string(), key.clone());
                key
            }
            None => self.made_up_ids.next_id(),
        };
        if owner.parent.is_none() {
            self.main_steps += 1;
            self.last_main_step = Some(key.clone());
        }
        self.last_step_in_session.insert(owner.session, key.clone());
        self.step_order.push(key.clone());
        out.push(Event::ModelCallStarted {
            message_id: Some(key.clone()),
            parent_call_id: owner.parent.clone(),
        });
        self.steps.insert(
            key.clone(),
            Step {
                parent: owner.parent,
                text: String::new(),
                usage: None,
                cost: None,
                finish_reason: None,
                interrupted_tool: false,
            },
        );
        key
    }

    /// The step a part belongs to, opened (a model call started) if it was not seen.
    fn step_for(&mut self, obj: &Map<String, Value>, part: &Value, out: &mut Vec<Event>) -> String {
        let owner = self.owner(obj, part);
        let known = match str_field(part, "messageID") {
            Some(message_id) => self.current_step.get(message_id),
            None => self.last_step_in_session.get(&owner.session),
        };
        match known {
            Some(key) => key.clone(),
            None => self.start_step(part, owner, out),
        }
    }
}

fn message_event(id: &str, step: &Step) -> Event {
    Event::AssistantMessage {
        message_id: id.to_string(),
        parent_call_id: step.parent.clone(),
        text: step.text.clone(),
        usage: step.usage,
        cost_usd: step.cost,
    }
}

fn failure(kind: &str, message: String, num_turns: Option<u32>) -> Event {
    Event::FinalResult {
        success: false,
        error_kind: Some(kind.to_string()),
        error_message: Some(message),
        max_turns_reached: false,
        num_turns,
        cost_usd: None,
        duration_ms: None,
        text: None,
        usage: None,
    }
}

/// OpenCode's `tokens`: `input` already excludes cache reads and writes; `reasoning` is
/// counted apart from `output` (OpenCode bills it on top, at the output rate), so the two
/// are added into the model's output tokens.
fn usage_of(tokens: &Value) -> Usage {
    let cache = tokens.get("cache").unwrap_or(&Value::Null);
    Usage {
        input_tokens: u64_field(tokens, "input").unwrap_or(0),
        output_tokens: u64_field(tokens, "output").unwrap_or(0)
            + u64_field(tokens, "reasoning").unwrap_or(0),
        cache_read_tokens: u64_field(cache, "read").unwrap_or(0),
        cache_write_tokens: Some(u64_field(cache, "write").unwrap_or(0)),
    }
}

pub mod launch;
#[cfg(test)]
mod tests;
mod tools;
