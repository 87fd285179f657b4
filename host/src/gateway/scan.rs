//! Reading the usage a model API reported out of a response body as it streams past to
//! the CLI (Anthropic, OpenAI Responses and Chat, Gemini; SSE or one JSON body).

use super::call::ApiUsage;
use serde_json::Value;

/// The most of one SSE line, or of a whole non-streamed JSON body, read for usage (bytes):
/// a longer one is passed on unread (its call's usage is then `null`).
const USAGE_SCAN_BYTES: usize = 4 << 20;

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
        }
    }

    /// A scan that reads nothing (a request that is not a model call).
    pub(crate) fn off() -> UsageScan {
        UsageScan {
            on: false,
            ..UsageScan::new(false)
        }
    }

    /// One chunk of the body.
    pub(crate) fn push(&mut self, chunk: &[u8]) {
        if !self.on {
            return;
        }
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

    /// The body ended.
    pub(crate) fn finish(&mut self) {
        if !self.on {
            return;
        }
        let carry = std::mem::take(&mut self.carry);
        if self.sse {
            if !self.overflow {
                self.line(&carry);
            }
        } else if !self.overflow
            && let Ok(v) = serde_json::from_slice::<Value>(&carry)
        {
            // Gemini's non-SSE stream is a JSON array of chunks.
            match v.as_array() {
                Some(items) => items.iter().for_each(|i| self.value(i)),
                None => self.value(&v),
            }
        }
    }

    fn line(&mut self, line: &[u8]) {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let Some(data) = line.strip_prefix(b"data:") else {
            return;
        };
        if memchr::memmem::find(data, b"sage").is_none() {
            return;
        }
        if let Ok(v) = serde_json::from_slice::<Value>(data.trim_ascii()) {
            self.value(&v);
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
