//! What the model gateway adds: per call (a small JSON answer, sequential requests on a
//! kept-alive connection), per streamed chunk (an SSE answer of many small events), and
//! the memory held while a 50 MB answer streams through. Each figure is the gateway path
//! (client → gateway → upstream) less the direct path (client → upstream), both on
//! loopback in this process, against the same in-process upstream.
//!
//! `cargo bench --bench gateway` prints the figures and PASS/FAIL against the targets of
//! issue 12: ≤ 1 ms added per call, ≤ 50 µs added per chunk, and a 50 MB answer streamed
//! (the process's resident memory grows by far less than the answer: target ≤ 16 MB; the
//! answer is an SSE model call, so the gateway's usage scan reads all of it).

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::response::Response;
use coder_eval::gateway::{Gateway, GatewayConfig};
use std::time::{Duration, Instant};

const CALLS: usize = 2000;
const EVENTS: usize = 20_000;
const BIG: usize = 50 * 1024 * 1024;
const BIG_CHUNK: usize = 64 * 1024;

/// The upstream: `/small` a small JSON answer; `/sse` [`EVENTS`] SSE events, one chunk
/// each; `/big` [`BIG`] bytes in [`BIG_CHUNK`] chunks.
async fn upstream(req: Request) -> Response {
    match req.uri().path() {
        "/v1/small" => Response::builder()
            .header("content-type", "application/json")
            .body(Body::from(
                r#"{"id":"msg_1","type":"message","content":[{"type":"text","text":"hi"}],"usage":{"input_tokens":10,"output_tokens":2}}"#,
            ))
            .unwrap(),
        "/v1/sse/messages" => {
            let events = futures_util::stream::iter((0..EVENTS).map(|i| {
                Ok::<_, std::io::Error>(Bytes::from(format!(
                    "event: content_block_delta\ndata: {{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{{\"type\":\"text_delta\",\"text\":\"token {i} \"}}}}\n\n"
                )))
            }));
            Response::builder()
                .header("content-type", "text/event-stream")
                .body(Body::from_stream(events))
                .unwrap()
        }
        _ => {
            // SSE lines of ~1 KiB, as a long streamed answer sends them, in 64 KiB chunks.
            let line = format!(
                "data: {{\"type\":\"content_block_delta\",\"delta\":{{\"text\":\"{}\"}}}}\n\n",
                "x".repeat(960)
            );
            let mut block = line.repeat(BIG_CHUNK / line.len() + 1).into_bytes();
            block.truncate(BIG_CHUNK);
            let chunk = Bytes::from(block);
            let chunks = futures_util::stream::iter(
                (0..BIG / BIG_CHUNK).map(move |_| Ok::<_, std::io::Error>(chunk.clone())),
            );
            Response::builder()
                .header("content-type", "text/event-stream")
                .body(Body::from_stream(chunks))
                .unwrap()
        }
    }
}

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|n| n.parse().ok())
        })
        .unwrap_or(0)
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// Median time of one small call, µs.
async fn per_call(client: &reqwest::Client, base: &str) -> f64 {
    let mut times = Vec::with_capacity(CALLS);
    for _ in 0..CALLS {
        let start = Instant::now();
        let body = client
            .post(format!("{base}/v1/small"))
            .body("{}")
            .send()
            .await
            .unwrap()
            .bytes()
            .await
            .unwrap();
        assert!(!body.is_empty());
        times.push(start.elapsed());
    }
    median(times).as_secs_f64() * 1e6
}

/// Time to stream the SSE answer whole, µs (best of 5), and the chunks the client got.
async fn stream_all(client: &reqwest::Client, base: &str, path: &str) -> (f64, usize, u64) {
    let mut best = f64::MAX;
    let mut chunks = 0;
    let mut bytes = 0;
    for _ in 0..5 {
        let start = Instant::now();
        // A streamed model call (POST …/messages): usage is read from it as it passes.
        let mut r = client
            .post(format!("{base}{path}"))
            .body(r#"{"stream":true,"tools":[{"name":"Bash"}],"messages":[]}"#)
            .send()
            .await
            .unwrap();
        chunks = 0;
        bytes = 0;
        while let Some(c) = r.chunk().await.unwrap() {
            chunks += 1;
            bytes += c.len() as u64;
        }
        best = best.min(start.elapsed().as_secs_f64() * 1e6);
    }
    (best, chunks, bytes)
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let passed = runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let direct = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move {
            axum::serve(listener, axum::Router::new().fallback(upstream))
                .await
                .unwrap()
        });
        let gateway = Gateway::start(GatewayConfig::new(direct.clone()))
            .await
            .unwrap();
        let via = gateway.base_url();
        let client = reqwest::Client::builder().no_proxy().build().unwrap();
        // Warm both paths (connections, allocations).
        per_call(&client, &direct).await;
        per_call(&client, &via).await;

        let call_direct = per_call(&client, &direct).await;
        let call_via = per_call(&client, &via).await;
        let call_added = call_via - call_direct;

        let (sse_direct, _, _) = stream_all(&client, &direct, "/v1/sse/messages").await;
        let (sse_via, chunks_via, _) = stream_all(&client, &via, "/v1/sse/messages").await;
        let chunk_added = (sse_via - sse_direct) / EVENTS as f64;

        // 50 MB through the gateway, the resident set sampled as it streams.
        let before = rss_kib();
        let peak = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(before));
        let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let sampler = {
            let (peak, done) = (peak.clone(), done.clone());
            std::thread::spawn(move || {
                while !done.load(std::sync::atomic::Ordering::Relaxed) {
                    peak.fetch_max(rss_kib(), std::sync::atomic::Ordering::Relaxed);
                    std::thread::sleep(Duration::from_millis(2));
                }
            })
        };
        let big_start = Instant::now();
        // A model call (POST …/messages): the gateway reads the stream for usage as it passes.
        let mut r = client
            .post(format!("{via}/v1/big/messages"))
            .body(r#"{"stream":true,"tools":[{"name":"Bash"}],"messages":[]}"#)
            .send()
            .await
            .unwrap();
        let mut big_bytes = 0u64;
        while let Some(c) = r.chunk().await.unwrap() {
            big_bytes += c.len() as u64;
        }
        let big_ms = big_start.elapsed().as_secs_f64() * 1e3;
        done.store(true, std::sync::atomic::Ordering::Relaxed);
        sampler.join().unwrap();
        let grown_mib =
            peak.load(std::sync::atomic::Ordering::Relaxed).saturating_sub(before) as f64 / 1024.0;
        assert_eq!(big_bytes, BIG as u64);

        let calls = gateway.shutdown(Instant::now()).await;
        let recorded = calls
            .iter()
            .filter(|c| c.path == "/v1/big/messages" && c.response_bytes == BIG as u64)
            .count();
        assert_eq!(recorded, 1, "the big answer is one call");

        let verdict = |ok: bool| if ok { "PASS" } else { "FAIL" };
        println!("model gateway overhead (loopback, in-process upstream):");
        println!("| figure | direct | via gateway | added | target | |");
        println!("|---|---|---|---|---|---|");
        println!(
            "| per call (median of {CALLS}, small JSON) | {call_direct:.0} µs | {call_via:.0} µs | {call_added:.0} µs | ≤ 1000 µs | {} |",
            verdict(call_added <= 1000.0)
        );
        println!(
            "| per chunk ({EVENTS} SSE events, best of 5; client saw {chunks_via} reads) | {:.2} µs | {:.2} µs | {chunk_added:.2} µs | ≤ 50 µs | {} |",
            sse_direct / EVENTS as f64,
            sse_via / EVENTS as f64,
            verdict(chunk_added <= 50.0)
        );
        println!(
            "| 50 MB streamed answer ({big_ms:.0} ms) | | peak RSS +{grown_mib:.1} MiB | | ≤ 16 MiB | {} |",
            verdict(grown_mib <= 16.0)
        );
        call_added <= 1000.0 && chunk_added <= 50.0 && grown_mib <= 16.0
    });
    if !passed {
        std::process::exit(1);
    }
}
