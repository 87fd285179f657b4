//! Answering one model call: pick the reply (main or side), resolve its tool calls,
//! log the request, wait the scripted delay, and render it in the request's API.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::Value;

use crate::common::{Answer, Call, Inspect, Planned, approx_tokens, side_json};
use crate::common::{substitute, substitute_str};
use crate::record::{Api, Log, RequestKind, RequestRecord};
use crate::script::{Reply, Script, ScriptCall};
use crate::{ActionTranslator, Hold, HoldReason, NeutralAction, ToolCallSpec};
use crate::{anthropic, gemini, openai_chat, openai_responses};

/// State shared by all requests of one server.
pub(crate) struct Shared {
    pub script: Script,
    pub workspace: String,
    pub translator: Option<Arc<dyn ActionTranslator>>,
    pub log: Log,
    /// Responses API: response id → assistant turns it completes.
    responses_turns: Mutex<HashMap<String, usize>>,
    /// `http_error` with `times`: requests seen per turn index.
    error_counts: Mutex<HashMap<usize, u32>>,
    /// Main requests at this turn index or later are held (see `ServerConfig`).
    pub hold_from_turn: Option<usize>,
    /// Main requests whose reply would take the tool calls handed out past this many
    /// are held (see `ServerConfig`).
    pub hold_past_tool_calls: Option<u32>,
    /// Tool calls handed out over the server's life, every thread counted.
    pub tally: crate::tally::Tally,
    /// The first held request, once there is one.
    pub held: tokio::sync::watch::Sender<Option<Hold>>,
    /// Set when the server shuts down: held requests are then answered (503).
    pub closing: tokio::sync::watch::Sender<bool>,
    /// The host's stop: once tripped, no model call is answered.
    pub stopper: crate::Stopper,
}

impl Shared {
    pub fn new(
        script: Script,
        workspace: String,
        translator: Option<Arc<dyn ActionTranslator>>,
        log: Log,
    ) -> Shared {
        Shared {
            script,
            workspace,
            translator,
            log,
            responses_turns: Mutex::new(HashMap::new()),
            error_counts: Mutex::new(HashMap::new()),
            hold_from_turn: None,
            hold_past_tool_calls: None,
            tally: crate::tally::Tally::default(),
            held: tokio::sync::watch::Sender::new(None),
            closing: tokio::sync::watch::Sender::new(false),
            stopper: crate::Stopper::new(),
        }
    }

    /// Whether this request at `turn` gets the scripted error (counts the attempt).
    fn error_due(&self, turn: usize, times: Option<u32>) -> bool {
        let Some(n) = times else { return true };
        let mut counts = self.error_counts.lock().unwrap_or_else(|e| e.into_inner());
        let seen = counts.entry(turn).or_insert(0);
        *seen += 1;
        *seen <= n
    }

    /// Whether the main request at `turn` is held for `max_turns` (the call itself is not
    /// allowed). The `max_tool_calls` hold is decided once the reply's calls are known
    /// ([`crate::tally::Tally::claim`]).
    fn hold(&self, turn: usize) -> Option<Hold> {
        self.hold_from_turn
            .is_some_and(|n| turn >= n)
            .then(|| Hold {
                turn,
                tool_calls_before: self.tool_calls_handed_out(),
                reason: HoldReason::MaxTurns,
            })
    }

    /// Tool calls handed out so far, every thread of the run counted.
    pub fn tool_calls_handed_out(&self) -> u32 {
        u32::try_from(self.tally.handed_out()).unwrap_or(u32::MAX)
    }

    pub(crate) fn prev_turns(&self, id: &str) -> Option<usize> {
        let map = self
            .responses_turns
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        map.get(id).copied()
    }
}

/// A vendor-shaped error body for `api`.
pub(crate) fn error_body(api: Api, status: u16, message: &str, ty: Option<&str>) -> Value {
    match api {
        Api::Anthropic => anthropic::error_body(status, message, ty),
        Api::Responses => openai_responses::error_body(status, message, ty),
        Api::Chat => openai_chat::error_body(status, message, ty),
        Api::Gemini => gemini::error_body(status, message, ty),
    }
}

/// Answers a model call. `target` is the request target as received (for the log),
/// `path` its path; `method` the HTTP method. Returns the answer, how long to wait
/// before sending it (the scripted delay), and, for an answer that hands tool calls out,
/// the [`crate::tally::Claim`] to complete once it went out whole.
pub(crate) fn model_call(
    shared: &Shared,
    seq: u64,
    api: Api,
    method: &str,
    target: &str,
    path: &str,
    req: &Value,
) -> (Answer, std::time::Duration, Option<crate::tally::Claim>) {
    let c = crate::classify::classify(api, path, req, |id| shared.prev_turns(id));
    let info = Inspect {
        turn: c.turn,
        tools: c.tools,
        stream: c.stream,
    };
    let (side, model) = (c.side, c.model);
    let mut record = RequestRecord::new(seq, method, target);
    record.api = Some(api);
    record.kind = if side {
        RequestKind::Side
    } else {
        RequestKind::Main
    };
    record.turn = Some(info.turn);
    record.stream = Some(info.stream);
    record.tools = info.tools.clone();
    record.model = model.clone();
    let mut planned = Planned {
        seq,
        turn: info.turn,
        model: model.unwrap_or_else(|| shared.script.model.clone()),
        text: String::new(),
        thinking: String::new(),
        calls: Vec::new(),
        in_tokens: approx_tokens(req),
    };
    let mut delay = std::time::Duration::ZERO;
    let mut claim = None;
    if let Some(hold) = (!side).then(|| shared.hold(info.turn)).flatten() {
        record.status = 503;
        record.error = Some(format!("held: {}; not answered", hold.describe()));
        shared.log.push(record);
        return (Answer::Held(hold), delay, None);
    }
    if side {
        let side_text = &shared.script.side_text;
        planned.text = side_json(req, side_text).unwrap_or_else(|| side_text.clone());
    } else {
        let reply = shared.script.reply(info.turn);
        delay = reply.delay;
        if let Some(err) = &reply.http_error
            && shared.error_due(info.turn, err.times)
        {
            record.status = err.status;
            record.error = Some(format!("scripted http_error: {}", err.message));
            shared.log.push(record);
            let body = error_body(api, err.status, &err.message, err.error_type.as_deref());
            return (Answer::Json(err.status, body), delay, None);
        }
        let prefix = match api {
            Api::Anthropic => anthropic::ID_PREFIX,
            Api::Chat => openai_chat::ID_PREFIX,
            Api::Responses => openai_responses::ID_PREFIX,
            Api::Gemini => gemini::ID_PREFIX,
        };
        match resolve_calls(shared, reply, info.turn, prefix) {
            Ok(calls) => planned.calls = calls,
            Err(message) => {
                record.status = 500;
                record.error = Some(message.clone());
                shared.log.push(record);
                let body = error_body(api, 500, &message, None);
                return (Answer::Json(500, body), std::time::Duration::ZERO, None);
            }
        }
        // Counted over the whole run (every thread, a retry once): a reply whose calls
        // would take those handed out past `max_tool_calls` is held whole.
        let key = crate::tally::history_key(api, req);
        let claimed = (shared.tally).claim(key, &mut planned.calls, shared.hold_past_tool_calls);
        claim = match claimed {
            Ok(claim) => claim,
            Err(before) => {
                let hold = Hold {
                    turn: info.turn,
                    tool_calls_before: u32::try_from(before).unwrap_or(u32::MAX),
                    reason: HoldReason::MaxToolCalls,
                };
                record.status = 503;
                record.error = Some(format!("held: {}; not answered", hold.describe()));
                shared.log.push(record);
                return (Answer::Held(hold), std::time::Duration::ZERO, None);
            }
        };
        planned.text = reply.text.clone().unwrap_or_default();
        planned.thinking = reply.thinking.clone().unwrap_or_default();
        if api == Api::Responses {
            let id = openai_responses::response_id(info.turn, seq);
            let mut map = shared
                .responses_turns
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            map.insert(id, info.turn + 1);
        }
    }
    shared.log.push(record);
    let answer = match api {
        Api::Anthropic => anthropic::render(&planned, info.stream),
        Api::Chat => openai_chat::render(&planned, req, info.stream),
        Api::Responses => openai_responses::render(&planned, info.stream),
        Api::Gemini => gemini::render(&planned, info.stream),
    };
    (answer, delay, claim)
}

/// Fixes ids, translates neutral actions and substitutes `{{workspace}}`.
fn resolve_calls(
    shared: &Shared,
    reply: &Reply,
    turn: usize,
    prefix: &str,
) -> Result<Vec<Call>, String> {
    let ws = shared.workspace.as_str();
    let mut out = Vec::new();
    for (i, tc) in reply.tool_calls.iter().enumerate() {
        let spec = match &tc.call {
            ScriptCall::Raw(spec) => spec.clone(),
            ScriptCall::Action(action) => {
                let Some(translator) = &shared.translator else {
                    return Err(format!(
                        "scripted-model: reply {turn} tool call {i} is the neutral action \
                         `{}`, but the server has no action translator configured",
                        action.key()
                    ));
                };
                translator.translate(&substitute_action(action, ws), ws)
            }
        };
        let id = tc
            .id
            .clone()
            .unwrap_or_else(|| format!("{prefix}_{turn}_{i}"));
        out.push(match spec {
            ToolCallSpec::Function {
                name,
                mut arguments,
            } => {
                substitute(&mut arguments, ws);
                Call {
                    id,
                    name,
                    custom_input: None,
                    args: arguments,
                }
            }
            ToolCallSpec::Custom { name, input } => {
                let input = substitute_str(&input, ws);
                Call {
                    id,
                    name,
                    args: serde_json::json!({ "input": input }),
                    custom_input: Some(input),
                }
            }
        });
    }
    Ok(out)
}

fn substitute_action(action: &NeutralAction, ws: &str) -> NeutralAction {
    match action {
        NeutralAction::WriteFile { path, content } => NeutralAction::WriteFile {
            path: substitute_str(path, ws),
            content: substitute_str(content, ws),
        },
        NeutralAction::Shell { command } => NeutralAction::Shell {
            command: substitute_str(command, ws),
        },
        NeutralAction::ReadFile { path } => NeutralAction::ReadFile {
            path: substitute_str(path, ws),
        },
    }
}
