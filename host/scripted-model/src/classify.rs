//! Which API a model request is for and what it carries: the one rule the scripted model
//! answers by and the host's model gateway (`coder_eval::gateway`) counts by, so a call is
//! main or side, and at which turn index, the same way behind both.

use serde_json::Value;

use crate::common::{Inspect, req_model};
use crate::record::Api;
use crate::{anthropic, gemini, openai_chat, openai_responses};

/// What a model request is, read from its path and JSON body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Classified {
    /// The vendor API.
    pub api: Api,
    /// Completed assistant turns the request holds: it asks for call `turn + 1`
    /// (Anthropic/Chat: `assistant` messages, Responses: runs of assistant-side items plus
    /// the turns of a known `previous_response_id`, Gemini: `model` contents; a trailing
    /// assistant message is a prefill and does not count).
    pub turn: usize,
    /// Names of the tools offered.
    pub tools: Vec<String>,
    /// An SSE answer is asked for (`"stream": true`, Gemini `:streamGenerateContent`).
    pub stream: bool,
    /// A side request: it offers no tools (title generation, quota probes, summaries), or
    /// it is a non-streaming Gemini `generateContent` (Gemini CLI's routing and
    /// next-speaker checks). Everything else is a main-thread call.
    pub side: bool,
    /// The model asked for: the body's `model`, or Gemini's path segment.
    pub model: Option<String>,
}

/// The model-call API a request path names (`…/messages`, `…/responses`,
/// `…/chat/completions`, `…/models/M:generateContent`, `…:streamGenerateContent`);
/// `None` for anything else (token counting, model listing, unknown paths).
pub fn model_call_api(path: &str) -> Option<Api> {
    if path.ends_with("/messages/count_tokens") || path.contains(":countTokens") {
        None
    } else if path.ends_with("/messages") {
        Some(Api::Anthropic)
    } else if path.ends_with("/chat/completions") {
        Some(Api::Chat)
    } else if path.ends_with("/responses") {
        Some(Api::Responses)
    } else if path.contains(":streamGenerateContent") || path.contains(":generateContent") {
        Some(Api::Gemini)
    } else {
        None
    }
}

/// Classifies a model request of `api` at `path` with JSON `body`; `prev_turns` gives the
/// completed turns of a Responses `previous_response_id` (`None` when unknown: 0).
pub fn classify(
    api: Api,
    path: &str,
    body: &Value,
    prev_turns: impl Fn(&str) -> Option<usize>,
) -> Classified {
    let info: Inspect = match api {
        Api::Anthropic => anthropic::inspect(body),
        Api::Chat => openai_chat::inspect(body),
        Api::Responses => openai_responses::inspect(body, prev_turns),
        Api::Gemini => gemini::inspect(body, path.contains(":streamGenerateContent")),
    };
    let side = info.tools.is_empty() || (api == Api::Gemini && !info.stream);
    let model = match api {
        Api::Gemini => gemini::path_model(path).or_else(|| req_model(body)),
        _ => req_model(body),
    };
    Classified {
        api,
        turn: info.turn,
        tools: info.tools,
        stream: info.stream,
        side,
        model,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn paths_and_sides() {
        assert_eq!(model_call_api("/v1/messages"), Some(Api::Anthropic));
        assert_eq!(model_call_api("/v1/messages/count_tokens"), None);
        assert_eq!(model_call_api("/v1/responses"), Some(Api::Responses));
        assert_eq!(model_call_api("/v1/chat/completions"), Some(Api::Chat));
        assert_eq!(
            model_call_api("/v1beta/models/g:streamGenerateContent"),
            Some(Api::Gemini)
        );
        assert_eq!(model_call_api("/v1beta/models/g:countTokens"), None);
        assert_eq!(model_call_api("/v1/models"), None);
        let main = json!({"model": "m", "stream": true, "tools": [{"name": "Bash"}],
            "messages": [{"role": "user"}, {"role": "assistant"}, {"role": "user"}]});
        let c = classify(Api::Anthropic, "/v1/messages", &main, |_| None);
        assert_eq!((c.turn, c.side, c.stream), (1, false, true));
        assert_eq!(c.model.as_deref(), Some("m"));
        let title = json!({"model": "m", "messages": [{"role": "user"}]});
        assert!(classify(Api::Anthropic, "/v1/messages", &title, |_| None).side);
        let gem = json!({"tools": [{"functionDeclarations": [{"name": "ls"}]}]});
        let c = classify(
            Api::Gemini,
            "/v1beta/models/g1:generateContent",
            &gem,
            |_| None,
        );
        assert!(c.side, "non-streaming Gemini is a side request");
        assert_eq!(c.model.as_deref(), Some("g1"));
    }
}
