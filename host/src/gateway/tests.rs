//! The gateway against real upstreams on loopback: the scripted model (byte-identical
//! answers through the gateway and direct, on the four APIs, streamed and not), a header
//! echo (credentials), a closed port, a stalled socket.

use super::*;
use crate::limits::budget::{BudgetKind, Budgets};
use coder_eval_scripted_model::{Script, ScriptedModel, ServerConfig};
use serde_json::{Value, json};
use std::time::Instant;

const SCRIPT: &str = "name: gw\nreplies:\n  - text: first\n    tool_calls:\n      - {name: Bash, arguments: {command: ls}}\n  - text: second\n";

async fn scripted(yaml: &str) -> ScriptedModel {
    let script = Script::from_str(yaml, "gw.yaml", true).unwrap();
    ScriptedModel::start(ServerConfig::new(script, "/tmp/ws"))
        .await
        .unwrap()
}

async fn gateway(upstream: String, hold: Option<u32>) -> Gateway {
    let mut config = GatewayConfig::new(upstream);
    config.hold_from_turn = hold;
    config.keep_bodies = true;
    Gateway::start(config).await.unwrap()
}

fn client() -> reqwest::Client {
    reqwest::Client::builder().no_proxy().build().unwrap()
}

/// (status, content-type, body) of a POST.
async fn post(base: &str, path: &str, body: &Value) -> (u16, String, Vec<u8>) {
    let r = client()
        .post(format!("{base}{path}"))
        .header("content-type", "application/json")
        .header("x-api-key", "sk-test")
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    let status = r.status().as_u16();
    let ct = r
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_string())
        .unwrap_or_default();
    (status, ct, r.bytes().await.unwrap().to_vec())
}

/// One request per API, streamed and not; `turn` assistant turns already in each.
fn requests(turn: usize) -> Vec<(&'static str, Value)> {
    let msgs = |role: &str| {
        let mut m = vec![json!({"role": "user", "content": "go"})];
        for _ in 0..turn {
            m.push(json!({"role": role, "content": "ok"}));
            m.push(json!({"role": "user", "content": "more"}));
        }
        m
    };
    let mut input = vec![json!({"type": "message", "role": "user", "content": "go"})];
    for _ in 0..turn {
        input.push(json!({"type": "message", "role": "assistant", "content": "ok"}));
        input.push(json!({"type": "message", "role": "user", "content": "more"}));
    }
    let contents: Vec<Value> = msgs("model")
        .into_iter()
        .map(|m| json!({"role": m["role"], "parts": [{"text": "x"}]}))
        .collect();
    let mut out = Vec::new();
    for stream in [true, false] {
        out.push((
            "/v1/messages",
            json!({"model": "claude-x", "stream": stream, "tools": [{"name": "Bash"}], "messages": msgs("assistant")}),
        ));
        out.push((
            "/v1/responses",
            json!({"model": "gpt-x", "stream": stream, "tools": [{"type": "function", "name": "shell"}], "input": input}),
        ));
        out.push((
            "/v1/chat/completions",
            json!({"model": "gpt-x", "stream": stream, "stream_options": {"include_usage": true},
                   "tools": [{"type": "function", "function": {"name": "bash"}}], "messages": msgs("assistant")}),
        ));
    }
    out.push((
        "/v1beta/models/gemini-x:streamGenerateContent?alt=sse",
        json!({"tools": [{"functionDeclarations": [{"name": "run_shell_command"}]}], "contents": contents}),
    ));
    out.push((
        "/v1beta/models/gemini-x:generateContent",
        json!({"tools": [{"functionDeclarations": [{"name": "run_shell_command"}]}], "contents": contents}),
    ));
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_are_byte_identical_through_the_gateway_on_every_api() {
    let direct = scripted(SCRIPT).await;
    let behind = scripted(SCRIPT).await;
    let gw = gateway(behind.base_url(), None).await;
    let t0 = Instant::now();
    let mut n = 0;
    for turn in [0, 1] {
        for (path, body) in requests(turn) {
            let a = post(&direct.base_url(), path, &body).await;
            let b = post(&gw.base_url(), path, &body).await;
            assert_eq!(a.0, b.0, "{path} status");
            assert_eq!(a.1, b.1, "{path} content-type");
            assert_eq!(
                String::from_utf8_lossy(&a.2),
                String::from_utf8_lossy(&b.2),
                "{path} body"
            );
            n += 1;
        }
    }
    let calls = gw.shutdown(t0).await;
    assert_eq!(calls.len(), n);
    assert_eq!(
        calls.iter().map(|c| c.seq).collect::<Vec<_>>(),
        (1..=n as u64).collect::<Vec<_>>()
    );
    // Every streamed or JSON answer of the scripted model reports usage, and its bytes.
    for c in &calls {
        assert_eq!(c.status, Some(200), "{c:?}");
        assert!(c.usage.is_some_and(|u| u.input_tokens.is_some()), "{c:?}");
        assert!(
            c.first_byte_us.is_some() && c.end_us >= c.first_byte_us,
            "{c:?}"
        );
        assert!(c.first_byte_us >= Some(c.us));
        assert!(c.response_bytes > 0);
        assert!(c.request_body.is_some() && c.response_body.is_some());
    }
    let kinds: Vec<CallKind> = calls.iter().map(|c| c.kind).collect();
    assert_eq!(kinds.iter().filter(|k| **k == CallKind::Side).count(), 2);
    assert_eq!(
        calls
            .iter()
            .filter(|c| c.kind == CallKind::Main)
            .map(|c| c.turn)
            .collect::<Vec<_>>(),
        [vec![Some(0); 7], vec![Some(1); 7]].concat()
    );
    assert_eq!(calls[0].model.as_deref(), Some("claude-x"));
    assert_eq!(calls[6].model.as_deref(), Some("gemini-x"));
    // What the scripted model saw is what the CLI sent.
    assert_eq!(behind.requests().len(), n);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn call_past_max_turns_is_held_never_forwarded_and_answered_503_at_close() {
    let behind = scripted(SCRIPT).await;
    let gw = gateway(behind.base_url(), Some(1)).await;
    let mut held = gw.held();
    let t0 = Instant::now();
    let (path, first) = requests(0).remove(0);
    assert_eq!(post(&gw.base_url(), path, &first).await.0, 200);
    // A side request at any turn passes.
    let side = json!({"model": "m", "messages": [{"role": "user", "content": "title"}]});
    assert_eq!(post(&gw.base_url(), path, &side).await.0, 200);
    let (_, second) = requests(1).remove(0);
    let base = gw.base_url();
    let pending = tokio::spawn(async move { post(&base, "/v1/messages", &second).await });
    held.wait_for(Option::is_some).await.unwrap();
    assert_eq!(held.borrow().as_ref().map(|h| h.turn), Some(1));
    assert!(!pending.is_finished());
    let calls = gw.shutdown(t0).await;
    let (status, _, body) = pending.await.unwrap();
    assert_eq!(status, 503);
    let body: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(body["type"], "error", "vendor-shaped: {body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("call 2 was held")
    );
    // Never forwarded: the scripted model saw the first call and the side request only.
    assert_eq!(behind.requests().len(), 2);
    let last = calls.last().unwrap();
    assert!(
        last.held && last.turn == Some(1) && last.status == Some(503),
        "{last:?}"
    );
    assert_eq!(last.first_byte_us, None);
}

/// Once the host stops the run ([`Gateway::stopper`] tripped), no model call goes upstream
/// or is answered while the gateway runs: a main call and a side request alike wait, get
/// `503` at close, and their records say the host stopped the run (not a held call, not
/// a turn).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_model_call_is_forwarded_after_the_host_stops_the_run() {
    let behind = scripted(SCRIPT).await;
    let gw = gateway(behind.base_url(), None).await;
    let t0 = Instant::now();
    let (path, first) = requests(0).remove(0);
    assert_eq!(post(&gw.base_url(), path, &first).await.0, 200);
    gw.stopper().stop();
    let (_, second) = requests(1).remove(0);
    let side = json!({"model": "m", "messages": [{"role": "user", "content": "title"}]});
    let base = gw.base_url();
    let pending = [second, side].map(|body| {
        let base = base.clone();
        tokio::spawn(async move { post(&base, "/v1/messages", &body).await })
    });
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    assert!(
        pending.iter().all(|p| !p.is_finished()),
        "answered after the stop"
    );
    let calls = gw.shutdown(t0).await;
    for p in pending {
        let (status, _, body) = p.await.unwrap();
        assert_eq!(status, 503);
        let body: Value = serde_json::from_slice(&body).unwrap();
        assert!(
            body["error"]["message"]
                .as_str()
                .unwrap()
                .contains("the host stopped the run"),
            "{body}"
        );
    }
    // Never forwarded: the scripted model saw the first call only.
    assert_eq!(behind.requests().len(), 1);
    assert_eq!(calls.len(), 3);
    for c in &calls[1..] {
        assert!(c.stopped && !c.held && c.status == Some(503), "{c:?}");
        assert!(!c.cut && !c.forwarded(), "{c:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upstream_429_and_5xx_pass_through_with_their_bodies() {
    let yaml = "name: e\nreplies:\n  - http_error: {status: 429, message: slow down, times: 1}\n    text: ok\n  - http_error: {status: 529, message: overloaded}\n";
    let direct = scripted(yaml).await;
    let behind = scripted(yaml).await;
    let gw = gateway(behind.base_url(), None).await;
    let t0 = Instant::now();
    let (path, body) = requests(0).remove(0);
    for turn_body in [body.clone(), body.clone(), requests(1).remove(0).1] {
        let a = post(&direct.base_url(), path, &turn_body).await;
        let b = post(&gw.base_url(), path, &turn_body).await;
        assert_eq!((a.0, &a.2), (b.0, &b.2));
    }
    let calls = gw.shutdown(t0).await;
    let statuses: Vec<_> = calls.iter().map(|c| c.status).collect();
    assert_eq!(statuses, [Some(429), Some(200), Some(529)]);
    // The retry of call 1 is the same turn: one turn, not two.
    assert_eq!(calls[0].turn, calls[1].turn);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connection_refused_is_a_502_naming_the_upstream_and_the_cause() {
    // A port that was just free: nothing listens there.
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let upstream = format!("http://127.0.0.1:{port}");
    let gw = gateway(upstream.clone(), None).await;
    let t0 = Instant::now();
    let (path, body) = requests(0).remove(0);
    let (status, _, bytes) = post(&gw.base_url(), path, &body).await;
    assert_eq!(status, 502);
    let v: Value = serde_json::from_slice(&bytes).unwrap();
    let message = v["error"]["message"].as_str().unwrap().to_string();
    assert!(message.contains(&upstream), "{message}");
    assert!(message.to_lowercase().contains("refused"), "{message}");
    let calls = gw.shutdown(t0).await;
    assert_eq!(calls[0].status, Some(502));
    assert_eq!(calls[0].error.as_deref(), Some(message.as_str()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_upstream_is_cut_when_the_gateway_closes() {
    // Accepts, reads, never answers.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let upstream = format!("http://{}", listener.local_addr().unwrap());
    let stall = tokio::spawn(async move {
        let mut kept = Vec::new();
        loop {
            let (socket, _) = listener.accept().await.unwrap();
            kept.push(socket);
        }
    });
    let gw = gateway(upstream, None).await;
    let t0 = Instant::now();
    let base = gw.base_url();
    let pending = tokio::spawn(async move {
        let (path, body) = requests(0).remove(0);
        post(&base, path, &body).await
    });
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert!(!pending.is_finished(), "the upstream never answers");
    let closed = Instant::now();
    let calls = gw.shutdown(t0).await;
    assert!(closed.elapsed() < std::time::Duration::from_secs(2));
    assert_eq!(pending.await.unwrap().0, 503);
    assert_eq!(calls.len(), 1);
    assert!(
        calls[0]
            .error
            .as_deref()
            .unwrap()
            .contains("before the upstream answered")
    );
    assert_eq!(calls[0].status, None);
    stall.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn credentials_replace_the_cli_dummy_key_and_never_reach_a_record() {
    // An upstream that answers with the headers it received.
    async fn echo(req: axum::extract::Request) -> String {
        let h = req.headers();
        let get = |n: &str| h.get(n).map(|v| v.to_str().unwrap().to_string());
        json!({"x-api-key": get("x-api-key"), "authorization": get("authorization"),
               "query": req.uri().query(), "usage": {"input_tokens": 1}})
        .to_string()
    }
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let upstream = format!("http://{}", listener.local_addr().unwrap());
    let server = tokio::spawn(async move {
        axum::serve(listener, axum::Router::new().fallback(echo))
            .await
            .unwrap()
    });
    let mut config = GatewayConfig::new(upstream);
    config.keep_bodies = true;
    config.credentials = Credentials {
        anthropic_api_key: Some("sk-ant-REAL-123".into()),
        gemini_api_key: Some("AIza-REAL-456".into()),
        ..Default::default()
    };
    let gw = Gateway::start(config).await.unwrap();
    let t0 = Instant::now();
    let (path, body) = requests(0).remove(0);
    let (_, _, bytes) = post(&gw.base_url(), path, &body).await;
    let seen: Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(seen["x-api-key"], "sk-ant-REAL-123");
    assert_eq!(seen["authorization"], Value::Null);
    let gem = "/v1beta/models/g:generateContent?key=AIza-CLI&alt=json";
    let (_, _, bytes) = post(&gw.base_url(), gem, &json!({})).await;
    let seen: Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(seen["query"], "alt=json", "the CLI's key is dropped");
    let calls = gw.shutdown(t0).await;
    let text = serde_json::to_string(&calls).unwrap();
    assert!(!text.contains("REAL"), "a secret reached a record: {text}");
    assert!(text.contains("[redacted]"), "{text}");
    assert!(!text.contains("key=AIza"), "{text}");
    server.abort();
}

#[tokio::test]
async fn a_bad_upstream_url_is_refused_at_start() {
    let err = Gateway::start(GatewayConfig::new("api.anthropic.com"))
        .await
        .unwrap_err();
    assert!(matches!(err, GatewayError::Upstream(_)), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn other_requests_pass_through_and_end_cleanly() {
    let direct = scripted(SCRIPT).await;
    let behind = scripted(SCRIPT).await;
    let gw = gateway(behind.base_url(), None).await;
    let t0 = Instant::now();
    let get = |base: String| async move {
        let r = client()
            .get(format!("{base}/v1/models"))
            .send()
            .await
            .unwrap();
        (r.status().as_u16(), r.bytes().await.unwrap())
    };
    assert_eq!(get(direct.base_url()).await, get(gw.base_url()).await);
    let head = client()
        .head(format!("{}/v1/anything", gw.base_url()))
        .send()
        .await
        .unwrap();
    assert_eq!(head.status().as_u16(), 200);
    let count = post(
        &gw.base_url(),
        "/v1/messages/count_tokens",
        &json!({"messages": []}),
    )
    .await;
    assert_eq!(count.0, 200);
    let calls = gw.shutdown(t0).await;
    assert_eq!(calls.len(), 3);
    for c in &calls {
        assert_eq!(c.kind, CallKind::Other, "{c:?}");
        assert_eq!((c.status, c.error.as_deref()), (Some(200), None), "{c:?}");
        assert!(c.end_us.is_some(), "{c:?}");
        assert_eq!(c.usage, None, "not a model call: not read");
    }
}

/// An upstream that streams an SSE answer without end, one event every 10 ms, counting the
/// events it produced and saying when its stream was dropped (the gateway stopped reading).
async fn endless_upstream() -> (
    String,
    Arc<std::sync::atomic::AtomicU64>,
    tokio::sync::watch::Receiver<bool>,
    tokio::task::JoinHandle<()>,
) {
    struct Dropped(tokio::sync::watch::Sender<bool>);
    impl Drop for Dropped {
        fn drop(&mut self) {
            self.0.send_replace(true);
        }
    }
    let produced = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let (dropped_tx, dropped) = tokio::sync::watch::channel(false);
    let dropped_tx = Arc::new(dropped_tx);
    let (count, tx) = (produced.clone(), dropped_tx.clone());
    let app = axum::Router::new().fallback(move || {
        let (count, tx) = (count.clone(), tx.clone());
        async move {
            let guard = Dropped((*tx).clone());
            let events = futures_util::stream::unfold((guard, count), |(guard, count)| async move {
                tokio::time::sleep(std::time::Duration::from_millis(10)).await;
                count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let event = "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"delta\":{\"type\":\"text_delta\",\"text\":\"la\"}}\n\n";
                Some((Ok::<_, std::io::Error>(event), (guard, count)))
            });
            (
                [("content-type", "text/event-stream")],
                axum::body::Body::from_stream(events),
            )
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let upstream = format!("http://{}", listener.local_addr().unwrap());
    let server = tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (upstream, produced, dropped, server)
}

/// An answer streaming when the host stops the run is cut at once: the CLI's response
/// ends unfinished while the gateway still runs, the upstream is read no further (its
/// stream dropped), and the record says `stopped` with the bytes forwarded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_streaming_when_the_host_stops_is_cut_and_read_no_further() {
    let (upstream, produced, mut dropped, server) = endless_upstream().await;
    let gw = gateway(upstream, None).await;
    let t0 = Instant::now();
    let (path, body) = requests(0).remove(0);
    let mut response = client()
        .post(format!("{}{path}", gw.base_url()))
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 200);
    let mut received = 0u64;
    for _ in 0..3 {
        received += response.chunk().await.unwrap().unwrap().len() as u64;
    }
    gw.stopper().stop();
    // The CLI's response ends (unfinished) while the gateway runs: no close needed. A
    // guard against a hang, not a timing assert: the stream never ends by itself.
    let ended = tokio::time::timeout(std::time::Duration::from_secs(20), async {
        loop {
            match response.chunk().await {
                Ok(Some(bytes)) => received += bytes.len() as u64,
                Ok(None) => return false,
                Err(_) => return true,
            }
        }
    })
    .await;
    assert_eq!(
        ended,
        Ok(true),
        "the CLI's stream must end cut, not cleanly"
    );
    tokio::time::timeout(std::time::Duration::from_secs(20), dropped.wait_for(|d| *d))
        .await
        .expect("the gateway stopped reading the upstream")
        .unwrap();
    let calls = gw.shutdown(t0).await;
    assert_eq!(calls.len(), 1);
    let c = &calls[0];
    assert!(c.stopped && c.cut && c.forwarded(), "{c:?}");
    assert!(!c.held && c.status == Some(200), "{c:?}");
    assert!(c.end_us.is_some(), "{c:?}");
    assert_eq!(c.response_bytes, received, "forwarded = what the CLI got");
    assert!(
        c.error
            .as_deref()
            .unwrap()
            .contains("the host stopped the run"),
        "{c:?}"
    );
    // It had produced more than the CLI got only by what was in flight: a handful.
    assert!(produced.load(std::sync::atomic::Ordering::SeqCst) >= 3);
    server.abort();
}

/// A model call still waiting for its answer when the host stops the run is not answered
/// with it: the upstream request is dropped, and the call waits for the close like one
/// that arrived after the stop (`503`, `stopped`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_awaiting_its_answer_when_the_host_stops_is_dropped_upstream() {
    let yaml = "name: slow\nreplies:\n  - text: late\n    delay_s: 30\n";
    let behind = scripted(yaml).await;
    let gw = gateway(behind.base_url(), None).await;
    let t0 = Instant::now();
    let base = gw.base_url();
    let pending = tokio::spawn(async move {
        let (path, body) = requests(0).remove(0);
        post(&base, path, &body).await
    });
    while behind.requests().is_empty() {
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    gw.stopper().stop();
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    assert!(!pending.is_finished(), "answered after the stop");
    let calls = gw.shutdown(t0).await;
    assert_eq!(pending.await.unwrap().0, 503);
    assert_eq!(calls.len(), 1);
    let c = &calls[0];
    assert!(c.stopped && c.cut && c.forwarded(), "{c:?}");
    assert!(c.status == Some(503) && c.first_byte_us.is_none(), "{c:?}");
    assert!(
        c.error.as_deref().unwrap().contains("dropped upstream"),
        "{c:?}"
    );
}

/// A CLI that compacts its history cannot go past `max_turns`: after two answered main
/// calls, a call whose history holds none (turn 0) counts as call 3 and is held with
/// `max_turns: 2`, never forwarded; a retry of a call answered 429 keeps its turn.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shrunk_history_counts_on_from_the_calls_answered_and_is_held() {
    let yaml = "name: c\nreplies:\n  - http_error: {status: 429, message: slow down, times: 1}\n    text: one\n  - text: two\n";
    let behind = scripted(yaml).await;
    let gw = gateway(behind.base_url(), Some(2)).await;
    let mut held = gw.held();
    let t0 = Instant::now();
    let (path, first) = requests(0).remove(0);
    assert_eq!(post(&gw.base_url(), path, &first).await.0, 429);
    assert_eq!(post(&gw.base_url(), path, &first).await.0, 200);
    let (_, second) = requests(1).remove(0);
    assert_eq!(post(&gw.base_url(), path, &second).await.0, 200);
    // Compacted: the history holds no assistant turn again.
    let base = gw.base_url();
    let pending = tokio::spawn(async move { post(&base, "/v1/messages", &first).await });
    // A guard against a hang (a forwarded call is answered and never held), not a
    // timing assert.
    tokio::time::timeout(
        std::time::Duration::from_secs(20),
        held.wait_for(Option::is_some),
    )
    .await
    .expect("the compacted call was held")
    .unwrap();
    assert_eq!(held.borrow().as_ref().map(|h| h.turn), Some(2));
    let calls = gw.shutdown(t0).await;
    assert_eq!(pending.await.unwrap().0, 503);
    assert_eq!(
        behind.requests().len(),
        3,
        "the compacted call was not forwarded"
    );
    let counted: Vec<_> = calls.iter().map(|c| (c.turn, c.counted_turn)).collect();
    assert_eq!(
        counted,
        [
            (Some(0), None),
            (Some(0), None),
            (Some(1), None),
            (Some(0), Some(2))
        ]
    );
    assert!(calls[3].held, "{:?}", calls[3]);
}

/// With `--gateway`, the keys the gateway uses and every other secret-looking name among
/// `--pass-env` are held back from the agent, each with a note; without it, all pass.
#[test]
fn secret_looking_pass_env_names_are_held_back_under_the_gateway() {
    for name in [
        "ANTHROPIC_API_KEY",
        "OPENAI_API_KEY",
        "OPENROUTER_API_KEY",
        "GITHUB_TOKEN",
        "AWS_SECRET",
        "DB_PASSWORD",
        "my_api_key_file",
        "AWS_BEARER_TOKEN_BEDROCK",
        "PGPASSWORD",
        "MYSQL_PWD",
        "SMTP_PASS",
        "OPENROUTER_APIKEY",
        "GH_PAT",
        "GOOGLE_APPLICATION_CREDENTIALS",
        "ANTHROPIC_CUSTOM_HEADERS",
        "database_url",
    ] {
        assert!(!super::to_agent(name, true), "{name}");
        assert!(super::to_agent(name, false), "{name}");
    }
    for name in [
        "HOME_DIR",
        "RUST_LOG",
        "KEYBOARD",
        "TOKENIZERS_PARALLELISM",
        "PATH",
        "COMPASS",
        "DATABASE_NAME",
    ] {
        assert!(super::to_agent(name, true), "{name}");
    }
    let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let notes = super::pass_env_notes(
        &names(&["ANTHROPIC_API_KEY", "OPENROUTER_API_KEY", "RUST_LOG"]),
        true,
    );
    assert_eq!(notes.len(), 2, "{notes:?}");
    assert!(notes[0].contains("ANTHROPIC_API_KEY") && notes[0].contains("goes to the gateway"));
    assert!(notes[1].contains("OPENROUTER_API_KEY") && notes[1].contains("held back"));
    // Without --upstream the real key goes nowhere; with it and no key, a warning.
    let notes = super::pass_env_notes(&names(&["ANTHROPIC_API_KEY"]), false);
    assert!(notes[0].contains("goes nowhere"), "{notes:?}");
    let notes = super::pass_env_notes(&names(&["RUST_LOG"]), true);
    assert!(
        notes
            .iter()
            .any(|n| n.starts_with("warning: --upstream without an API key")),
        "{notes:?}"
    );
}

/// `--upstream` must be an absolute http(s) URL with a host.
#[test]
fn check_upstream_names_what_is_wrong() {
    assert!(super::check_upstream("https://api.anthropic.com/").is_ok());
    assert!(super::check_upstream("http://127.0.0.1:40999").is_ok());
    let err = super::check_upstream("127.0.0.1:1").unwrap_err();
    assert!(err.contains("not an http:// or https:// URL"), "{err}");
    assert!(super::check_upstream("http://").is_err());
    assert!(super::check_upstream("ftp://x").is_err());
}

/// A token budget is counted on the APIs' own usage as each call ends: once the calls'
/// output tokens go over `max_output_tokens`, the next model call (main or side) is held
/// like `max_turns`'s call N+1, never forwarded, reported with the budget's reason, and
/// its record names the budget; the calls before it were all forwarded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_after_the_usage_went_over_a_token_budget_is_held() {
    let yaml = "name: b\nreplies:\n  - text: the first reply is about ten tokens long here\n  - text: the second reply is about ten tokens long too\n  - text: three\n";
    let behind = scripted(yaml).await;
    let mut config = GatewayConfig::new(behind.base_url());
    config.budgets = gw_budgets();
    let gw = Gateway::start(config).await.unwrap();
    let mut held = gw.held();
    let t0 = Instant::now();
    let (path, first) = requests(0).remove(0);
    assert_eq!(post(&gw.base_url(), path, &first).await.0, 200);
    let (_, second) = requests(1).remove(0);
    assert_eq!(post(&gw.base_url(), path, &second).await.0, 200);
    let (_, third) = requests(2).remove(0);
    let base = gw.base_url();
    let pending = tokio::spawn(async move { post(&base, "/v1/messages", &third).await });
    // A guard against a hang (a forwarded call is answered, never held).
    tokio::time::timeout(
        std::time::Duration::from_secs(20),
        held.wait_for(Option::is_some),
    )
    .await
    .expect("the third call was held")
    .unwrap();
    assert_eq!(
        held.borrow().as_ref().map(|h| h.reason),
        Some(coder_eval_scripted_model::HoldReason::MaxOutputTokens)
    );
    let calls = gw.shutdown(t0).await;
    assert_eq!(pending.await.unwrap().0, 503);
    assert_eq!(
        behind.requests().len(),
        2,
        "the third call was not forwarded"
    );
    let out: Vec<u64> = calls[..2]
        .iter()
        .map(|c| c.usage.and_then(|u| u.output_tokens).unwrap())
        .collect();
    assert!(out[0] <= 12 && out[0] + out[1] > 12, "{out:?}");
    assert!(calls[2].held && !calls[2].forwarded(), "{:?}", calls[2]);
    assert_eq!(calls[2].over_budget, Some(BudgetKind::MaxOutputTokens));
    let breach = budget_breach(&calls, &gw_budgets()).expect("a breach");
    assert_eq!(
        (breach.budget, breach.event_index, breach.actual),
        (BudgetKind::MaxOutputTokens, 2, (out[0] + out[1]) as f64)
    );
    assert_eq!(breach.figures, Some(crate::results::BudgetFigures::Gateway));
}

fn gw_budgets() -> Budgets {
    Budgets {
        max_output_tokens: Some(12),
        ..Budgets::default()
    }
}

mod price;
