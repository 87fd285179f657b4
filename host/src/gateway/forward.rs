//! The gateway's one handler: classify the request, hold it past `max_turns`, or forward
//! it upstream and stream the answer back while watching it pass ([`super::passing`]).

use super::Shared;
use super::answer::{
    Unanswered, error_body, hold_reason, json_response, refuse, unanswered_until_close,
};
use super::body::{MAX_REQUEST_BODY, decode_json, kept_request_body, readable_encodings};
use super::call::{CallKind, CallState};
use super::passing::{Guard, Passing, error_chain};
use super::route::{self, Route};
use super::scan::UsageScan;
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use coder_eval_scripted_model::{Api, classify};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;

/// Headers that describe one connection, not the message: never forwarded either way.
const HOP_BY_HOP: &[&str] = &[
    "connection",
    "keep-alive",
    "proxy-authenticate",
    "proxy-authorization",
    "proxy-connection",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
];

impl Shared {
    /// Ends one open main call at counted turn `turn` (see [`Shared::open_turns`]).
    pub(super) fn close_turn(&self, turn: usize) {
        let mut open = self.open_turns.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(i) = open.iter().position(|&t| t == turn) {
            open.swap_remove(i);
        }
    }

    fn prev_turns(&self, id: &str) -> Option<usize> {
        self.responses_turns
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(id)
            .copied()
    }
}

/// Every request lands here.
pub(super) async fn handle(State(shared): State<Arc<Shared>>, req: Request) -> Response {
    let seq = shared.seq.fetch_add(1, Ordering::Relaxed) + 1;
    let method = req.method().clone();
    let path = req.uri().path().to_string();
    let mut state = CallState::new(seq, method.as_str(), &path);
    state.secrets = shared.secrets.clone();
    let mut guard = Guard {
        shared: shared.clone(),
        state,
    };
    let call = &mut guard.state;
    if method == Method::CONNECT || req.uri().scheme().is_some() {
        call.status = Some(403);
        call.error = Some("a proxy request: the gateway forwards to its upstream only".into());
        call.ended = Some(Instant::now());
        return (
            StatusCode::FORBIDDEN,
            "coder-eval gateway: not a proxy; requests go to the configured upstream only",
        )
            .into_response();
    }
    // The path as the upstream will see it: one not in canonical form is refused, so no
    // spelling of a path is classified as one thing and forwarded as another.
    if let Err(why) = route::check_path(&path) {
        return refuse(
            guard,
            None,
            400,
            format!("coder-eval gateway: refused, not forwarded: {why}"),
        );
    }
    let route = route::route(&method, &path, req.headers());
    let api = route.model_api();
    call.api = api;
    let query = req.uri().query().map(str::to_string);
    let (parts, body) = req.into_parts();
    // A body announced over the cap is refused on its announcement, not after reading it.
    let announced = parts
        .headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if let Some(n) = announced.filter(|&n| n > MAX_REQUEST_BODY as u64) {
        return refuse(
            guard,
            api,
            413,
            format!(
                "coder-eval gateway: refused, not forwarded: Content-Length {n} is over the \
                 {MAX_REQUEST_BODY}-byte cap"
            ),
        );
    }
    let body = match axum::body::to_bytes(body, MAX_REQUEST_BODY).await {
        Ok(body) => body,
        Err(e) => {
            let message = format!("coder-eval gateway: cannot read the request body: {e}");
            return refuse(guard, api, 400, message);
        }
    };
    if let Some(api) = api {
        let encoding = parts
            .headers
            .get(header::CONTENT_ENCODING)
            .map(|v| v.to_str().unwrap_or("?").trim().to_ascii_lowercase());
        // A model call the gateway cannot read could not be counted or held: refused
        // (fail closed), never forwarded uncounted.
        let value = match decode_json(encoding.as_deref(), &body) {
            Ok(value) => value,
            Err((status, why)) => {
                let message = format!(
                    "coder-eval gateway: refused, not forwarded: a model call's body the \
                     gateway cannot read ({why}); it must read a model call to count it"
                );
                return refuse(guard, Some(api), status, message);
            }
        };
        let c = classify(api, &path, &value, |id| shared.prev_turns(id));
        let call = &mut guard.state;
        call.kind = if c.side {
            CallKind::Side
        } else {
            CallKind::Main
        };
        call.turn = Some(c.turn);
        call.stream = Some(c.stream);
        call.model = c.model;
        if shared.keep_bodies {
            call.request_body = Some(kept_request_body(value, &shared.secrets));
        }
    }
    // After the host's stop nothing that would carry the gateway's credentials goes out.
    if route.credential_family().is_some() && shared.stopper.is_stopped() {
        return unanswered_until_close(guard, api, Unanswered::Stopped).await;
    }
    let call = &mut guard.state;
    // Over a budget (the gateway's count as the calls ended): the next model call is
    // held like `max_turns`'s call N+1, never forwarded, and counts as no turn.
    if api.is_some()
        && let Some(kind) = shared.over_budget()
    {
        let turn = call.turn.unwrap_or(0);
        shared.held.send_if_modified(|held| {
            let first = held.is_none();
            held.get_or_insert(coder_eval_scripted_model::Hold {
                turn,
                tool_calls_before: 0,
                reason: hold_reason(kind),
            });
            first
        });
        return unanswered_until_close(guard, api, Unanswered::OverBudget(kind)).await;
    }
    let mut held_turn = None;
    if call.kind == CallKind::Main
        && let Some(turn) = call.turn
    {
        // The counted turn: at least the main calls answered before, and not one that a
        // main call under way holds (concurrent calls each count); held past max_turns.
        let mut open = shared.open_turns.lock().unwrap_or_else(|e| e.into_inner());
        let answered = shared.answered_main.load(Ordering::SeqCst) as usize;
        let mut counted = turn.max(answered);
        while open.contains(&counted) {
            counted += 1;
        }
        call.counted_turn = (counted > turn).then_some(counted);
        if shared.hold_from_turn.is_some_and(|n| counted >= n) {
            held_turn = Some(counted);
        } else {
            open.push(counted);
            call.open_turn = Some(counted);
        }
    }
    if let Some(turn) = held_turn {
        call.held = true;
        shared.held.send_if_modified(|held| {
            let first = held.is_none();
            held.get_or_insert(coder_eval_scripted_model::Hold {
                turn,
                // Not known here: only a `max_tool_calls` hold reads it.
                tool_calls_before: 0,
                reason: coder_eval_scripted_model::HoldReason::MaxTurns,
            });
            first
        });
        return unanswered_until_close(guard, api, Unanswered::Held(turn)).await;
    }
    forward(
        shared,
        guard,
        method,
        &path,
        query,
        parts.headers,
        body,
        route,
    )
    .await
}

/// Sends the request upstream and streams the answer back.
#[allow(clippy::too_many_arguments)]
async fn forward(
    shared: Arc<Shared>,
    mut guard: Guard,
    method: Method,
    path: &str,
    query: Option<String>,
    headers: HeaderMap,
    body: Bytes,
    route: Route,
) -> Response {
    let api = route.model_api();
    let family = route
        .credential_family()
        .filter(|&f| route::vendor_allows(&shared.upstream_url, f));
    let creds = &shared.credentials;
    let gemini_key = family == Some(Api::Gemini) && creds.gemini_api_key.is_some();
    let query = query
        .map(|q| {
            if gemini_key {
                q.split('&')
                    .filter(|kv| !kv.starts_with("key="))
                    .collect::<Vec<_>>()
                    .join("&")
            } else {
                q
            }
        })
        .filter(|q| !q.is_empty());
    let url = match &query {
        Some(q) => format!("{}{path}?{q}", shared.upstream_url),
        None => format!("{}{path}", shared.upstream_url),
    };
    // The URL the upstream gets must have the path classified above (belt and braces:
    // `route::check_path` already refused every spelling a URL parser rewrites).
    let parsed = reqwest::Url::parse(&url)
        .map_err(|e| e.to_string())
        .and_then(|u| route::check_url(&shared.upstream_url, path, &u).map(|()| u));
    let url = match parsed {
        Ok(url) => url,
        Err(why) => {
            return refuse(
                guard,
                api,
                400,
                format!("coder-eval gateway: refused, not forwarded: {why}"),
            );
        }
    };
    let mut out = HeaderMap::with_capacity(headers.len() + 1);
    let replace: &[&str] = match family {
        Some(Api::Anthropic)
            if creds.anthropic_api_key.is_some() || creds.anthropic_auth_token.is_some() =>
        {
            &["x-api-key", "authorization"]
        }
        Some(Api::Responses | Api::Chat) if creds.openai_api_key.is_some() => &["authorization"],
        Some(Api::Gemini) if gemini_key => &["x-goog-api-key", "authorization"],
        _ => &[],
    };
    for (name, value) in &headers {
        let n = name.as_str();
        if HOP_BY_HOP.contains(&n) || n == "host" || n == "content-length" || replace.contains(&n) {
            continue;
        }
        if api.is_some() && n == "accept-encoding" {
            continue;
        }
        out.append(name.clone(), value.clone());
    }
    // A model call's answer is asked for in an encoding the gateway reads (for its usage
    // and end): of what the CLI accepts, gzip and deflate are kept, else identity.
    if api.is_some() {
        let accepted = readable_encodings(&headers);
        if let Ok(value) = HeaderValue::from_str(&accepted) {
            out.insert(header::ACCEPT_ENCODING, value);
        }
    }
    let mut set = |name: &'static str, value: String| {
        if let Ok(value) = HeaderValue::from_str(&value) {
            out.insert(HeaderName::from_static(name), value);
        }
    };
    match family {
        Some(Api::Anthropic) => {
            if let Some(key) = &creds.anthropic_api_key {
                set("x-api-key", key.clone());
            } else if let Some(token) = &creds.anthropic_auth_token {
                set("authorization", format!("Bearer {token}"));
            }
        }
        Some(Api::Responses | Api::Chat) => {
            if let Some(key) = &creds.openai_api_key {
                set("authorization", format!("Bearer {key}"));
            }
        }
        Some(Api::Gemini) => {
            if let Some(key) = &creds.gemini_api_key {
                set("x-goog-api-key", key.clone());
            }
        }
        None => {}
    }
    let head = method == Method::HEAD;
    let request = shared.client.request(method, url).headers(out).body(body);
    let mut closing = shared.closing.subscribe();
    let stopper = shared.stopper.clone();
    let sent = tokio::select! {
        sent = request.send() => Some(sent),
        _ = closing.wait_for(|c| *c) => {
            let call = &mut guard.state;
            call.error = Some("the gateway closed before the upstream answered".into());
            return json_response(503, &error_body(api, 503, "coder-eval gateway: closing"));
        }
        () = stopper.stopped(), if api.is_some() => None,
    };
    // The host's stop before the answer began: the upstream request is dropped (its
    // connection closed) and the call waits like one that arrived after the stop.
    let Some(sent) = sent else {
        return unanswered_until_close(guard, api, Unanswered::StoppedUnderWay).await;
    };
    let upstream = match sent {
        Ok(upstream) => upstream,
        Err(e) => {
            // Without the URL: its query may hold a key.
            let message = format!(
                "coder-eval gateway: upstream {} unreachable: {}",
                shared.upstream_shown,
                error_chain(&e.without_url())
            );
            let call = &mut guard.state;
            call.status = Some(502);
            call.error = Some(message.clone());
            call.ended = Some(Instant::now());
            return json_response(502, &error_body(api, 502, &message));
        }
    };
    let status = upstream.status();
    guard.state.status = Some(status.as_u16());
    let mut response = Response::builder().status(status.as_u16());
    let sse = upstream
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"));
    let encoding = upstream
        .headers()
        .get(header::CONTENT_ENCODING)
        .map(|v| v.to_str().unwrap_or("?").to_string());
    if let Some(h) = response.headers_mut() {
        for (name, value) in upstream.headers() {
            if !HOP_BY_HOP.contains(&name.as_str()) {
                h.append(name.clone(), value.clone());
            }
        }
    }
    let keep = shared.keep_bodies;
    // A body that is known to be empty ends now: the server never polls it.
    let empty =
        head || matches!(status.as_u16(), 204 | 304) || upstream.content_length() == Some(0);
    let length = upstream.content_length();
    let mut stream = Passing {
        upstream: Some(upstream),
        length,
        scan: if api.is_some() {
            UsageScan::with_encoding(sse, encoding.as_deref())
        } else {
            UsageScan::off()
        },
        kept: keep.then(Vec::new),
        guard,
        closing,
        done: false,
    };
    if empty {
        stream.end(None);
    }
    let body = futures_util::stream::unfold(stream, |mut s| async move {
        if s.done {
            return None;
        }
        match s.next().await {
            Ok(Some(bytes)) => Some((Ok(bytes), s)),
            Ok(None) => None,
            // An error ends the CLI's response at once: the connection is closed
            // mid-body, so the CLI sees the answer end unfinished.
            Err(message) => Some((Err(std::io::Error::other(message)), s)),
        }
    });
    response
        .body(Body::from_stream(body))
        .unwrap_or_else(|e| json_response(502, &error_body(api, 502, &e.to_string())))
}
