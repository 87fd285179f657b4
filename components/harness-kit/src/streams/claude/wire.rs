//! The fields of a stream-json line the reducer reads (Claude Code 2.1.x); all others are
//! skipped unread.

use crate::lenient::{self, Object, TextOrList};
use serde::Deserialize;
use serde_json::value::RawValue;
use std::borrow::Cow;

/// One line, of any `type`: each type uses some of these fields.
#[derive(Deserialize, Default)]
#[serde(default)]
pub struct Line<'a> {
    /// `system`, `assistant`, `user`, `stream_event`, `result`, `rate_limit_event`, ...
    #[serde(rename = "type", borrow, deserialize_with = "lenient::field")]
    pub kind: Option<Cow<'a, str>>,
    #[serde(borrow, deserialize_with = "lenient::field")]
    pub subtype: Option<Cow<'a, str>>,
    /// The sub-agent's Task call, for a sub-agent's line.
    #[serde(borrow, deserialize_with = "lenient::field")]
    pub parent_tool_use_id: Option<Cow<'a, str>>,
    // system/init
    #[serde(borrow, deserialize_with = "lenient::field")]
    pub session_id: Option<Cow<'a, str>>,
    #[serde(borrow, deserialize_with = "lenient::field")]
    pub claude_code_version: Option<Cow<'a, str>>,
    /// Qwen Code's `system/init` names its version here instead.
    #[serde(borrow, deserialize_with = "lenient::field")]
    pub qwen_code_version: Option<Cow<'a, str>>,
    #[serde(borrow, deserialize_with = "lenient::field")]
    pub model: Option<Cow<'a, str>>,
    #[serde(borrow, deserialize_with = "lenient::list")]
    pub tools: Vec<Cow<'a, str>>,
    // system/compact_boundary
    #[serde(borrow, deserialize_with = "lenient::field")]
    pub compact_metadata: Option<CompactMetadata<'a>>,
    // rate_limit_event
    #[serde(borrow, deserialize_with = "lenient::field")]
    pub rate_limit_info: Option<RateLimitInfo<'a>>,
    // assistant and user
    #[serde(borrow, deserialize_with = "lenient::field")]
    pub message: Option<Box<Message<'a>>>,
    // stream_event
    #[serde(borrow, deserialize_with = "lenient::field")]
    pub event: Option<Box<StreamEvent<'a>>>,
    // result
    #[serde(deserialize_with = "lenient::field")]
    pub is_error: Option<bool>,
    #[serde(borrow, deserialize_with = "lenient::field")]
    pub result: Option<Cow<'a, str>>,
    #[serde(borrow, deserialize_with = "lenient::field")]
    pub error: Option<Cow<'a, str>>,
    #[serde(borrow, deserialize_with = "lenient::list")]
    pub errors: Vec<Cow<'a, str>>,
    #[serde(deserialize_with = "lenient::field")]
    pub num_turns: Option<u64>,
    #[serde(deserialize_with = "lenient::field")]
    pub total_cost_usd: Option<f64>,
    #[serde(deserialize_with = "lenient::field")]
    pub duration_ms: Option<u64>,
    #[serde(deserialize_with = "lenient::field")]
    pub usage: Option<UsageFields>,
    /// Why the run ended (2.1.2xx): `completed`, `max_turns`, `api_error`, ...
    #[serde(borrow, deserialize_with = "lenient::field")]
    pub terminal_reason: Option<Cow<'a, str>>,
    /// The HTTP status of the API error that ended the run.
    #[serde(deserialize_with = "lenient::field")]
    pub api_error_status: Option<u64>,
    /// Tool calls the permission rules refused.
    #[serde(borrow, deserialize_with = "lenient::list")]
    pub permission_denials: Vec<PermissionDenial<'a>>,
    // system/task_started (2.1.19x): a background task began
    /// `local_agent` (a sub-agent), `local_bash` (a background shell), ...
    #[serde(borrow, deserialize_with = "lenient::field")]
    pub task_type: Option<Cow<'a, str>>,
    /// The tool call that started the task (a sub-agent's `Agent` call).
    #[serde(borrow, deserialize_with = "lenient::field")]
    pub tool_use_id: Option<Cow<'a, str>>,
    // system/api_retry
    #[serde(deserialize_with = "lenient::field")]
    pub attempt: Option<u64>,
    #[serde(deserialize_with = "lenient::field")]
    pub retry_delay_ms: Option<u64>,
    #[serde(deserialize_with = "lenient::field")]
    pub error_status: Option<u64>,
}

/// One entry of `result.permission_denials`.
#[derive(Deserialize, Default)]
#[serde(default)]
pub struct PermissionDenial<'a> {
    #[serde(borrow, deserialize_with = "lenient::field")]
    pub tool_use_id: Option<Cow<'a, str>>,
    #[serde(borrow, deserialize_with = "lenient::field")]
    pub tool_name: Option<Cow<'a, str>>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
pub struct CompactMetadata<'a> {
    #[serde(borrow, deserialize_with = "lenient::field")]
    pub trigger: Option<Cow<'a, str>>,
    #[serde(deserialize_with = "lenient::field")]
    pub pre_tokens: Option<u64>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
pub struct RateLimitInfo<'a> {
    #[serde(borrow, deserialize_with = "lenient::field")]
    pub status: Option<Cow<'a, str>>,
}

/// An Anthropic Messages API message (assistant), or a user message's content.
#[derive(Deserialize, Default)]
#[serde(default)]
pub struct Message<'a> {
    #[serde(borrow, deserialize_with = "lenient::field")]
    pub id: Option<Cow<'a, str>>,
    /// The model; `<synthetic>` for a message the CLI wrote itself (an API error).
    #[serde(borrow, deserialize_with = "lenient::field")]
    pub model: Option<Cow<'a, str>>,
    #[serde(borrow, deserialize_with = "lenient::list")]
    pub content: Vec<Block<'a>>,
    #[serde(deserialize_with = "lenient::field")]
    pub usage: Option<UsageFields>,
}

/// A content block: `text`, `tool_use` or `tool_result` (others are ignored).
#[derive(Deserialize, Default)]
#[serde(default)]
pub struct Block<'a> {
    #[serde(rename = "type", borrow, deserialize_with = "lenient::field")]
    pub kind: Option<Cow<'a, str>>,
    #[serde(borrow, deserialize_with = "lenient::field")]
    pub text: Option<Cow<'a, str>>,
    // tool_use
    #[serde(borrow, deserialize_with = "lenient::field")]
    pub id: Option<Cow<'a, str>>,
    #[serde(borrow, deserialize_with = "lenient::field")]
    pub name: Option<Cow<'a, str>>,
    /// The tool's input, kept as the CLI wrote it.
    #[serde(borrow)]
    pub input: Option<&'a RawValue>,
    // tool_result
    #[serde(borrow, deserialize_with = "lenient::field")]
    pub tool_use_id: Option<Cow<'a, str>>,
    #[serde(borrow, deserialize_with = "lenient::field")]
    pub content: Option<ResultContent<'a>>,
    #[serde(deserialize_with = "lenient::field")]
    pub is_error: Option<bool>,
}

/// A tool_result's content: a string, or content blocks (their `text` is read).
pub type ResultContent<'a> = TextOrList<'a, TextBlock<'a>>;

#[derive(Deserialize, Default)]
#[serde(default)]
pub struct TextBlock<'a> {
    #[serde(borrow, deserialize_with = "lenient::field")]
    pub text: Option<Cow<'a, str>>,
}

/// A partial-message event (`--include-partial-messages`).
#[derive(Deserialize, Default)]
#[serde(default)]
pub struct StreamEvent<'a> {
    #[serde(rename = "type", borrow, deserialize_with = "lenient::field")]
    pub kind: Option<Cow<'a, str>>,
    /// `message_start`'s message.
    #[serde(borrow, deserialize_with = "lenient::field")]
    pub message: Option<Message<'a>>,
    /// `message_delta`'s usage.
    #[serde(deserialize_with = "lenient::field")]
    pub usage: Option<UsageFields>,
}

/// Anthropic usage: `input_tokens` excludes cache reads and writes already.
#[derive(Deserialize, Default, Clone, Copy)]
#[serde(default)]
pub struct UsageFields {
    #[serde(deserialize_with = "lenient::field")]
    pub input_tokens: Option<u64>,
    #[serde(deserialize_with = "lenient::field")]
    pub output_tokens: Option<u64>,
    #[serde(deserialize_with = "lenient::field")]
    pub cache_read_input_tokens: Option<u64>,
    #[serde(deserialize_with = "lenient::field")]
    pub cache_creation_input_tokens: Option<u64>,
    /// Qwen Code only: prompt + output (+ thinking) tokens.
    #[serde(deserialize_with = "lenient::field")]
    pub total_tokens: Option<u64>,
}

impl<'de: 'a, 'a> Object<'de> for Line<'a> {}
impl<'de: 'a, 'a> Object<'de> for CompactMetadata<'a> {}
impl<'de: 'a, 'a> Object<'de> for PermissionDenial<'a> {}
impl<'de: 'a, 'a> Object<'de> for RateLimitInfo<'a> {}
impl<'de: 'a, 'a> Object<'de> for Message<'a> {}
impl<'de: 'a, 'a> Object<'de> for Block<'a> {}
impl<'de: 'a, 'a> Object<'de> for TextBlock<'a> {}
impl<'de: 'a, 'a> Object<'de> for StreamEvent<'a> {}
impl Object<'_> for UsageFields {}
