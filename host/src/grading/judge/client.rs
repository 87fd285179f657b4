//! The judge's model client: one Anthropic Messages request (`POST …/v1/messages`,
//! `anthropic-version: 2023-06-01`, non-streaming) offering the `submit_verdict` tool and
//! forcing it with `tool_choice`, to a scripted model on loopback or to the real API.
//! HTTP by reqwest (rustls, no system TLS library).

use super::{JudgeUsage, JudgeVerdict, SUBMIT_VERDICT};
use coder_eval_scripted_model::{Script, ScriptedModel, ServerConfig};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::Path;

/// The Anthropic API's address when `ANTHROPIC_BASE_URL` is not handed to judges.
pub(crate) const ANTHROPIC_API: &str = "https://api.anthropic.com";
/// The `anthropic-version` header sent.
pub(crate) const ANTHROPIC_VERSION: &str = "2023-06-01";

/// Host environment variables the user handed to judges (`--judge-env NAME`, and the
/// names given to `--pass-env`), with their values: `ANTHROPIC_API_KEY`,
/// `ANTHROPIC_BASE_URL`. Never shown: its `Debug` lists names only.
#[derive(Clone, Default)]
pub struct JudgeEnv {
    vars: BTreeMap<String, String>,
}

impl JudgeEnv {
    /// Reads `names` from the host environment (a name that is not set is skipped).
    pub(crate) fn from_host(names: &[String]) -> JudgeEnv {
        let vars = names
            .iter()
            .filter_map(|n| std::env::var(n).ok().map(|v| (n.clone(), v)))
            .collect();
        JudgeEnv { vars }
    }

    /// A set of variables (tests).
    pub fn from_pairs<I: IntoIterator<Item = (String, String)>>(pairs: I) -> JudgeEnv {
        JudgeEnv {
            vars: pairs.into_iter().collect(),
        }
    }

    /// One variable.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.vars.get(name).map(String::as_str)
    }
}

impl std::fmt::Debug for JudgeEnv {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JudgeEnv")
            .field("names", &self.vars.keys().collect::<Vec<_>>())
            .finish()
    }
}

/// Why a judge got no answer. Messages never hold a credential.
#[derive(Debug, thiserror::Error)]
pub(crate) enum JudgeError {
    /// No scripted model and no key.
    #[error(
        "llm_judge has no model to ask: give the criterion `scripted_model: PATH` to play a \
         script offline, or hand the API key to judges with `--judge-env ANTHROPIC_API_KEY` \
         (or `--pass-env ANTHROPIC_API_KEY`, which also gives it to the agent)"
    )]
    Unconfigured,
    /// The judge's script could not be loaded or served.
    #[error("judge scripted model: {0}")]
    Script(String),
    /// The request failed (connection, timeout).
    #[error("judge request to {endpoint} failed: {message}")]
    Http { endpoint: String, message: String },
    /// The API answered with an error status.
    #[error("judge request to {endpoint}: HTTP {status}: {message}")]
    Status {
        endpoint: String,
        status: u16,
        message: String,
    },
    /// The answer is not a Messages response.
    #[error("judge answer from {endpoint} is not a Messages response: {message}")]
    Malformed { endpoint: String, message: String },
}

impl JudgeError {
    /// The criterion error kind.
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            JudgeError::Unconfigured => "judge_unconfigured",
            JudgeError::Script(_) => "judge_script",
            JudgeError::Http { .. } | JudgeError::Status { .. } => "judge_request",
            JudgeError::Malformed { .. } => "judge_answer",
        }
    }
}

/// One judge request.
pub(crate) struct Request<'a> {
    pub model: &'a str,
    pub system: &'a str,
    pub user: &'a str,
    pub temperature: f64,
    pub max_tokens: u32,
}

/// The model's answer.
#[derive(Debug, Clone)]
pub(crate) struct Answer {
    /// `scripted` or `anthropic`.
    pub endpoint: String,
    /// The model that answered (the response's `model`, else the one requested).
    pub model: String,
    /// The input of the first `submit_verdict` call, when there was one.
    pub verdict_input: Option<Value>,
    /// The answer's text blocks, joined.
    pub text: Option<String>,
    pub usage: Option<JudgeUsage>,
}

/// The request body.
fn body(r: &Request<'_>) -> Value {
    json!({
        "model": r.model,
        "max_tokens": r.max_tokens,
        "temperature": r.temperature,
        "system": r.system,
        "messages": [{"role": "user", "content": r.user}],
        "tools": [{
            "name": SUBMIT_VERDICT,
            "description": "Submit the grading verdict. Call exactly once.",
            "input_schema": JudgeVerdict::input_schema(),
        }],
        "tool_choice": {"type": "tool", "name": SUBMIT_VERDICT},
    })
}

/// Reads a Messages response.
fn read_answer(endpoint: &str, requested: &str, v: &Value) -> Result<Answer, JudgeError> {
    let malformed = |m: &str| JudgeError::Malformed {
        endpoint: endpoint.to_string(),
        message: m.to_string(),
    };
    let content = v
        .get("content")
        .and_then(Value::as_array)
        .ok_or_else(|| malformed("no `content` list"))?;
    let verdict_input = content
        .iter()
        .find(|b| b["type"] == "tool_use" && b["name"] == SUBMIT_VERDICT)
        .map(|b| b["input"].clone());
    let texts: Vec<&str> = content
        .iter()
        .filter(|b| b["type"] == "text")
        .filter_map(|b| b["text"].as_str())
        .collect();
    let u = &v["usage"];
    let usage = u.is_object().then(|| JudgeUsage {
        input_tokens: u["input_tokens"].as_u64(),
        output_tokens: u["output_tokens"].as_u64(),
        cache_read_tokens: u["cache_read_input_tokens"].as_u64(),
        cache_write_tokens: u["cache_creation_input_tokens"].as_u64(),
    });
    Ok(Answer {
        endpoint: endpoint.to_string(),
        model: v["model"].as_str().unwrap_or(requested).to_string(),
        verdict_input,
        text: (!texts.is_empty()).then(|| texts.join("\n")),
        usage,
    })
}

/// Posts one request to `base` (no trailing `/v1`). `key` goes in `x-api-key` only.
async fn post(
    endpoint: &str,
    base: &str,
    key: Option<&str>,
    r: &Request<'_>,
) -> Result<Answer, JudgeError> {
    let http = |e: reqwest::Error| JudgeError::Http {
        endpoint: endpoint.to_string(),
        // Without the URL: reqwest puts it in its messages, and a base URL may carry a
        // token in its query.
        message: error_chain(&e.without_url()),
    };
    let client = reqwest::Client::builder()
        .timeout(crate::limits::JUDGE_REQUEST_TIMEOUT)
        .build()
        .map_err(http)?;
    let mut req = client
        .post(format!("{}/v1/messages", base.trim_end_matches('/')))
        .header("anthropic-version", ANTHROPIC_VERSION)
        .json(&body(r));
    if let Some(key) = key {
        req = req.header("x-api-key", key);
    }
    let resp = req.send().await.map_err(http)?;
    let status = resp.status();
    let text = resp.text().await.map_err(http)?;
    let value: Value = serde_json::from_str(&text).map_err(|e| JudgeError::Malformed {
        endpoint: endpoint.to_string(),
        message: format!("not JSON ({e}): {}", super::cap(&text, 300).0),
    })?;
    if !status.is_success() {
        let message = value["error"]["message"]
            .as_str()
            .map(String::from)
            .unwrap_or_else(|| super::cap(&text, 300).0);
        return Err(JudgeError::Status {
            endpoint: endpoint.to_string(),
            status: status.as_u16(),
            message,
        });
    }
    read_answer(endpoint, r.model, &value)
}

/// Asks the judge model: the scripted model playing `script` when given, else the
/// Anthropic API with the key `env` holds.
pub(crate) async fn ask(
    r: &Request<'_>,
    script: Option<&Path>,
    env: Option<&JudgeEnv>,
) -> Result<Answer, JudgeError> {
    if let Some(path) = script {
        let script = Script::load(path).map_err(|e| JudgeError::Script(error_chain(&e)))?;
        let server = ScriptedModel::start(ServerConfig::new(script, "/nonexistent"))
            .await
            .map_err(|e| JudgeError::Script(error_chain(&e)))?;
        let answer = post("scripted", &server.base_url(), None, r).await;
        server.shutdown().await;
        return answer;
    }
    let key = env
        .and_then(|e| e.get("ANTHROPIC_API_KEY"))
        .filter(|k| !k.trim().is_empty())
        .ok_or(JudgeError::Unconfigured)?;
    let base = env
        .and_then(|e| e.get("ANTHROPIC_BASE_URL"))
        .unwrap_or(ANTHROPIC_API);
    post("anthropic", base, Some(key), r).await
}

fn error_chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        text.push_str(&format!(": {cause}"));
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_messages_answer() {
        let v = json!({"model": "claude-x", "content": [
            {"type": "text", "text": "thinking aloud"},
            {"type": "tool_use", "id": "t", "name": "submit_verdict", "input": {"score": 0.5, "rationale": "r"}}
        ], "usage": {"input_tokens": 10, "output_tokens": 3}});
        let a = read_answer("anthropic", "m", &v).unwrap();
        assert_eq!(a.verdict_input.unwrap()["score"], 0.5);
        assert_eq!(a.text.as_deref(), Some("thinking aloud"));
        assert_eq!(a.model, "claude-x");
        assert_eq!(a.usage.unwrap().input_tokens, Some(10));
        assert!(read_answer("x", "m", &json!({"error": {}})).is_err());
    }

    #[test]
    fn debug_never_shows_values() {
        let env = JudgeEnv::from_pairs([("ANTHROPIC_API_KEY".into(), "sk-secret-123".into())]);
        let shown = format!("{env:?}");
        assert!(
            shown.contains("ANTHROPIC_API_KEY") && !shown.contains("sk-secret"),
            "{shown}"
        );
    }
}
