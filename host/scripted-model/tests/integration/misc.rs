//! Everything around the model calls: the refusing proxy, unknown paths, model listing,
//! the JSONL log, encoded bodies, delays and retried errors.

use std::io::Write;
use std::time::{Duration, Instant};

use coder_eval_scripted_model::{Api, RequestKind, Script, ScriptedModel, ServerConfig};
use serde_json::{Value, json};

use crate::common::{WS, post, request, start, start_yaml};

fn chat(turns: usize) -> Value {
    let mut messages = vec![json!({"role": "user", "content": "go"})];
    for _ in 0..turns {
        messages.push(json!({"role": "assistant", "content": "ok"}));
        messages.push(json!({"role": "user", "content": "next"}));
    }
    json!({"model": "m", "messages": messages, "stream": false,
           "tools": [{"type": "function", "function": {"name": "bash", "parameters": {}}}]})
}

#[tokio::test]
async fn proxy_requests_are_refused_and_logged_as_phone_home() {
    let server = start().await;
    let resp = request(server.port(), "CONNECT", "registry.npmjs.org:443", &[], b"").await;
    assert_eq!(resp.status, 403);
    let resp = request(server.port(), "GET", "http://example.com/ping", &[], b"").await;
    assert_eq!(resp.status, 403);
    let log = server.requests();
    assert_eq!(log.len(), 2);
    assert_eq!(
        (log[0].kind, log[0].method.as_str()),
        (RequestKind::PhoneHome, "CONNECT")
    );
    assert_eq!(log[0].path, "registry.npmjs.org:443");
    assert_eq!(
        (log[1].kind, log[1].path.as_str()),
        (RequestKind::PhoneHome, "http://example.com/ping")
    );
    server.shutdown().await;
}

#[tokio::test]
async fn unknown_paths_models_and_other_gets() {
    let server = start().await;
    let resp = post(server.port(), "/v1/embeddings", &json!({"input": "x"})).await;
    assert_eq!(resp.status, 404);
    assert_eq!(resp.json()["error"]["type"], "not_found");
    let list = request(server.port(), "GET", "/v1/models", &[], b"")
        .await
        .json();
    assert_eq!(list["data"][0]["id"], "mock-model");
    assert_eq!(list["models"][0]["name"], "models/mock-model");
    let one = request(
        server.port(),
        "GET",
        "/v1/models/claude-sonnet-4-5",
        &[],
        b"",
    )
    .await
    .json();
    assert_eq!(
        (one["id"].as_str(), one["type"].as_str()),
        (Some("claude-sonnet-4-5"), Some("model"))
    );
    let other = request(server.port(), "GET", "/health", &[], b"").await;
    assert_eq!((other.status, other.body.as_str()), (200, "{}"));
    let head = request(server.port(), "HEAD", "/", &[], b"").await;
    assert_eq!(head.status, 200);
    let bad = request(server.port(), "POST", "/v1/messages", &[], b"{not json").await;
    assert_eq!(bad.status, 400);
    let kinds: Vec<_> = server
        .requests()
        .iter()
        .map(|r| (r.kind, r.status))
        .collect();
    assert_eq!(
        kinds,
        [
            (RequestKind::Unknown, 404),
            (RequestKind::Models, 200),
            (RequestKind::Models, 200),
            (RequestKind::Other, 200),
            (RequestKind::Other, 200),
            (RequestKind::Invalid, 400),
        ]
    );
    server.shutdown().await;
}

#[tokio::test]
async fn log_file_gets_one_json_line_per_request() {
    let path =
        std::env::temp_dir().join(format!("scripted-model-log-{}.jsonl", std::process::id()));
    let _ = std::fs::remove_file(&path);
    let mut config = ServerConfig::new(Script::default(), WS);
    config.log_file = Some(path.clone());
    let server = ScriptedModel::start(config).await.unwrap();
    // Any prefix before /v1 is ignored.
    let body = post(server.port(), "/openai/v1/chat/completions", &chat(0))
        .await
        .json();
    assert_eq!(body["choices"][0]["message"]["content"], "done");
    request(server.port(), "CONNECT", "chatgpt.com:443", &[], b"").await;
    server.shutdown().await;
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["api"], "chat");
    assert_eq!(lines[0]["kind"], "main");
    assert_eq!(lines[0]["turn"], 0);
    assert_eq!(lines[0]["tools"], json!(["bash"]));
    assert_eq!(lines[1]["kind"], "phone_home");
    assert!(lines[1].get("api").is_none());
    std::fs::remove_file(&path).unwrap();
}

#[tokio::test]
async fn gzip_bodies_are_decoded() {
    let server = start().await;
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(chat(3).to_string().as_bytes()).unwrap();
    let bytes = gz.finish().unwrap();
    let headers = [
        ("Content-Type", "application/json"),
        ("Content-Encoding", "gzip"),
    ];
    let resp = request(
        server.port(),
        "POST",
        "/v1/chat/completions",
        &headers,
        &bytes,
    )
    .await;
    assert_eq!(resp.json()["choices"][0]["message"]["content"], "done");
    assert_eq!(server.requests()[0].api, Some(Api::Chat));
    server.shutdown().await;
}

#[tokio::test]
async fn delay_ms_waits_and_times_limits_an_error() {
    let yaml = "replies:\n  - text: slow\n    delay_ms: 300\n  - http_error: {status: 429, message: slow down, times: 2}\n    text: recovered\n";
    let server = start_yaml(yaml, false).await;
    let started = Instant::now();
    let body = post(server.port(), "/v1/chat/completions", &chat(0))
        .await
        .json();
    assert!(started.elapsed() >= Duration::from_millis(300));
    assert_eq!(body["choices"][0]["message"]["content"], "slow");
    for _ in 0..2 {
        let resp = post(server.port(), "/v1/chat/completions", &chat(1)).await;
        assert_eq!(resp.status, 429);
        assert_eq!(resp.json()["error"]["type"], "rate_limit_error");
    }
    let body = post(server.port(), "/v1/chat/completions", &chat(1))
        .await
        .json();
    assert_eq!(body["choices"][0]["message"]["content"], "recovered");
    let statuses: Vec<u16> = server.requests().iter().map(|r| r.status).collect();
    assert_eq!(statuses, [200, 429, 429, 200]);
    server.shutdown().await;
}

#[tokio::test]
async fn chunk_delay_spaces_streamed_events() {
    let server = start_yaml("chunk_delay_ms: 20\nreplies:\n  - text: hi\n", false).await;
    let mut req = chat(0);
    req["stream"] = json!(true);
    let started = Instant::now();
    let events = post(server.port(), "/v1/chat/completions", &req)
        .await
        .sse();
    // role, "hi", finish, [DONE]: three pauses between four events.
    assert_eq!(events.len(), 4);
    assert!(started.elapsed() >= Duration::from_millis(60));
    server.shutdown().await;
}

#[tokio::test]
async fn fixed_port_and_drop_stops_the_server() {
    let server = start().await;
    let port = server.port();
    assert_eq!(server.base_url(), format!("http://127.0.0.1:{port}"));
    server.shutdown().await;
    // The port is free again and can be bound explicitly.
    let mut config = ServerConfig::new(Script::default(), WS);
    config.port = port;
    let again = ScriptedModel::start(config).await.unwrap();
    assert_eq!(again.port(), port);
    assert!(
        tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_ok()
    );
    drop(again);
    // Dropping it stops the server: connections are refused soon after.
    let mut refused = false;
    for _ in 0..100 {
        if tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_err()
        {
            refused = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(refused, "port {port} still accepts after the drop");
}
