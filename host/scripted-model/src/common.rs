//! Pieces shared by the four API modules: the resolved reply, SSE events, turn counting,
//! token estimates, text chunking and JSON-schema filling for side requests.

use serde_json::{Map, Value, json};

pub(crate) const DEFAULT_MODEL: &str = "mock-model";

/// A fixed `created` stamp (seconds) so bodies are byte-for-byte reproducible.
pub(crate) const CREATED: u64 = 1_700_000_000;

/// One server-sent event: an optional `event:` name and its `data:` payload.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SseEvent {
    pub event: Option<String>,
    pub data: String,
}

impl SseEvent {
    /// A named event (`event: name`) carrying `data` as JSON.
    pub fn named(name: &str, data: &Value) -> SseEvent {
        SseEvent {
            event: Some(name.to_string()),
            data: data.to_string(),
        }
    }

    /// An unnamed event carrying `data` as JSON.
    pub fn data(data: &Value) -> SseEvent {
        SseEvent {
            event: None,
            data: data.to_string(),
        }
    }
}

/// What an API module reads from a model request.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Inspect {
    /// Completed assistant turns in the request.
    pub turn: usize,
    /// Names of the tools offered.
    pub tools: Vec<String>,
    /// Whether an SSE answer is asked for.
    pub stream: bool,
}

/// What an API module produces for one request.
#[derive(Debug)]
pub(crate) enum Answer {
    /// A JSON body with a status.
    Json(u16, Value),
    /// A 200 `text/event-stream` body.
    Sse(Vec<SseEvent>),
    /// Not answered while the server runs: a main request at or past
    /// [`crate::ServerConfig::hold_from_turn`], or whose reply would take the tool calls
    /// handed out past [`crate::ServerConfig::hold_past_tool_calls`].
    Held(crate::Hold),
}

/// One tool call resolved for sending: id and name fixed, neutral actions translated,
/// `{{workspace}}` substituted.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Call {
    pub id: String,
    pub name: String,
    /// `Some(text)` for a free-form (custom) call.
    pub custom_input: Option<String>,
    /// The JSON arguments (`{"input": text}` for a free-form call).
    pub args: Value,
}

impl Call {
    pub fn args_json(&self) -> String {
        self.args.to_string()
    }
}

/// A reply ready to render: everything an API module needs.
#[derive(Debug, Clone)]
pub(crate) struct Planned {
    /// Request sequence number (1-based).
    pub seq: u64,
    /// Completed assistant turns in the request.
    pub turn: usize,
    /// Model id to report.
    pub model: String,
    pub text: String,
    pub thinking: String,
    pub calls: Vec<Call>,
    /// Estimated prompt tokens.
    pub in_tokens: u64,
}

impl Planned {
    /// Estimated output tokens: text plus the arguments of every call.
    pub fn out_tokens(&self) -> u64 {
        let mut s = self.text.clone();
        for c in &self.calls {
            s.push_str(&c.args_json());
        }
        approx_tokens_str(&s)
    }
}

/// A deterministic stand-in for a tokenizer: 4 characters per token, at least 1.
pub(crate) fn approx_tokens(v: &Value) -> u64 {
    approx_tokens_str(&v.to_string())
}

fn approx_tokens_str(s: &str) -> u64 {
    (s.chars().count() as u64 / 4).max(1)
}

/// Splits text into deterministic, roughly word-sized deltas (a cut after a space or
/// newline once a piece holds `size` characters).
pub(crate) fn text_chunks(text: &str) -> Vec<String> {
    const SIZE: usize = 12;
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut n = 0;
    for ch in text.chars() {
        cur.push(ch);
        n += 1;
        if n >= SIZE && (ch == ' ' || ch == '\n') {
            out.push(std::mem::take(&mut cur));
            n = 0;
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// Splits a string into pieces of 24 characters (at least one piece, maybe empty).
pub(crate) fn str_chunks(s: &str) -> Vec<String> {
    let chars: Vec<char> = s.chars().collect();
    if chars.is_empty() {
        return vec![String::new()];
    }
    chars.chunks(24).map(|c| c.iter().collect()).collect()
}

/// Completed assistant turns in a message list: messages whose `role` is `role`, minus
/// a trailing one (a prefill, e.g. OpenCode's "MAXIMUM STEPS REACHED" nudge).
pub(crate) fn count_turns(messages: Option<&Value>, role: &str) -> usize {
    let Some(list) = messages.and_then(Value::as_array) else {
        return 0;
    };
    let is_role = |m: &Value| m.get("role").and_then(Value::as_str) == Some(role);
    let n = list.iter().filter(|m| is_role(m)).count();
    match list.last() {
        Some(last) if is_role(last) => n - 1,
        _ => n,
    }
}

/// `req[key]` as a bool (false when absent).
pub(crate) fn flag(req: &Value, key: &str) -> bool {
    req.get(key).and_then(Value::as_bool).unwrap_or(false)
}

/// `req.model` when it is a non-empty string.
pub(crate) fn req_model(req: &Value) -> Option<String> {
    req.get("model")
        .and_then(Value::as_str)
        .filter(|m| !m.is_empty())
        .map(str::to_string)
}

/// Builds a minimal value that satisfies a (simple) JSON schema.
pub(crate) fn fill_schema(schema: &Value, side_text: &str) -> Value {
    let Some(obj) = schema.as_object() else {
        return Value::String(side_text.into());
    };
    if let Some(choices) = obj.get("enum").and_then(Value::as_array)
        && let Some(first) = choices.first()
    {
        let user = Value::String("user".into());
        return if choices.contains(&user) {
            user
        } else {
            first.clone()
        };
    }
    let ty = match obj.get("type") {
        Some(Value::String(t)) => t.to_lowercase(),
        Some(Value::Array(ts)) => ts
            .first()
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_lowercase(),
        _ => String::new(),
    };
    if ty == "object" || obj.contains_key("properties") {
        let mut out = Map::new();
        if let Some(props) = obj.get("properties").and_then(Value::as_object) {
            for (k, v) in props {
                out.insert(k.clone(), fill_schema(v, side_text));
            }
        }
        return Value::Object(out);
    }
    match ty.as_str() {
        "array" => json!([]),
        "integer" | "number" => json!(0),
        "boolean" => json!(false),
        _ => Value::String(side_text.into()),
    }
}

/// When a side request asks for structured output — Anthropic `output_config.format`,
/// OpenAI `response_format` / `text.format`, Gemini `generationConfig.responseJsonSchema`
/// / `responseSchema` — a JSON string satisfying the schema.
pub(crate) fn side_json(req: &Value, side_text: &str) -> Option<String> {
    let formats = [
        req.pointer("/output_config/format"),
        req.get("response_format"),
        req.pointer("/text/format"),
    ];
    for fmt in formats.into_iter().flatten() {
        let schema = fmt
            .get("schema")
            .or_else(|| fmt.pointer("/json_schema/schema"));
        if let Some(schema) = schema.filter(|s| !is_empty(s)) {
            return Some(fill_schema(schema, side_text).to_string());
        }
    }
    let gen_config = req.get("generationConfig")?;
    let schema = gen_config
        .get("responseJsonSchema")
        .or_else(|| gen_config.get("responseSchema"))
        .filter(|s| !is_empty(s))?;
    Some(fill_schema(schema, side_text).to_string())
}

fn is_empty(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Object(m) => m.is_empty(),
        _ => false,
    }
}

/// Replaces `{{workspace}}` and `{{WORKDIR}}` in `s`.
pub(crate) fn substitute_str(s: &str, workspace: &str) -> String {
    s.replace("{{workspace}}", workspace)
        .replace("{{WORKDIR}}", workspace)
}

/// Replaces `{{workspace}}` and `{{WORKDIR}}` in every string inside `v`.
pub(crate) fn substitute(v: &mut Value, workspace: &str) {
    match v {
        Value::String(s) => *s = substitute_str(s, workspace),
        Value::Array(items) => items.iter_mut().for_each(|i| substitute(i, workspace)),
        Value::Object(m) => m.values_mut().for_each(|i| substitute(i, workspace)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_are_deterministic_and_lossless() {
        let t = "I'll create the file hello.txt now, then run date.";
        let parts = text_chunks(t);
        assert!(parts.len() > 2);
        assert_eq!(parts.concat(), t);
        assert!(text_chunks("").is_empty());
        assert_eq!(str_chunks(""), vec![String::new()]);
        assert_eq!(str_chunks(&"x".repeat(50)).len(), 3);
    }

    #[test]
    fn trailing_assistant_is_a_prefill() {
        let msgs = json!([{"role": "user"}, {"role": "assistant"}, {"role": "user"},
                          {"role": "assistant"}]);
        assert_eq!(count_turns(Some(&msgs), "assistant"), 1);
        assert_eq!(count_turns(None, "assistant"), 0);
    }

    #[test]
    fn schema_filling() {
        let schema = json!({"type": "OBJECT", "properties": {
            "next_speaker": {"type": "string", "enum": ["model", "user"]},
            "reasoning": {"type": "string"}, "n": {"type": ["integer", "null"]},
            "ok": {"type": "boolean"}, "list": {"type": "array"}}});
        assert_eq!(
            fill_schema(&schema, "T"),
            json!({"next_speaker": "user", "reasoning": "T", "n": 0, "ok": false, "list": []})
        );
        let req = json!({"output_config": {"format": {"type": "json_schema",
            "schema": {"type": "object", "properties": {"title": {"type": "string"}}}}}});
        assert_eq!(
            side_json(&req, "Mock").as_deref(),
            Some(r#"{"title":"Mock"}"#)
        );
        assert_eq!(side_json(&json!({"messages": []}), "Mock"), None);
    }

    #[test]
    fn substitution_reaches_nested_strings() {
        let mut v = json!({"a": ["{{workspace}}/x", {"b": "{{WORKDIR}}"}], "n": 1});
        substitute(&mut v, "/w");
        assert_eq!(v, json!({"a": ["/w/x", {"b": "/w"}], "n": 1}));
    }
}
