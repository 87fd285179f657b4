//! Reading the usage a model API reported out of a response body as it streams past to
//! the CLI (Anthropic, OpenAI Responses and Chat, Gemini; SSE or one JSON body), and
//! whether the answer was complete (its API's end-of-answer marker seen). A body in
//! `Content-Encoding: gzip` or `deflate` is inflated for reading (the CLI gets the bytes
//! as sent); any other encoding leaves the usage unknown, said in [`UsageScan::unreadable`].

use super::call::ApiUsage;
use serde_json::Value;

/// The most of one SSE line, or of a whole non-streamed JSON body, read for usage (bytes):
/// a longer one is passed on unread (its call's usage is then `null`).
const USAGE_SCAN_BYTES: usize = 4 << 20;

/// The most of an encoded body inflated for reading (bytes of inflated output); past it
/// the usage is unknown (a compression bomb is read no further).
const INFLATE_BYTES: u64 = 256 << 20;

/// The piece of an encoded chunk inflated at a time (bytes of input): bounds what one
/// step holds inflated (gzip inflates at most ~1000 times).
const INFLATE_STEP: usize = 4096;

/// How a response body is encoded for reading.
enum Inflate {
    /// Identity: read as is.
    Plain,
    /// `gzip` / `x-gzip`.
    Gzip(Box<flate2::write::MultiGzDecoder<Vec<u8>>>),
    /// `deflate` (zlib-wrapped, RFC 9110).
    Deflate(Box<flate2::write::ZlibDecoder<Vec<u8>>>),
}

/// Reads usage (and a Responses response id) out of a response body as it streams past,
/// without holding it: SSE bodies line by line (only `data:` lines that mention usage are
/// parsed), other bodies whole up to [`USAGE_SCAN_BYTES`].
pub(crate) struct UsageScan {
    /// Off for a request that is not a model call: nothing is read.
    on: bool,
    sse: bool,
    /// The current partial line (SSE) or the body so far (JSON).
    carry: Vec<u8>,
    /// The carry outgrew [`USAGE_SCAN_BYTES`]: skip to the next newline (SSE) or give up
    /// (JSON).
    overflow: bool,
    pub usage: ApiUsage,
    /// A Responses `response.id` seen in an event carrying usage (`response.completed`).
    pub response_id: Option<String>,
    /// The answer's end was seen: Anthropic `message_stop`, Responses
    /// `response.completed` / `.incomplete` / `.failed`, Chat `[DONE]` or a `finish_reason`,
    /// Gemini a `finishReason`; for a body that is not SSE, a whole JSON value (read at
    /// [`UsageScan::finish`]).
    pub complete: bool,
    /// The answer failed inside its body (HTTP 2xx, then an error): Anthropic's
    /// `event: error` (e.g. `overloaded_error`), Responses `response.failed` or `error`,
    /// a Chat or Gemini chunk (or non-streamed body) with a top-level `error` object. The
    /// text names what was seen. Such an answer is not *answered* (the CLI retries it and
    /// the retry keeps its turn); the usage it reported is still counted (see
    /// [`super::passing`]).
    pub failed: Option<String>,
    /// An SSE `event: error` / `response.failed` line was seen: [`UsageScan::failed`] at
    /// [`UsageScan::finish`] when no event data said more.
    failed_event: Option<String>,
    /// Why the body could not be read (an encoding the gateway does not inflate, or
    /// inflating failed): its usage is unknown. `None`: read.
    pub unreadable: Option<String>,
    inflate: Inflate,
    inflated: u64,
}

impl UsageScan {
    pub(crate) fn new(sse: bool) -> UsageScan {
        UsageScan {
            on: true,
            sse,
            carry: Vec::new(),
            overflow: false,
            usage: ApiUsage::default(),
            response_id: None,
            complete: false,
            failed: None,
            failed_event: None,
            unreadable: None,
            inflate: Inflate::Plain,
            inflated: 0,
        }
    }

    /// A scan of a body in `Content-Encoding: encoding` (`None`, `identity`: as is;
    /// `gzip`, `x-gzip`, `deflate`: inflated for reading; anything else: not read, the
    /// usage unknown and [`UsageScan::unreadable`] says why).
    pub(crate) fn with_encoding(sse: bool, encoding: Option<&str>) -> UsageScan {
        let mut scan = UsageScan::new(sse);
        let encoding = encoding.map(|e| e.trim().to_ascii_lowercase());
        match encoding.as_deref() {
            None | Some("" | "identity") => {}
            Some("gzip" | "x-gzip") => {
                scan.inflate =
                    Inflate::Gzip(Box::new(flate2::write::MultiGzDecoder::new(Vec::new())));
            }
            Some("deflate") => {
                scan.inflate =
                    Inflate::Deflate(Box::new(flate2::write::ZlibDecoder::new(Vec::new())));
            }
            Some(other) => scan.give_up(format!(
                "the answer's Content-Encoding `{other}` is not one the gateway reads \
                 (identity, gzip, deflate): its usage is unknown"
            )),
        }
        scan
    }

    /// Stops reading: the usage is unknown, for `why`.
    fn give_up(&mut self, why: String) {
        self.on = false;
        self.carry = Vec::new();
        self.usage = ApiUsage::default();
        self.unreadable = Some(why);
    }

    /// One chunk of the body as sent (inflated first when encoded).
    pub(crate) fn push(&mut self, chunk: &[u8]) {
        use std::io::Write;
        if !self.on {
            return;
        }
        if matches!(self.inflate, Inflate::Plain) {
            return self.push_plain(chunk);
        }
        for piece in chunk.chunks(INFLATE_STEP) {
            let (written, out) = match &mut self.inflate {
                Inflate::Gzip(d) => (d.write_all(piece), std::mem::take(d.get_mut())),
                Inflate::Deflate(d) => (d.write_all(piece), std::mem::take(d.get_mut())),
                Inflate::Plain => unreachable!("checked above"),
            };
            self.inflated += out.len() as u64;
            self.push_plain(&out);
            if let Err(e) = written {
                return self.give_up(format!(
                    "the answer's encoded body could not be inflated ({e}): its usage is unknown"
                ));
            }
            if self.inflated > INFLATE_BYTES {
                return self.give_up(format!(
                    "the answer inflates past {INFLATE_BYTES} bytes: read no further, its \
                     usage is unknown"
                ));
            }
        }
    }

    /// A scan that reads nothing (a request that is not a model call).
    pub(crate) fn off() -> UsageScan {
        UsageScan {
            on: false,
            ..UsageScan::new(false)
        }
    }

    /// One chunk of the body, as read (not encoded).
    fn push_plain(&mut self, chunk: &[u8]) {
        if !self.sse {
            if !self.overflow {
                if self.carry.len() + chunk.len() > USAGE_SCAN_BYTES {
                    self.overflow = true;
                    self.carry = Vec::new();
                } else {
                    self.carry.extend_from_slice(chunk);
                }
            }
            return;
        }
        let mut rest = chunk;
        while let Some(i) = memchr::memchr(b'\n', rest) {
            let (line, tail) = rest.split_at(i);
            rest = &tail[1..];
            if self.overflow {
                self.overflow = false;
            } else if self.carry.is_empty() {
                self.line(line);
            } else {
                let mut whole = std::mem::take(&mut self.carry);
                whole.extend_from_slice(line);
                self.line(&whole);
            }
        }
        if !rest.is_empty() && !self.overflow {
            if self.carry.len() + rest.len() > USAGE_SCAN_BYTES {
                self.overflow = true;
                self.carry = Vec::new();
            } else {
                self.carry.extend_from_slice(rest);
            }
        }
    }

    /// The body ended (sets [`UsageScan::failed`] from an error event line whose data said
    /// nothing readable).
    pub(crate) fn finish(&mut self) {
        use std::io::Write;
        if !self.on {
            return;
        }
        let flushed = match &mut self.inflate {
            Inflate::Plain => None,
            Inflate::Gzip(d) => Some((d.flush(), std::mem::take(d.get_mut()))),
            Inflate::Deflate(d) => Some((d.flush(), std::mem::take(d.get_mut()))),
        };
        if let Some((_, out)) = flushed {
            self.push_plain(&out);
        }
        let carry = std::mem::take(&mut self.carry);
        if self.sse {
            if !self.overflow {
                self.line(&carry);
            }
            if self.failed.is_none() {
                self.failed = self.failed_event.take();
            }
        } else if !self.overflow
            && let Ok(v) = serde_json::from_slice::<Value>(&carry)
        {
            self.complete = true;
            // Gemini's non-SSE stream is a JSON array of chunks.
            match v.as_array() {
                Some(items) => items.iter().for_each(|i| {
                    self.value(i);
                    self.note_failure(i);
                }),
                None => {
                    self.value(&v);
                    self.note_failure(&v);
                }
            }
        }
    }

    fn line(&mut self, line: &[u8]) {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if let Some(event) = line.strip_prefix(b"event:") {
            let event = event.trim_ascii();
            if matches!(event, b"error" | b"response.failed") && self.failed_event.is_none() {
                self.failed_event = Some(format!(
                    "the answer failed mid-stream (SSE `event: {}`)",
                    String::from_utf8_lossy(event)
                ));
            }
            if matches!(
                event.trim_ascii(),
                b"message_stop"
                    | b"response.completed"
                    | b"response.incomplete"
                    | b"response.failed"
            ) {
                self.complete = true;
            }
            return;
        }
        let Some(data) = line.strip_prefix(b"data:") else {
            return;
        };
        let data = data.trim_ascii();
        if data == b"[DONE]" {
            self.complete = true;
            return;
        }
        let find = |needle: &[u8]| memchr::memmem::find(data, needle).is_some();
        let usage = find(b"sage");
        let error = find(b"error") || find(b"response.failed");
        let end = !self.complete
            && (find(b"message_stop")
                || find(b"response.completed")
                || find(b"response.incomplete")
                || find(b"response.failed")
                || find(b"inish_reason")
                || find(b"inishReason"));
        if !usage && !end && !error {
            return;
        }
        if let Ok(v) = serde_json::from_slice::<Value>(data) {
            if error {
                self.note_failure(&v);
            }
            if end && ends_answer(&v) {
                self.complete = true;
            }
            if usage {
                self.value(&v);
            }
        }
    }

    /// Notes in [`UsageScan::failed`] an event or body `v` that says the answer failed.
    fn note_failure(&mut self, v: &Value) {
        if self.failed.is_none()
            && let Some(what) = failure(v)
        {
            self.failed = Some(format!("the answer failed mid-stream ({what})"));
        }
    }

    fn value(&mut self, v: &Value) {
        if self.usage.merge_from(v)
            && let Some(id) = v
                .get("response")
                .and_then(|r| r.get("id"))
                .or_else(|| v.get("id").filter(|_| v.get("object").is_some()))
                .and_then(Value::as_str)
        {
            self.response_id = Some(id.to_string());
        }
    }
}

/// What says that the event or body `v` is a failed answer: a `type` of `error` or
/// `response.failed`, or a top-level `error` object (Chat, Gemini; Anthropic's `error`
/// event has both). A content delta that merely mentions "error" has neither. `None`: not
/// a failure.
fn failure(v: &Value) -> Option<String> {
    let kind = v.get("type").and_then(Value::as_str);
    let error = v.get("error").filter(|e| e.is_object());
    if !matches!(kind, Some("error" | "response.failed")) && error.is_none() {
        return None;
    }
    let error = error.or_else(|| {
        v.get("response")
            .and_then(|r| r.get("error"))
            .filter(|e| e.is_object())
    });
    let detail = error
        .and_then(|e| {
            e.get("type")
                .or_else(|| e.get("code"))
                .or_else(|| e.get("status"))
        })
        .map(|d| match d.as_str() {
            Some(text) => text.to_string(),
            None => d.to_string(),
        });
    Some(match (kind, detail) {
        (Some(kind), Some(detail)) => format!("`{kind}`: {detail}"),
        (Some(kind), None) => format!("`{kind}`"),
        (None, Some(detail)) => format!("an `error` object: {detail}"),
        (None, None) => "an `error` object".to_string(),
    })
}

/// Whether one SSE event's data ends its answer (see [`UsageScan::complete`]).
fn ends_answer(v: &Value) -> bool {
    let kind = v.get("type").and_then(Value::as_str);
    if matches!(
        kind,
        Some("message_stop" | "response.completed" | "response.incomplete" | "response.failed")
    ) {
        return true;
    }
    let finished = |list: Option<&Value>, field: &str| {
        list.and_then(Value::as_array).is_some_and(|items| {
            items
                .iter()
                .any(|i| i.get(field).is_some_and(Value::is_string))
        })
    };
    finished(v.get("choices"), "finish_reason") || finished(v.get("candidates"), "finishReason")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan(sse: bool, body: &str, cut: usize) -> UsageScan {
        let mut s = UsageScan::new(sse);
        for piece in body.as_bytes().chunks(cut) {
            s.push(piece);
        }
        s.finish();
        s
    }

    #[test]
    fn anthropic_stream_usage_in_any_chunking() {
        let body = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":12,\"output_tokens\":1,\"cache_read_input_tokens\":3}}}\n\n\
                    event: content_block_delta\ndata: {\"type\":\"content_block_delta\"}\n\n\
                    event: message_delta\ndata: {\"type\":\"message_delta\",\"usage\":{\"output_tokens\":40}}\n\n";
        for cut in [1, 7, 64, 4096] {
            let s = scan(true, body, cut);
            assert_eq!(
                s.usage,
                ApiUsage {
                    input_tokens: Some(12),
                    output_tokens: Some(40),
                    cache_read_tokens: Some(3),
                    cache_write_tokens: None
                },
                "cut {cut}"
            );
        }
    }

    fn gzip(text: &str) -> Vec<u8> {
        use std::io::Write;
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(text.as_bytes()).unwrap();
        gz.finish().unwrap()
    }

    #[test]
    fn a_gzipped_body_is_read_in_any_chunking_and_an_unknown_encoding_is_said() {
        let sse = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":12}}}\n\n\
                   event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
        let json = "{\"usage\":{\"input_tokens\":3,\"output_tokens\":4}}";
        for (is_sse, text) in [(true, sse), (false, json)] {
            let body = gzip(text);
            for cut in [1, 5, 4096] {
                let mut s = UsageScan::with_encoding(is_sse, Some("gzip"));
                body.chunks(cut).for_each(|c| s.push(c));
                s.finish();
                assert!(s.usage.input_tokens.is_some(), "{is_sse} cut {cut}");
                assert!(s.complete && s.unreadable.is_none(), "{is_sse} cut {cut}");
            }
        }
        let mut s = UsageScan::with_encoding(false, Some("br"));
        s.push(json.as_bytes());
        s.finish();
        assert!(s.usage.is_empty() && !s.complete);
        assert!(s.unreadable.as_deref().unwrap().contains("`br`"));
    }

    #[test]
    fn the_end_of_an_answer_is_seen_on_every_api_and_not_before() {
        let ends = [
            "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
            "data: {\"type\":\"response.completed\",\"response\":{\"id\":\"r\"}}\n\n",
            "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n",
            "data: [DONE]\n\n",
            "data: {\"candidates\":[{\"finishReason\":\"STOP\"}]}\r\n\r\n",
        ];
        for end in ends {
            assert!(scan(true, end, 3).complete, "{end}");
        }
        for not_yet in [
            "event: content_block_stop\ndata: {\"type\":\"content_block_stop\"}\n\n",
            "data: {\"choices\":[{\"delta\":{\"content\":\"x\"},\"finish_reason\":null}]}\n\n",
            "data: {\"candidates\":[{\"content\":{}}]}\n\n",
            "data: {\"type\":\"response.output_text.delta\",\"delta\":\"message_stop\"}\n\n",
        ] {
            assert!(!scan(true, not_yet, 3).complete, "{not_yet}");
        }
        assert!(!scan(false, "{\"usage\":", 3).complete, "a cut JSON body");
    }

    #[test]
    fn an_answer_failing_mid_stream_is_seen_on_every_api_and_a_mention_is_not() {
        let failed = [
            "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":10,\"output_tokens\":1}}}\n\n\
             event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n",
            "data: {\"type\":\"response.failed\",\"response\":{\"id\":\"r\",\"error\":{\"code\":\"server_error\"}}}\n\n",
            "data: {\"type\":\"error\",\"code\":\"server_error\",\"message\":\"x\"}\n\n",
            "data: {\"choices\":[]}\n\ndata: {\"error\":{\"message\":\"overloaded\",\"type\":\"server_error\"}}\n\ndata: [DONE]\n\n",
            "data: {\"error\":{\"code\":503,\"status\":\"UNAVAILABLE\"}}\r\n\r\n",
        ];
        for body in failed {
            for cut in [1, 7, 4096] {
                let s = scan(true, body, cut);
                assert!(s.failed.is_some(), "cut {cut}: {body}");
            }
        }
        let s = scan(true, failed[0], 5);
        assert!(s.failed.unwrap().contains("overloaded_error"));
        assert_eq!(
            s.usage.input_tokens,
            Some(10),
            "the failed answer's usage is read"
        );
        let gemini = "[{\"candidates\":[]},{\"error\":{\"code\":500,\"status\":\"INTERNAL\"}}]";
        assert!(scan(false, gemini, 4).failed.is_some());
        for fine in [
            "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"delta\":{\"text\":\"error: \\\"error\\\"\"}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
            "data: {\"choices\":[{\"delta\":{\"content\":\"response.failed error\"},\"finish_reason\":\"stop\"}]}\n\n",
            "data: {\"type\":\"response.completed\",\"response\":{\"id\":\"r\",\"error\":null}}\n\n",
        ] {
            let s = scan(true, fine, 3);
            assert!(s.failed.is_none() && s.complete, "{fine}");
        }
        assert!(
            scan(false, "{\"usage\":{\"input_tokens\":1},\"error\":null}", 4)
                .failed
                .is_none()
        );
    }

    #[test]
    fn responses_chat_gemini_and_json() {
        let s = scan(
            true,
            "data: {\"type\":\"response.completed\",\"response\":{\"id\":\"resp_9\",\"usage\":{\"input_tokens\":5,\"output_tokens\":6,\"input_tokens_details\":{\"cached_tokens\":2}}}}\n\n",
            10,
        );
        assert_eq!(s.usage.input_tokens, Some(5));
        assert_eq!(s.usage.cache_read_tokens, Some(2));
        assert_eq!(s.response_id.as_deref(), Some("resp_9"));
        let s = scan(
            true,
            "data: {\"choices\":[]}\n\ndata: {\"choices\":[],\"usage\":{\"prompt_tokens\":7,\"completion_tokens\":8}}\n\ndata: [DONE]\n\n",
            3,
        );
        assert_eq!(
            (s.usage.input_tokens, s.usage.output_tokens),
            (Some(7), Some(8))
        );
        let s = scan(
            true,
            "data: {\"usageMetadata\":{\"promptTokenCount\":9,\"candidatesTokenCount\":4,\"thoughtsTokenCount\":1}}\r\n\r\n",
            5,
        );
        assert_eq!(
            (s.usage.input_tokens, s.usage.output_tokens),
            (Some(9), Some(5))
        );
        let s = scan(
            false,
            "{\"id\":\"x\",\"usage\":{\"input_tokens\":1,\"output_tokens\":2}}",
            4,
        );
        assert_eq!(
            (s.usage.input_tokens, s.usage.output_tokens),
            (Some(1), Some(2))
        );
        // No usage anywhere: nothing made up.
        assert!(scan(true, "data: {\"x\":1}\n\n", 2).usage.is_empty());
    }
}
