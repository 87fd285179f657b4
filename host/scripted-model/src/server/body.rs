//! Request bodies: read (at most [`super::MAX_BODY`] bytes), decoded (`gzip`, `deflate`)
//! and parsed as JSON.

use std::io::Read;

use axum::body::Body;
use axum::http::{HeaderMap, header};
use serde_json::{Value, json};

use super::MAX_BODY;

/// Reads a request body (at most [`MAX_BODY`] bytes) and parses it as JSON.
pub(super) async fn read_body(headers: &HeaderMap, body: Body) -> Result<Value, String> {
    match axum::body::to_bytes(body, MAX_BODY).await {
        // Decoding and parsing up to 256 MiB is CPU work: off the async workers, so a
        // large or hostile body holds up no other connection.
        Ok(raw) => {
            let headers = headers.clone();
            tokio::task::spawn_blocking(move || parse_body(&headers, &raw))
                .await
                .unwrap_or_else(|e| Err(format!("cannot parse body: {e}")))
        }
        Err(e) => Err(format!("cannot read body: {e}")),
    }
}

/// Decodes `gzip`/`deflate` bodies and parses JSON (an empty body is `{}`).
fn parse_body(headers: &HeaderMap, raw: &[u8]) -> Result<Value, String> {
    let encoding = headers
        .get(header::CONTENT_ENCODING)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    let decoded;
    let data: &[u8] = match encoding.as_str() {
        "" | "identity" => raw,
        "gzip" | "x-gzip" => {
            decoded = inflate(flate2::read::MultiGzDecoder::new(raw), "gunzip")?;
            &decoded
        }
        "deflate" => {
            decoded = inflate(flate2::read::ZlibDecoder::new(raw), "inflate")?;
            &decoded
        }
        other => return Err(format!("unsupported Content-Encoding {other}")),
    };
    if data.iter().all(u8::is_ascii_whitespace) {
        return Ok(json!({}));
    }
    serde_json::from_slice(data).map_err(|e| format!("body is not JSON: {e}"))
}

/// Reads a decoder to its end, at most [`MAX_BODY`] bytes.
fn inflate(decoder: impl Read, verb: &str) -> Result<Vec<u8>, String> {
    let mut decoded = Vec::new();
    decoder
        .take(MAX_BODY as u64 + 1)
        .read_to_end(&mut decoded)
        .map_err(|e| format!("cannot {verb} body: {e}"))?;
    if decoded.len() > MAX_BODY {
        return Err(format!(
            "body inflates to more than {MAX_BODY} bytes (the cap for a request body)"
        ));
    }
    Ok(decoded)
}
