//! The gateway against a misbehaving CLI and upstream (issue 12's trial): paths spelled
//! to be rewritten into a model path, paths off the allow-list, upstream redirects, bodies
//! the gateway cannot read, compressed answers, a CLI that closes once it has the answer,
//! concurrent main calls, and secrets in the upstream URL. Everything on loopback.

use super::*;
use serde_json::{Value, json};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// What the test upstream saw of one request.
#[derive(Debug, Clone)]
struct Seen {
    method: String,
    path: String,
    x_api_key: Option<String>,
    accept_encoding: Option<String>,
}

type Log = Arc<Mutex<Vec<Seen>>>;

/// An upstream on loopback that logs every request and answers with `answer` (given the
/// path); returns its base URL and log.
async fn upstream<F>(answer: F) -> (String, Log, tokio::task::JoinHandle<()>)
where
    F: Fn(&str) -> axum::response::Response + Clone + Send + Sync + 'static,
{
    let log: Log = Arc::default();
    let kept = log.clone();
    let app = axum::Router::new().fallback(move |req: axum::extract::Request| {
        let (log, answer) = (kept.clone(), answer.clone());
        async move {
            let h = req.headers();
            let get = |n: &str| h.get(n).map(|v| v.to_str().unwrap_or("?").to_string());
            log.lock().unwrap().push(Seen {
                method: req.method().to_string(),
                path: req.uri().path().to_string(),
                x_api_key: get("x-api-key"),
                accept_encoding: get("accept-encoding"),
            });
            // The whole request is read before the answer: a server that answers and closes
            // mid-body resets the gateway's upload (a 502 under load, not what is tested).
            let path = req.uri().path().to_string();
            let _ = axum::body::to_bytes(req.into_body(), usize::MAX).await;
            answer(&path)
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let server = tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (url, log, server)
}

fn sse_answer() -> axum::response::Response {
    use axum::response::IntoResponse;
    (
        [("content-type", "text/event-stream")],
        "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":5,\"output_tokens\":1}}}\n\n\
         event: message_delta\ndata: {\"type\":\"message_delta\",\"usage\":{\"output_tokens\":7}}\n\n\
         event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
    )
        .into_response()
}

fn main_call(turn: usize) -> Value {
    let mut messages = vec![json!({"role": "user", "content": "go"})];
    for _ in 0..turn {
        messages.push(json!({"role": "assistant", "content": "ok"}));
        messages.push(json!({"role": "user", "content": "more"}));
    }
    json!({"model": "claude-x", "stream": true, "tools": [{"name": "Bash"}], "messages": messages})
}

async fn keyed_gateway(upstream: String, hold: Option<u32>) -> Gateway {
    let mut config = GatewayConfig::new(upstream);
    config.hold_from_turn = hold;
    config.keep_bodies = true;
    config.credentials = Credentials {
        anthropic_api_key: Some("sk-ant-REAL-123".into()),
        ..Default::default()
    };
    Gateway::start(config).await.unwrap()
}

/// Sends `head` (request line and headers, no blank line) and `body` byte for byte over a
/// raw socket (a client library would normalise the path first) and returns the status
/// and the whole response text.
async fn raw(port: u16, head: &str, body: &[u8]) -> (u16, String) {
    let mut socket = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .unwrap();
    let mut out = format!(
        "{head}\r\nhost: 127.0.0.1\r\nx-api-key: sk-test\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        body.len()
    )
    .into_bytes();
    out.extend_from_slice(body);
    socket.write_all(&out).await.unwrap();
    let mut answer = Vec::new();
    socket.read_to_end(&mut answer).await.unwrap();
    let text = String::from_utf8_lossy(&answer).to_string();
    let status = text
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    (status, text)
}

/// A path spelled so that URL parsing turns it into a model path (backslash, `..`,
/// percent-escapes, `//`, a trailing `/`) is refused with a 400 and never forwarded; a
/// path off the allow-list (Anthropic batches) is forwarded without the real key; after
/// the host's stop an allow-listed keyed path (token counting) is not forwarded at all.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_spelling_of_a_path_reaches_the_upstream_as_a_model_call_or_with_the_key() {
    let (url, log, server) = upstream(|_| sse_answer()).await;
    let gw = keyed_gateway(url, Some(2)).await;
    let t0 = Instant::now();
    let body = main_call(5).to_string();
    for path in [
        "/v1/messages/..\\messages",
        "/v1/messages/%2e%2e/messages",
        "/v1/chat/completions/..\\completions",
        "/v1/x/../messages",
        "/v1//messages",
        "/v1/messages/",
        "/v1beta/models/g%3AstreamGenerateContent",
    ] {
        let (status, text) =
            raw(gw.port(), &format!("POST {path} HTTP/1.1"), body.as_bytes()).await;
        assert_eq!(status, 400, "{path}: {text}");
        assert!(text.contains("refused, not forwarded"), "{path}: {text}");
    }
    assert!(
        log.lock().unwrap().is_empty(),
        "forwarded: {:?}",
        log.lock().unwrap()
    );
    // Off the allow-list: forwarded with the CLI's own (dummy) key, never the real one.
    let (status, _) = raw(gw.port(), "POST /v1/messages/batches HTTP/1.1", b"{}").await;
    assert_eq!(status, 200);
    let batches = log.lock().unwrap()[0].clone();
    assert_eq!(
        (batches.method.as_str(), batches.path.as_str()),
        ("POST", "/v1/messages/batches")
    );
    assert_eq!(batches.x_api_key.as_deref(), Some("sk-test"), "{batches:?}");
    // After the stop, a keyed request is not forwarded.
    gw.stopper().stop();
    let port = gw.port();
    let pending =
        tokio::spawn(
            async move { raw(port, "POST /v1/messages/count_tokens HTTP/1.1", b"{}").await },
        );
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    let calls = gw.shutdown(t0).await;
    assert_eq!(pending.await.unwrap().0, 503);
    assert_eq!(log.lock().unwrap().len(), 1, "{:?}", log.lock().unwrap());
    let refused: Vec<_> = calls.iter().filter(|c| c.refused).collect();
    assert_eq!(refused.len(), 7);
    assert!(
        refused
            .iter()
            .all(|c| !c.forwarded() && c.status == Some(400))
    );
    // Each refusal is a diagnostic of the turn.
    let (mut record, _) = crate::turn::collect::Collector::new(Default::default())
        .finish(crate::turn::finish::TurnEnd::default());
    apply_to_turn(&mut record, &calls, &Default::default());
    let refusals = record
        .diagnostics
        .iter()
        .filter(|d| d.kind == "gateway_refused")
        .count();
    assert!(refusals >= 1, "{:?}", record.diagnostics);
    server.abort();
}

/// An upstream redirect is passed back to the CLI as sent, never followed: the real key
/// never goes to the redirect's target.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstream_redirect_goes_back_to_the_cli_and_is_never_followed() {
    use axum::response::IntoResponse;
    let (other, other_log, other_server) = upstream(|_| sse_answer()).await;
    let target = format!("{other}/v1/messages");
    let (url, log, server) = upstream(move |_| {
        (
            axum::http::StatusCode::TEMPORARY_REDIRECT,
            [("location", target.clone())],
        )
            .into_response()
    })
    .await;
    let gw = keyed_gateway(url, None).await;
    let t0 = Instant::now();
    let (status, text) = raw(
        gw.port(),
        "POST /v1/messages HTTP/1.1",
        main_call(0).to_string().as_bytes(),
    )
    .await;
    assert_eq!(status, 307, "{text}");
    assert!(
        text.to_lowercase().contains(&format!("location: {other}")),
        "{text}"
    );
    assert_eq!(log.lock().unwrap().len(), 1);
    assert!(
        other_log.lock().unwrap().is_empty(),
        "the redirect was followed: {:?}",
        other_log.lock().unwrap()
    );
    let calls = gw.shutdown(t0).await;
    assert_eq!(calls[0].status, Some(307));
    server.abort();
    other_server.abort();
}

/// A model call whose body the gateway cannot read (an encoding it does not inflate, not
/// JSON) is refused (4xx), never forwarded uncounted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_call_the_gateway_cannot_read_is_refused_not_forwarded() {
    let (url, log, server) = upstream(|_| sse_answer()).await;
    let gw = keyed_gateway(url, Some(1)).await;
    let t0 = Instant::now();
    let body = main_call(0).to_string();
    let (status, text) = raw(
        gw.port(),
        "POST /v1/messages HTTP/1.1\r\ncontent-encoding: zstd",
        body.as_bytes(),
    )
    .await;
    assert_eq!(status, 415, "{text}");
    assert!(text.contains("zstd"), "{text}");
    let (status, text) = raw(gw.port(), "POST /v1/messages HTTP/1.1", b"not json").await;
    assert_eq!(status, 400, "{text}");
    // A gzipped one is read, classified and forwarded as sent.
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(&mut gz, body.as_bytes()).unwrap();
    let gz = gz.finish().unwrap();
    let (status, _) = raw(
        gw.port(),
        "POST /v1/messages HTTP/1.1\r\ncontent-encoding: gzip",
        &gz,
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(log.lock().unwrap().len(), 1, "{:?}", log.lock().unwrap());
    let calls = gw.shutdown(t0).await;
    assert!(calls[0].refused && calls[1].refused, "{calls:?}");
    assert_eq!(calls[2].kind, CallKind::Main);
    server.abort();
}

/// A gzipped answer reaches the CLI byte for byte and its usage is read; an answer in an
/// encoding the gateway does not read keeps its usage unknown, said in the record; a
/// model call asks upstream only for encodings the gateway reads.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_compressed_answer_passes_as_sent_and_its_usage_is_read() {
    use axum::response::IntoResponse;
    let json = br#"{"id":"m","usage":{"input_tokens":11,"output_tokens":22}}"#;
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(&mut gz, json).unwrap();
    let gz = gz.finish().unwrap();
    let sent = gz.clone();
    let (url, log, server) = upstream(move |path| {
        let coding = if path.ends_with("/messages") {
            "gzip"
        } else {
            "br"
        };
        (
            [
                ("content-type", "application/json"),
                ("content-encoding", coding),
            ],
            sent.clone(),
        )
            .into_response()
    })
    .await;
    let gw = keyed_gateway(url, None).await;
    let t0 = Instant::now();
    let r = reqwest::Client::builder()
        .no_proxy()
        .build()
        .unwrap()
        .post(format!("{}/v1/messages", gw.base_url()))
        .header("accept-encoding", "br, gzip;q=0.9, zstd")
        .body(main_call(0).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(r.bytes().await.unwrap().to_vec(), gz, "passed as sent");
    assert_eq!(
        log.lock().unwrap()[0].accept_encoding.as_deref(),
        Some("gzip")
    );
    let r = reqwest::Client::builder()
        .no_proxy()
        .build()
        .unwrap()
        .post(format!("{}/v1/chat/completions", gw.base_url()))
        .body(json!({"model": "g", "messages": []}).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(r.bytes().await.unwrap().to_vec(), gz);
    let calls = gw.shutdown(t0).await;
    let usage = calls[0].usage.unwrap();
    assert_eq!(
        (usage.input_tokens, usage.output_tokens),
        (Some(11), Some(22))
    );
    assert_eq!(calls[1].usage, None);
    assert!(
        calls[1]
            .error
            .as_deref()
            .unwrap()
            .contains("usage is unknown"),
        "{:?}",
        calls[1]
    );
    let (mut record, _) = crate::turn::collect::Collector::new(Default::default())
        .finish(crate::turn::finish::TurnEnd::default());
    apply_to_turn(&mut record, &calls, &Default::default());
    assert!(
        record
            .diagnostics
            .iter()
            .any(|d| d.kind == "gateway_usage_unknown"),
        "{:?}",
        record.diagnostics
    );
    server.abort();
}

/// A CLI that closes its connection once it has the whole answer (the upstream's final
/// chunk comes late) still had it answered: re-sending the same history cannot escape
/// `max_turns`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cli_that_closes_after_the_whole_answer_cannot_escape_max_turns() {
    use axum::response::IntoResponse;
    let (url, log, server) = upstream(|_| {
        let events = futures_util::stream::unfold(0, |n| async move {
            match n {
                0 => Some((
                    Ok::<_, std::io::Error>(
                        "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":5}}}\n\n\
                         event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
                    ),
                    1,
                )),
                // The end of the body never comes while the CLI reads.
                _ => {
                    std::future::pending::<()>().await;
                    None
                }
            }
        });
        (
            [("content-type", "text/event-stream")],
            axum::body::Body::from_stream(events),
        )
            .into_response()
    })
    .await;
    let gw = keyed_gateway(url, Some(2)).await;
    let mut held = gw.held();
    let t0 = Instant::now();
    let client = reqwest::Client::builder().no_proxy().build().unwrap();
    let body = main_call(0).to_string();
    for _ in 0..2 {
        let mut r = client
            .post(format!("{}/v1/messages", gw.base_url()))
            .body(body.clone())
            .send()
            .await
            .unwrap();
        let mut got = Vec::new();
        while !String::from_utf8_lossy(&got).contains("message_stop") {
            got.extend_from_slice(&r.chunk().await.unwrap().unwrap());
        }
        drop(r);
    }
    let base = gw.base_url();
    let third = tokio::spawn(async move {
        client
            .post(format!("{base}/v1/messages"))
            .body(body)
            .send()
            .await
            .map(|r| r.status().as_u16())
    });
    // A guard against a hang (a forwarded call is never held), not a timing assert.
    tokio::time::timeout(
        std::time::Duration::from_secs(20),
        held.wait_for(Option::is_some),
    )
    .await
    .expect("the third call was held")
    .unwrap();
    let calls = gw.shutdown(t0).await;
    assert_eq!(third.await.unwrap().unwrap(), 503);
    assert_eq!(log.lock().unwrap().len(), 2, "the third was not forwarded");
    let counted: Vec<_> = calls.iter().map(|c| c.turn_counted()).collect();
    assert_eq!(counted, [Some(0), Some(1), Some(2)]);
    server.abort();
}

/// Main calls under way at the same time each count as a turn (a CLI's parallel calls, or
/// sub-agents, cannot share one): with `max_turns: 2`, the third concurrent call is held.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_main_calls_each_count_and_are_held_past_max_turns() {
    use axum::response::IntoResponse;
    let (release, released) = tokio::sync::watch::channel(false);
    let arrived = Arc::new(AtomicU64::new(0));
    let count = arrived.clone();
    let app = axum::Router::new().fallback(move || {
        let (mut released, count) = (released.clone(), count.clone());
        async move {
            count.fetch_add(1, Ordering::SeqCst);
            let _ = released.wait_for(|r| *r).await;
            sse_answer().into_response()
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let server = tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    let gw = keyed_gateway(url, Some(2)).await;
    let mut held = gw.held();
    let t0 = Instant::now();
    let mut pending = Vec::new();
    for _ in 0..3 {
        let base = gw.base_url();
        pending.push(tokio::spawn(async move {
            reqwest::Client::builder()
                .no_proxy()
                .build()
                .unwrap()
                .post(format!("{base}/v1/messages"))
                .body(main_call(0).to_string())
                .send()
                .await
                .unwrap()
                .status()
                .as_u16()
        }));
    }
    tokio::time::timeout(
        std::time::Duration::from_secs(20),
        held.wait_for(Option::is_some),
    )
    .await
    .expect("one of three concurrent calls was held")
    .unwrap();
    assert_eq!(held.borrow().as_ref().map(|h| h.turn), Some(2));
    while arrived.load(Ordering::SeqCst) < 2 {
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    release.send_replace(true);
    // The two forwarded calls end (answered) before the gateway closes.
    while gw.calls(t0).len() < 2 {
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    let calls = gw.shutdown(t0).await;
    let mut statuses: Vec<u16> = Vec::new();
    for p in pending {
        statuses.push(p.await.unwrap());
    }
    statuses.sort();
    assert_eq!(statuses, [200, 200, 503]);
    assert_eq!(arrived.load(Ordering::SeqCst), 2);
    let mut counted: Vec<_> = calls.iter().map(|c| c.turn_counted()).collect();
    counted.sort();
    assert_eq!(counted, [Some(0), Some(1), Some(2)]);
    server.abort();
}

/// A password in the upstream URL is never shown: not in the 502 the CLI gets, not in
/// the record; nor is the request's query (it may hold a key).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_upstream_password_and_the_query_stay_out_of_error_text() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let gw = Gateway::start(GatewayConfig::new(format!(
        "http://user:pw-SECRET-xyz@127.0.0.1:{port}"
    )))
    .await
    .unwrap();
    assert!(!gw.upstream().contains("SECRET"), "{}", gw.upstream());
    assert!(!format!("{gw:?}").contains("SECRET"));
    let t0 = Instant::now();
    let (status, text) = raw(
        gw.port(),
        "POST /v1beta/models/g:streamGenerateContent?alt=sse&key=CLI-KEY-789 HTTP/1.1",
        b"{\"contents\":[]}",
    )
    .await;
    assert_eq!(status, 502, "{text}");
    assert!(text.contains("[redacted]"), "{text}");
    let calls = gw.shutdown(t0).await;
    let all = format!("{text}{}", serde_json::to_string(&calls).unwrap());
    assert!(!all.contains("SECRET"), "{all}");
    assert!(!all.contains("CLI-KEY"), "{all}");
}

/// With `--gateway-bodies`, a request body over the cap is kept cut to it (as responses
/// are), not whole.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kept_request_body_is_capped_like_a_response() {
    let (url, _log, server) = upstream(|_| sse_answer()).await;
    let gw = keyed_gateway(url, None).await;
    let t0 = Instant::now();
    let mut body = main_call(0);
    body["pad"] = json!("x".repeat(3 * BODY_KEEP_BYTES));
    let (status, _) = raw(
        gw.port(),
        "POST /v1/messages HTTP/1.1",
        body.to_string().as_bytes(),
    )
    .await;
    let calls = gw.shutdown(t0).await;
    assert_eq!(status, 200, "{:?}", calls[0].error);
    let kept = calls[0].request_body.as_ref().unwrap().to_string();
    assert!(
        kept.len() < BODY_KEEP_BYTES + 1024,
        "{} bytes kept",
        kept.len()
    );
    assert!(
        kept.contains("request body cut"),
        "{}",
        &kept[kept.len() - 200..]
    );
    server.abort();
}

#[test]
fn userinfo_is_redacted_whole() {
    assert_eq!(
        redact_userinfo("https://u:p@ss@h.example:8/x?q=1"),
        "https://[redacted]@h.example:8/x?q=1"
    );
    assert_eq!(
        redact_userinfo("http://127.0.0.1:9/a@b"),
        "http://127.0.0.1:9/a@b"
    );
}

/// An HTTP 200 answer that fails mid-stream (Anthropic `event: error`, `overloaded_error`)
/// is no answered turn: the CLI's retry keeps its turn, so with `max_turns: 2` the next
/// real turn is forwarded, not held; the failed call is marked `failed` with what was seen,
/// and its reported usage is still read (it counts toward the budgets).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_failing_mid_stream_is_not_a_turn_and_its_retry_keeps_its_turn() {
    use axum::response::IntoResponse;
    let served = Arc::new(AtomicU64::new(0));
    let (url, log, server) = upstream(move |_| {
        if served.fetch_add(1, Ordering::SeqCst) > 0 {
            return sse_answer();
        }
        (
            [("content-type", "text/event-stream")],
            "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":10,\"output_tokens\":1}}}\n\n\
             event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n",
        )
            .into_response()
    })
    .await;
    let gw = keyed_gateway(url, Some(2)).await;
    let t0 = Instant::now();
    let client = reqwest::Client::builder().no_proxy().build().unwrap();
    for turn in [0, 0, 1] {
        let r = client
            .post(format!("{}/v1/messages", gw.base_url()))
            .body(main_call(turn).to_string())
            .send()
            .await
            .unwrap();
        assert_eq!(r.status().as_u16(), 200, "turn {turn}");
        r.bytes().await.unwrap();
    }
    let calls = gw.shutdown(t0).await;
    assert_eq!(log.lock().unwrap().len(), 3, "all three were forwarded");
    let counted: Vec<_> = calls.iter().map(|c| c.turn_counted()).collect();
    assert_eq!(counted, [Some(0), Some(0), Some(1)]);
    assert!(calls.iter().all(|c| !c.held));
    let failed: Vec<_> = calls.iter().map(|c| c.failed).collect();
    assert_eq!(failed, [true, false, false]);
    assert!(
        calls[0]
            .error
            .as_deref()
            .unwrap()
            .contains("overloaded_error")
    );
    assert_eq!(calls[0].usage.unwrap().input_tokens, Some(10));
    server.abort();
}

/// A call held for a token budget sets `gateway.held` (as a `max_turns` hold does), and a
/// held run's stream count (which the host's stop made from the held call) fires no
/// `gateway_turns_disagree` diagnostic.
#[test]
fn a_budget_hold_sets_held_and_a_held_run_fires_no_disagreement() {
    let call = |seq: u64, turn: u32, held: bool, over: Option<&str>| -> ModelCall {
        let us = seq * 1_000_000;
        let mut v = json!({
            "seq": seq, "us": us, "method": "POST", "path": "/v1/messages",
            "api": "anthropic", "kind": "main", "turn": turn, "stream": true,
            "status": 200, "first_byte_us": us + 10, "end_us": us + 20,
            "usage": {"input_tokens": 10, "output_tokens": 30}, "response_bytes": 100
        });
        if held {
            let o = v.as_object_mut().unwrap();
            o.insert("held".into(), json!(true));
            for k in ["status", "first_byte_us", "end_us", "usage"] {
                o.remove(k);
            }
            o.insert("response_bytes".into(), json!(0));
            if let Some(kind) = over {
                o.insert("over_budget".into(), json!(kind));
            }
        }
        serde_json::from_value(v).unwrap()
    };
    let record = |num_turns| {
        let (mut r, _) = crate::turn::collect::Collector::new(Default::default())
            .finish(crate::turn::finish::TurnEnd::default());
        r.num_turns = num_turns;
        r
    };
    let budgets = crate::limits::budget::Budgets::default();
    // Held for a budget after two answered turns; the host's stop made the stream show 3.
    let calls = [
        call(1, 0, false, None),
        call(2, 1, false, None),
        call(3, 2, true, Some("max_output_tokens")),
    ];
    let mut r = record(3);
    apply_to_turn(&mut r, &calls, &budgets);
    let g = r.gateway.as_ref().unwrap();
    assert!(g.held, "a budget hold is a hold");
    assert_eq!(g.num_turns, 2);
    assert!(
        !r.diagnostics
            .iter()
            .any(|d| d.kind == "gateway_turns_disagree"),
        "{:?}",
        r.diagnostics
    );
    // A max_turns hold: the stream count came from the held call (6), no diagnostic.
    let calls = [call(1, 0, false, None), call(2, 5, true, None)];
    let mut r = record(6);
    apply_to_turn(&mut r, &calls, &budgets);
    assert!(r.gateway.as_ref().unwrap().held);
    assert!(
        !r.diagnostics
            .iter()
            .any(|d| d.kind == "gateway_turns_disagree")
    );
    // No hold: a disagreement is still said.
    let calls = [call(1, 0, false, None), call(2, 1, false, None)];
    let mut r = record(3);
    apply_to_turn(&mut r, &calls, &budgets);
    assert!(
        r.diagnostics
            .iter()
            .any(|d| d.kind == "gateway_turns_disagree")
    );
}

/// A token budget under the gateway with answers that report no usage is said (a
/// `gateway_budget_unchecked` diagnostic naming how many calls), never silent; no budget,
/// or every answer's usage read, says nothing.
#[test]
fn a_token_budget_that_could_not_be_counted_is_said() {
    let call = |seq: u64, usage: bool| -> ModelCall {
        let us = seq * 1_000_000;
        let mut v = json!({
            "seq": seq, "us": us, "method": "POST", "path": "/v1/chat/completions",
            "api": "chat", "kind": "main", "turn": seq - 1, "stream": true,
            "status": 200, "first_byte_us": us + 10, "end_us": us + 20, "response_bytes": 100
        });
        if usage {
            v["usage"] = json!({"input_tokens": 1, "output_tokens": 1});
        }
        serde_json::from_value(v).unwrap()
    };
    let unchecked = |calls: &[ModelCall], budgets: &crate::limits::budget::Budgets| {
        let (mut r, _) = crate::turn::collect::Collector::new(Default::default())
            .finish(crate::turn::finish::TurnEnd::default());
        r.num_turns = calls.len() as u32;
        apply_to_turn(&mut r, calls, budgets);
        r.diagnostics
            .into_iter()
            .filter(|d| d.kind == "gateway_budget_unchecked")
            .map(|d| d.message)
            .collect::<Vec<_>>()
    };
    let budget = crate::limits::budget::Budgets {
        max_output_tokens: Some(5),
        ..Default::default()
    };
    let none = [call(1, false), call(2, false), call(3, true)];
    let said = unchecked(&none, &budget);
    assert_eq!(said.len(), 1, "{said:?}");
    assert!(said[0].contains("2 answered model call(s)"), "{said:?}");
    assert!(unchecked(&none, &Default::default()).is_empty());
    assert!(unchecked(&[call(1, true)], &budget).is_empty());
}
