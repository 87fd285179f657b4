//! Reading a request's body: decoding it (`gzip`/`deflate`) to classify it, the
//! `accept-encoding` a model call goes upstream with, and the body as kept with
//! `--gateway-bodies`.

use super::call::{BODY_KEEP_BYTES, redact};
use axum::http::{HeaderMap, header};
use serde_json::Value;

/// Largest request body forwarded, bytes (as the scripted model's cap).
pub(super) const MAX_REQUEST_BODY: usize = 256 * 1024 * 1024;

/// A request body as kept with `--gateway-bodies`: the JSON, or, over [`BODY_KEEP_BYTES`]
/// of JSON text, its first [`BODY_KEEP_BYTES`] (secrets redacted before the cut) as a
/// string.
pub(super) fn kept_request_body(value: Value, secrets: &[String]) -> Value {
    let text = value.to_string();
    if text.len() <= BODY_KEEP_BYTES {
        return value;
    }
    let text = redact(&text, secrets);
    let mut end = BODY_KEEP_BYTES.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    Value::String(format!(
        "{}… [request body cut: {} bytes of JSON text, {BODY_KEEP_BYTES} kept]",
        &text[..end],
        text.len()
    ))
}

/// A request body as JSON, decoded from `gzip`/`deflate` first (for classifying only:
/// the bytes go upstream as sent). Errors: the status to refuse it with (`415` for an
/// encoding the gateway does not read, `400` otherwise) and why.
pub(super) fn decode_json(encoding: Option<&str>, body: &[u8]) -> Result<Value, (u16, String)> {
    use std::io::Read;
    let mut decoded = Vec::new();
    let limit = MAX_REQUEST_BODY as u64;
    let inflated = |read: std::io::Result<usize>, decoded: &Vec<u8>| match read {
        Err(e) => Err((400, format!("its encoded body does not inflate: {e}"))),
        Ok(_) if decoded.len() as u64 >= limit => Err((
            413,
            format!("it inflates to {MAX_REQUEST_BODY} bytes or more, over the cap"),
        )),
        Ok(_) => Ok(()),
    };
    let data: &[u8] = match encoding {
        None | Some("identity") => body,
        Some("gzip" | "x-gzip") => {
            let read = flate2::read::MultiGzDecoder::new(body)
                .take(limit)
                .read_to_end(&mut decoded);
            inflated(read, &decoded)?;
            &decoded
        }
        Some("deflate") => {
            let read = flate2::read::ZlibDecoder::new(body)
                .take(limit)
                .read_to_end(&mut decoded);
            inflated(read, &decoded)?;
            &decoded
        }
        Some(other) => {
            return Err((
                415,
                format!("Content-Encoding `{other}`: the gateway reads identity, gzip and deflate"),
            ));
        }
    };
    serde_json::from_slice(data).map_err(|e| (400, format!("it is not JSON: {e}")))
}

/// The `accept-encoding` a model call is forwarded with: of the codings the CLI's header
/// names, those the gateway reads (`gzip`, `x-gzip`, `deflate`), in its order; `identity`
/// when none.
pub(super) fn readable_encodings(headers: &HeaderMap) -> String {
    let mut kept: Vec<String> = Vec::new();
    for value in headers.get_all(header::ACCEPT_ENCODING) {
        for item in value.to_str().unwrap_or("").split(',') {
            let coding = item
                .split(';')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase();
            if matches!(coding.as_str(), "gzip" | "x-gzip" | "deflate") && !kept.contains(&coding) {
                kept.push(coding);
            }
        }
    }
    if kept.is_empty() {
        "identity".into()
    } else {
        kept.join(", ")
    }
}
