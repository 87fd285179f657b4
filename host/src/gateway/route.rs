//! Which requests the gateway forwards, and with what: the path check and the allow-list
//! (see *What passes through* in [`super`]'s docs).
//!
//! A request's path is checked **as the upstream will see it** before anything else: a
//! path that is not already in its one normal form (percent-escapes, backslashes, `.` and
//! `..` segments, empty segments from `//` or a trailing `/`, any byte outside
//! `A-Z a-z 0-9 - . _ ~ : @ + ,`) is refused, so no spelling of a path can be classified
//! as one thing and reach the upstream as another. A normal path is then matched
//! **exactly** against the allow-list; only allow-listed paths get the gateway's
//! credentials.

use axum::http::{HeaderMap, Method};
use coder_eval_scripted_model::Api;

/// How the gateway treats a request, by its method and (normal) path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Route {
    /// A model call of `api` (`POST` to one of the four APIs' canonical model-call paths):
    /// classified, counted, held past `max_turns`, refused after the host's stop, and
    /// sent with the gateway's credentials for `api`.
    Model(Api),
    /// An allow-listed request that is not a model call (token counting, model listing)
    /// of `api`'s family: sent with the gateway's credentials, not counted, refused after
    /// the host's stop (it carries the real key).
    Keyed(Api),
    /// Any other normal path: forwarded with the CLI's own headers only (the gateway's
    /// credentials never), not counted.
    Keyless,
}

impl Route {
    /// The model-call API, for a model call.
    pub(crate) fn model_api(self) -> Option<Api> {
        match self {
            Route::Model(api) => Some(api),
            _ => None,
        }
    }

    /// The API family whose credentials the request is sent with; `None`: none added.
    pub(crate) fn credential_family(self) -> Option<Api> {
        match self {
            Route::Model(api) | Route::Keyed(api) => Some(api),
            Route::Keyless => None,
        }
    }
}

/// Whether `c` may appear in a path the gateway forwards (unreserved characters and a
/// few sub-delimiters that no URL parser rewrites).
fn path_byte_ok(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'-' | b'.' | b'_' | b'~' | b':' | b'@' | b'+' | b',')
}

/// Checks that `path` (the request target's path, as received) is in normal form: `/`,
/// or `/`-separated non-empty segments of [`path_byte_ok`] bytes, none `.` or `..`.
/// Errors: a sentence saying what is wrong, for the `400` and the record.
pub(crate) fn check_path(path: &str) -> Result<(), String> {
    if path == "/" {
        return Ok(());
    }
    let Some(rest) = path.strip_prefix('/') else {
        return Err("the path does not begin with `/`".into());
    };
    if let Some(c) = path.bytes().find(|&c| c != b'/' && !path_byte_ok(c)) {
        let what = match c {
            b'%' => "a percent-escape".to_string(),
            b'\\' => "a backslash".to_string(),
            c if c.is_ascii_graphic() => format!("the character `{}`", c as char),
            c => format!("the byte 0x{c:02x}"),
        };
        return Err(format!(
            "the path holds {what}: only unescaped A-Z a-z 0-9 - . _ ~ : @ + , are forwarded"
        ));
    }
    for segment in rest.split('/') {
        match segment {
            "" => {
                return Err(
                    "the path has an empty segment (`//` or a trailing `/`): not a canonical \
                     path"
                        .into(),
                );
            }
            "." | ".." => {
                return Err(format!(
                    "the path has a `{segment}` segment: not a canonical path"
                ));
            }
            _ => {}
        }
    }
    Ok(())
}

/// Checks that the upstream URL built for `path` has the path the gateway classified:
/// `<upstream path><path>`, unchanged by URL parsing. Errors: a sentence naming both.
pub(crate) fn check_url(upstream: &str, path: &str, url: &reqwest::Url) -> Result<(), String> {
    let base = reqwest::Url::parse(upstream)
        .map(|u| u.path().trim_end_matches('/').to_string())
        .unwrap_or_default();
    let expected = format!("{base}{path}");
    if url.path() == expected {
        Ok(())
    } else {
        Err(format!(
            "the upstream URL's path would be `{}`, not `{expected}`",
            url.path()
        ))
    }
}

/// Whether the gateway's credentials of `family` may go to `upstream` (a base URL): a
/// known vendor host (`api.anthropic.com`, `api.openai.com`,
/// `generativelanguage.googleapis.com`) gets its own vendor's only, so with several keys
/// passed none goes to another vendor; any other host (a proxy, the scripted model) gets
/// the family the path names.
pub(crate) fn vendor_allows(upstream: &str, family: Api) -> bool {
    let host = reqwest::Url::parse(upstream)
        .ok()
        .and_then(|u| u.host_str().map(str::to_ascii_lowercase));
    match host.as_deref() {
        Some("api.anthropic.com") => family == Api::Anthropic,
        Some("api.openai.com") => matches!(family, Api::Responses | Api::Chat),
        Some("generativelanguage.googleapis.com") => family == Api::Gemini,
        _ => true,
    }
}

/// A Gemini `…/models/MODEL:METHOD` path under `v1beta`, `v1` or `v1alpha`: the method.
fn gemini_method(path: &str) -> Option<&str> {
    let rest = ["/v1beta/models/", "/v1/models/", "/v1alpha/models/"]
        .iter()
        .find_map(|p| path.strip_prefix(p))?;
    let (model, method) = rest.split_once(':')?;
    (!model.is_empty() && !model.contains('/') && !method.contains([':', '/'])).then_some(method)
}

/// A model-listing path: `/v1/models`, `/v1/models/ID`, and the Gemini versions'.
fn models_listing(path: &str) -> Option<&'static str> {
    for version in ["/v1", "/v1beta", "/v1alpha"] {
        if let Some(rest) = path.strip_prefix(version)
            && let Some(rest) = rest.strip_prefix("/models")
            && (rest.is_empty()
                || rest
                    .strip_prefix('/')
                    .is_some_and(|id| !id.contains(['/', ':'])))
        {
            return Some(version);
        }
    }
    None
}

/// The route of a request with a normal `path` (see [`check_path`]). The allow-list:
///
/// | method | path | route |
/// |---|---|---|
/// | `POST` | `/v1/messages` | model call, Anthropic |
/// | `POST` | `/v1/responses` | model call, OpenAI Responses |
/// | `POST` | `/v1/chat/completions` | model call, Chat Completions |
/// | `POST` | `/v1beta/models/M:generateContent`, `…:streamGenerateContent` (also `v1`, `v1alpha`) | model call, Gemini |
/// | `POST` | `/v1/messages/count_tokens` | keyed, Anthropic |
/// | `POST` | `/v1beta/models/M:countTokens` (also `v1`, `v1alpha`) | keyed, Gemini |
/// | `GET` | `/v1/models`, `/v1/models/ID` | keyed: Anthropic with an `anthropic-version` header, Gemini with an `x-goog-api-key` header, else OpenAI |
/// | `GET` | `/v1beta/models`, `/v1beta/models/ID` (also `v1alpha`) | keyed, Gemini |
///
/// Everything else (Anthropic batches and files, `/v1/responses/ID`, `…/compact`, any
/// other vendor path, any other method) is keyless.
pub(crate) fn route(method: &Method, path: &str, headers: &HeaderMap) -> Route {
    if *method == Method::POST {
        match path {
            "/v1/messages" => return Route::Model(Api::Anthropic),
            "/v1/responses" => return Route::Model(Api::Responses),
            "/v1/chat/completions" => return Route::Model(Api::Chat),
            "/v1/messages/count_tokens" => return Route::Keyed(Api::Anthropic),
            _ => {}
        }
        return match gemini_method(path) {
            Some("generateContent" | "streamGenerateContent") => Route::Model(Api::Gemini),
            Some("countTokens") => Route::Keyed(Api::Gemini),
            _ => Route::Keyless,
        };
    }
    if *method == Method::GET
        && let Some(version) = models_listing(path)
    {
        if version != "/v1" || headers.contains_key("x-goog-api-key") {
            return Route::Keyed(Api::Gemini);
        }
        if headers.contains_key("anthropic-version") {
            return Route::Keyed(Api::Anthropic);
        }
        return Route::Keyed(Api::Chat);
    }
    Route::Keyless
}

#[cfg(test)]
mod tests {
    use super::*;

    fn post(path: &str) -> Route {
        route(&Method::POST, path, &HeaderMap::new())
    }

    #[test]
    fn only_the_canonical_spelling_of_a_path_passes_the_check() {
        for ok in [
            "/",
            "/v1/messages",
            "/v1beta/models/gemini-2.5-flash:streamGenerateContent",
            "/api/event_logging/batch",
        ] {
            assert_eq!(check_path(ok), Ok(()), "{ok}");
        }
        for bad in [
            "/v1/messages/..\\messages",
            "/v1/messages/../messages",
            "/v1/messages/%2e%2e/messages",
            "/v1/chat/completions/",
            "/v1//messages",
            "//v1/messages",
            "/v1/./messages",
            "/v1beta/models/g%3AstreamGenerateContent",
            "/v1/mess%61ges",
            "/v1/messages;x",
            "v1/messages",
            "",
        ] {
            assert!(check_path(bad).is_err(), "{bad} passed");
        }
    }

    #[test]
    fn the_allow_list_is_exact() {
        assert_eq!(post("/v1/messages"), Route::Model(Api::Anthropic));
        assert_eq!(post("/v1/responses"), Route::Model(Api::Responses));
        assert_eq!(post("/v1/chat/completions"), Route::Model(Api::Chat));
        assert_eq!(
            post("/v1beta/models/g:streamGenerateContent"),
            Route::Model(Api::Gemini)
        );
        assert_eq!(
            post("/v1beta/models/g:generateContent"),
            Route::Model(Api::Gemini)
        );
        assert_eq!(
            post("/v1/messages/count_tokens"),
            Route::Keyed(Api::Anthropic)
        );
        assert_eq!(
            post("/v1beta/models/g:countTokens"),
            Route::Keyed(Api::Gemini)
        );
        for keyless in [
            "/v1/messages/batches",
            "/v1/messages/batches/x/cancel",
            "/v1/responses/compact",
            "/v2/messages",
            "/proxy/v1/messages",
            "/v1/x/chat/completions",
            "/v1beta/models/g:streamGenerateContent:x",
            "/v1beta/models/a/b:generateContent",
            "/v1beta/models/:generateContent",
            "/v1beta/tunedModels/g:generateContent",
            "/v1/files",
        ] {
            assert_eq!(post(keyless), Route::Keyless, "{keyless}");
        }
        let get = |path: &str, header: Option<&'static str>| {
            let mut h = HeaderMap::new();
            if let Some(name) = header {
                h.insert(name, "x".parse().unwrap());
            }
            route(&Method::GET, path, &h)
        };
        assert_eq!(get("/v1/models", None), Route::Keyed(Api::Chat));
        assert_eq!(
            get("/v1/models/claude", Some("anthropic-version")),
            Route::Keyed(Api::Anthropic)
        );
        assert_eq!(get("/v1beta/models", None), Route::Keyed(Api::Gemini));
        assert_eq!(get("/v1/models/a/b", None), Route::Keyless);
        assert_eq!(get("/v1/messages", None), Route::Keyless);
        assert_eq!(
            route(&Method::PUT, "/v1/messages", &HeaderMap::new()),
            Route::Keyless
        );
    }

    #[test]
    fn a_vendor_host_gets_its_own_vendors_key_only() {
        assert!(vendor_allows("https://api.anthropic.com", Api::Anthropic));
        assert!(!vendor_allows("https://api.anthropic.com", Api::Chat));
        assert!(!vendor_allows("https://API.OpenAI.com/v1", Api::Anthropic));
        assert!(vendor_allows("https://api.openai.com", Api::Responses));
        assert!(!vendor_allows(
            "https://generativelanguage.googleapis.com",
            Api::Chat
        ));
        assert!(vendor_allows("http://127.0.0.1:9", Api::Gemini));
    }

    #[test]
    fn a_url_whose_parsed_path_differs_is_caught() {
        let url = reqwest::Url::parse("http://h/base/v1/messages").unwrap();
        assert_eq!(check_url("http://h/base", "/v1/messages", &url), Ok(()));
        let url = reqwest::Url::parse("http://h/base/v1/x/../messages").unwrap();
        assert!(check_url("http://h/base", "/v1/x/../messages", &url).is_err());
    }
}
