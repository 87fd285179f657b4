//! Hostile clients: malformed HTTP (arbitrary bytes and mutated requests, proptest),
//! bodies over the cap, a gzip bomb, and slowloris-style trickles. Each must end as an
//! error answer or a closed connection with bounded memory, and the server must keep
//! answering everyone else and still shut down. Bounded for CI; `PROPTEST_CASES` raises
//! the count (README).

use std::io::Write;
use std::time::Duration;

use proptest::prelude::*;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::common::{post, start};

/// A hang guard, not a timing assertion: far above any honest answer.
const GUARD: Duration = Duration::from_secs(60);

/// The server still answers a well-formed model call.
async fn still_serves(port: u16) {
    let body = json!({"model": "m", "max_tokens": 10, "stream": false,
                      "messages": [{"role": "user", "content": "hi"}]});
    let resp = tokio::time::timeout(GUARD, post(port, "/v1/messages", &body))
        .await
        .expect("the server stopped answering");
    assert_eq!(resp.status, 200, "{}", resp.body);
}

/// Sends `bytes` and reads what comes back until the server closes or goes quiet.
async fn send_raw(port: u16, bytes: &[u8]) -> Vec<u8> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    // The server may close early (an error answer to a bad head): write errors are fine.
    let _ = s.write_all(bytes).await;
    let _ = s.shutdown().await;
    let mut out = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(5), s.read_to_end(&mut out)).await;
    out
}

/// A well-formed request to break.
fn valid_request() -> Vec<u8> {
    let body = json!({"model": "m", "max_tokens": 10, "stream": true,
                      "messages": [{"role": "user", "content": "hi"}]})
    .to_string();
    format!(
        "POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

#[derive(Debug, Clone)]
enum Mutation {
    Flip { at: usize, byte: u8 },
    Cut { at: usize },
    Insert { at: usize, bytes: Vec<u8> },
    Header(String),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), any::<u8>()).prop_map(|(at, byte)| Mutation::Flip { at, byte }),
        any::<usize>().prop_map(|at| Mutation::Cut { at }),
        (any::<usize>(), prop::collection::vec(any::<u8>(), 1..64))
            .prop_map(|(at, bytes)| Mutation::Insert { at, bytes }),
        prop_oneof![
            Just("Content-Length: 99999999999999999999".to_string()),
            Just("Content-Length: -1".to_string()),
            Just("Content-Length: 5\r\nContent-Length: 7".to_string()),
            Just("Transfer-Encoding: chunked".to_string()),
            Just("Transfer-Encoding: gzip, chunked".to_string()),
            Just("Content-Encoding: gzip".to_string()),
            Just("Content-Encoding: deflate".to_string()),
            Just("Content-Encoding: br".to_string()),
            Just("Expect: 100-continue".to_string()),
            Just(format!("X-Long: {}", "a".repeat(200_000))),
            "[a-zA-Z-]{1,20}: [\\PC]{0,40}",
        ]
        .prop_map(Mutation::Header),
    ]
}

fn apply(mut req: Vec<u8>, mutations: &[Mutation]) -> Vec<u8> {
    for m in mutations {
        match m {
            Mutation::Flip { at, byte } => {
                let at = at % req.len().max(1);
                if let Some(b) = req.get_mut(at) {
                    *b ^= byte | 1;
                }
            }
            Mutation::Cut { at } => req.truncate(at % (req.len() + 1)),
            Mutation::Insert { at, bytes } => {
                let at = at % (req.len() + 1);
                req.splice(at..at, bytes.iter().copied());
            }
            Mutation::Header(h) => {
                // After the request line.
                let at = req
                    .windows(2)
                    .position(|w| w == b"\r\n")
                    .map_or(0, |i| i + 2);
                let line = format!("{h}\r\n");
                req.splice(at..at, line.bytes());
            }
        }
    }
    req
}

fn cases() -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(64);
    ProptestConfig {
        cases,
        failure_persistence: Some(Box::new(
            proptest::test_runner::FileFailurePersistence::SourceParallel("proptest-regressions"),
        )),
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(cases())]

    /// Mutated requests and arbitrary bytes: whatever the answer (or none), the server
    /// keeps serving well-formed calls.
    #[test]
    fn malformed_http_never_stops_the_server(
        mutations in prop::collection::vec(mutation(), 1..5),
        junk in prop::collection::vec(any::<u8>(), 0..512),
    ) {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let server = start().await;
            let port = server.port();
            let answer = send_raw(port, &apply(valid_request(), &mutations)).await;
            if !answer.is_empty() {
                // What comes back, if anything, is HTTP.
                assert!(answer.starts_with(b"HTTP/1.1 "), "{}", String::from_utf8_lossy(&answer));
            }
            send_raw(port, &junk).await;
            still_serves(port).await;
            tokio::time::timeout(GUARD, server.shutdown()).await.expect("shutdown hung");
        });
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_over_the_cap_is_refused_before_it_is_read() {
    let server = start().await;
    let port = server.port();
    // 1 GiB announced, 1 MiB sent: refused on the announcement, not after reading it all.
    let mut s = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    let head = "POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\
                Content-Length: 1073741824\r\nConnection: close\r\n\r\n";
    s.write_all(head.as_bytes()).await.unwrap();
    let _ = s.write_all(&vec![b' '; 1 << 20]).await;
    let mut out = Vec::new();
    tokio::time::timeout(GUARD, s.read_to_end(&mut out))
        .await
        .expect("no answer to an oversized body")
        .ok();
    let text = String::from_utf8_lossy(&out);
    assert!(text.starts_with("HTTP/1.1 400"), "{text}");
    assert!(text.contains("cannot read body"), "{text}");
    still_serves(port).await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn trickling_clients_hold_up_no_one_and_shutdown_still_ends() {
    let server = start().await;
    let port = server.port();
    // One client trickles its head a byte at a time and never ends it; another announces
    // a body and trickles it.
    let mut head_trickle = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    let mut body_trickle = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    body_trickle
        .write_all(
            b"POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n{\"model\":",
        )
        .await
        .unwrap();
    let trickle = tokio::spawn(async move {
        let head = b"POST /v1/messages HTTP/1.1\r\nHost: x\r\nX-Slow: ";
        for i in 0.. {
            let byte = head.get(i).copied().unwrap_or(b'a');
            if head_trickle.write_all(&[byte]).await.is_err()
                || body_trickle.write_all(b" ").await.is_err()
            {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    });
    // Meanwhile everyone else is answered, again and again.
    for _ in 0..5 {
        still_serves(port).await;
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(!trickle.is_finished(), "the tricklers are still connected");
    tokio::time::timeout(GUARD, server.shutdown())
        .await
        .expect("shutdown waited on a trickling client");
    trickle.abort();
}

/// `n` gzip members of 16 MiB of zeros each (MultiGzDecoder reads them all): a small
/// body that inflates to `n` × 16 MiB.
fn gzip_bomb(members: usize) -> Vec<u8> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    let zeros = vec![b' '; 1 << 20];
    for _ in 0..16 {
        gz.write_all(&zeros).unwrap();
    }
    let member = gz.finish().unwrap();
    member.repeat(members)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gzip_bomb_is_refused_without_inflating_it_all() {
    let server = start().await;
    let port = server.port();
    // 64 GiB once inflated, from 64 MiB or so on the wire... kept smaller: 4096 members
    // (64 GiB) of ~16 KiB each.
    let bomb = gzip_bomb(4096);
    assert!(
        bomb.len() < 256 << 20,
        "the bomb fits the wire cap: {}",
        bomb.len()
    );
    let resp = tokio::time::timeout(
        GUARD * 5,
        crate::common::request(
            port,
            "POST",
            "/v1/messages",
            &[
                ("Content-Type", "application/json"),
                ("Content-Encoding", "gzip"),
            ],
            &bomb,
        ),
    )
    .await
    .expect("no answer to a gzip bomb");
    assert_eq!(resp.status, 400, "{}", resp.body);
    assert!(resp.body.contains("inflates to more than"), "{}", resp.body);
    still_serves(port).await;
    server.shutdown().await;
}
