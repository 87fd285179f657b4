//! A finished run as OpenTelemetry traces, sent over OTLP/HTTP (protobuf) with the
//! `opentelemetry` SDK and its OTLP exporter: one trace per task × harness run.
//!
//! The spans are made after the fact from what the run recorded, with their recorded
//! times (the recording's wall-clock start plus each stamp):
//! - `coder-eval task <task_id>` (the root): setup to the end of grading; attributes
//!   `coder_eval.task_id`, `coder_eval.harness`, `coder_eval.status`,
//!   `coder_eval.weighted_score`, `coder_eval.variant`, `coder_eval.replicate`;
//! - `setup`: the `setup_ms` before the turn;
//! - `invoke_agent <harness>`: the turn (OpenTelemetry GenAI semantic conventions:
//!   `gen_ai.operation.name = invoke_agent`, `gen_ai.agent.name`, `gen_ai.request.model`,
//!   the run's token totals as `gen_ai.usage.input_tokens` / `output_tokens` where
//!   reported), with under it
//!   - `chat <model>` per model call: its generation window (`gen_ai.operation.name =
//!     chat`, usage of its message where the stream reports it per call);
//!   - `execute_tool <name>` per tool call: start to end (`gen_ai.operation.name =
//!     execute_tool`, `gen_ai.tool.name`, `gen_ai.tool.call.id`, `error.type` when it
//!     failed); a sub-agent's calls sit under the tool call that started it;
//! - `grading`: the `grading_ms` after the turn, one event per criterion (type, score,
//!   passed).
//!
//! A run whose recording does not carry its wall-clock start (made before it did) is
//! skipped, and said so; absent figures are absent attributes, never 0.

use super::run_dir::Unit;
use crate::results::{ToolOutcome, TotalsStatus};
use opentelemetry::trace::{Span, SpanKind, Status, TraceContextExt, Tracer, TracerProvider};
use opentelemetry::{Context, KeyValue};
use opentelemetry_otlp::{Protocol, WithExportConfig};
use std::collections::HashMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Why the traces could not be sent.
#[derive(Debug, thiserror::Error)]
pub enum OtlpError {
    /// The exporter could not be built (a bad endpoint).
    #[error("cannot set up the OTLP exporter for {endpoint}: {message}")]
    Setup { endpoint: String, message: String },
    /// The collector did not take the spans.
    #[error("the OTLP collector at {endpoint} did not take the spans: {message}")]
    Send { endpoint: String, message: String },
}

/// What [`send`] did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Sent {
    /// Runs sent, one trace each.
    pub traces: usize,
    /// Spans sent.
    pub spans: usize,
    /// Runs skipped: (task_id/harness, why).
    pub skipped: Vec<(String, String)>,
}

/// The traces URL for `endpoint`: an OTLP/HTTP base URL (as `OTEL_EXPORTER_OTLP_ENDPOINT`)
/// gets `/v1/traces`; one that already ends so is used as it is.
pub fn traces_url(endpoint: &str) -> String {
    let base = endpoint.trim_end_matches('/');
    if base.ends_with("/v1/traces") {
        base.to_string()
    } else {
        format!("{base}/v1/traces")
    }
}

/// Sends `units` to the OTLP/HTTP collector at `endpoint` (see [`traces_url`]), one trace
/// per unit, and waits until the exporter has handed every span over. Blocking: call it
/// outside an async runtime.
pub fn send(units: &[Unit], endpoint: &str) -> Result<Sent, OtlpError> {
    let url = traces_url(endpoint);
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_protocol(Protocol::HttpBinary)
        .with_endpoint(&url)
        .with_timeout(Duration::from_secs(10))
        .build()
        .map_err(|e| OtlpError::Setup {
            endpoint: url.clone(),
            message: e.to_string(),
        })?;
    let provider = opentelemetry_sdk::trace::SdkTracerProvider::builder()
        .with_batch_exporter(exporter)
        .with_resource(
            opentelemetry_sdk::Resource::builder_empty()
                .with_attributes([
                    KeyValue::new("service.name", "coder-eval"),
                    KeyValue::new("service.version", env!("CARGO_PKG_VERSION")),
                ])
                .build(),
        )
        .build();
    let tracer = provider.tracer("coder-eval");
    let mut sent = Sent::default();
    for unit in units {
        let r = &unit.result;
        let name = format!("{}/{}", r.task_id, r.harness);
        let Some(start_ms) = unit.started_unix_ms else {
            sent.skipped.push((
                name,
                "its recording does not carry its wall-clock start (made by an older \
                 coder-eval, or no CLI ran)"
                    .into(),
            ));
            continue;
        };
        sent.spans += trace(&tracer, unit, start_ms);
        sent.traces += 1;
    }
    let flushed = provider.force_flush();
    let shut = provider.shutdown();
    flushed.and(shut).map_err(|e| OtlpError::Send {
        endpoint: url,
        message: e.to_string(),
    })?;
    Ok(sent)
}

fn at(start_ms: u64, offset_ms: i64) -> SystemTime {
    let ms = (start_ms as i64 + offset_ms).max(0) as u64;
    UNIX_EPOCH + Duration::from_millis(ms)
}

/// The spans of one run; returns how many.
fn trace(tracer: &opentelemetry_sdk::trace::SdkTracer, unit: &Unit, start_ms: u64) -> usize {
    let r = &unit.result;
    let turn = r.turn.as_ref();
    let setup = r.setup_ms.unwrap_or(0) as i64;
    let turn_ms = turn.map_or(0, |t| t.timing.turn_duration_ms) as i64;
    let grading = r.grading_ms.unwrap_or(0) as i64;
    let mut spans = 0;
    let mut root_attrs = vec![
        KeyValue::new("coder_eval.task_id", r.task_id.clone()),
        KeyValue::new("coder_eval.harness", r.harness.clone()),
        KeyValue::new("coder_eval.status", r.status.as_str()),
    ];
    if let Some(s) = r.weighted_score {
        root_attrs.push(KeyValue::new("coder_eval.weighted_score", s));
    }
    if let Some(v) = &r.variant {
        root_attrs.push(KeyValue::new("coder_eval.variant", v.clone()));
    }
    if let Some(i) = r.replicate {
        root_attrs.push(KeyValue::new("coder_eval.replicate", i64::from(i)));
    }
    let mut root = tracer
        .span_builder(format!("coder-eval task {}", r.task_id))
        .with_kind(SpanKind::Internal)
        .with_start_time(at(start_ms, -setup))
        .with_attributes(root_attrs)
        .start_with_context(tracer, &Context::new());
    if r.status.as_str() == "ERROR" {
        root.set_status(Status::error(r.error.clone().unwrap_or_default()));
    }
    let root_cx = Context::new().with_remote_span_context(root.span_context().clone());
    spans += 1;

    let mut s = tracer
        .span_builder("setup")
        .with_start_time(at(start_ms, -setup))
        .start_with_context(tracer, &root_cx);
    s.end_with_timestamp(at(start_ms, 0));
    spans += 1;

    if let Some(t) = turn {
        let model = t.model.clone().or_else(|| r.requested_model.clone());
        let mut attrs = vec![
            KeyValue::new("gen_ai.operation.name", "invoke_agent"),
            KeyValue::new("gen_ai.agent.name", r.harness.clone()),
            KeyValue::new("coder_eval.num_turns", i64::from(t.num_turns)),
        ];
        if let Some(m) = &model {
            attrs.push(KeyValue::new("gen_ai.request.model", m.clone()));
        }
        if let Some(id) = &t.session_id {
            attrs.push(KeyValue::new("gen_ai.conversation.id", id.clone()));
        }
        if let Some(u) = r
            .cost
            .as_ref()
            .filter(|c| c.usage_status != TotalsStatus::NotReported)
            .and_then(|c| c.usage)
        {
            attrs.push(KeyValue::new(
                "gen_ai.usage.input_tokens",
                (u.input_tokens + u.cache_read_tokens + u.cache_write_tokens) as i64,
            ));
            attrs.push(KeyValue::new(
                "gen_ai.usage.output_tokens",
                u.output_tokens as i64,
            ));
        }
        if let Some(c) = r.cost.as_ref().and_then(|c| c.total_cost_usd) {
            attrs.push(KeyValue::new("coder_eval.cost_usd", c));
        }
        let mut agent = tracer
            .span_builder(format!("invoke_agent {}", r.harness))
            .with_kind(SpanKind::Client)
            .with_start_time(at(start_ms, 0))
            .with_attributes(attrs)
            .start_with_context(tracer, &root_cx);
        let agent_cx = Context::new().with_remote_span_context(agent.span_context().clone());
        spans += 1;
        let usage_by_message: HashMap<&str, &crate::results::MessageRecord> = t
            .messages
            .iter()
            .map(|m| (m.message_id.as_str(), m))
            .collect();
        // Tool calls first, so a sub-agent's spans can sit under the call that started it.
        let mut tool_cx: HashMap<&str, Context> = HashMap::new();
        let mut tool_spans = Vec::new();
        for c in &t.tool_calls {
            let parent = c
                .parent_call_id
                .as_deref()
                .and_then(|p| tool_cx.get(p))
                .unwrap_or(&agent_cx)
                .clone();
            let mut attrs = vec![
                KeyValue::new("gen_ai.operation.name", "execute_tool"),
                KeyValue::new("gen_ai.tool.name", c.name.clone()),
                KeyValue::new("gen_ai.tool.call.id", c.call_id.clone()),
            ];
            if let Some(code) = c.exit_code {
                attrs.push(KeyValue::new("coder_eval.exit_code", i64::from(code)));
            }
            let mut span = tracer
                .span_builder(format!("execute_tool {}", c.name))
                .with_start_time(at(start_ms, c.started_ms as i64))
                .with_attributes(attrs)
                .start_with_context(tracer, &parent);
            match c.status {
                ToolOutcome::Error => {
                    span.set_attribute(KeyValue::new("error.type", "tool_error"));
                    span.set_status(Status::error("the tool call failed"));
                }
                ToolOutcome::Denied => {
                    span.set_attribute(KeyValue::new("error.type", "denied"));
                }
                _ => {}
            }
            tool_cx.insert(
                &c.call_id,
                Context::new().with_remote_span_context(span.span_context().clone()),
            );
            let end = c.finished_ms.unwrap_or(c.started_ms + c.duration_ms);
            tool_spans.push((span, end));
        }
        for c in &t.model_calls {
            let parent = c
                .parent_call_id
                .as_deref()
                .and_then(|p| tool_cx.get(p))
                .unwrap_or(&agent_cx);
            let mut attrs = vec![KeyValue::new("gen_ai.operation.name", "chat")];
            if let Some(m) = &model {
                attrs.push(KeyValue::new("gen_ai.request.model", m.clone()));
            }
            if let Some(u) = c
                .message_id
                .as_deref()
                .and_then(|id| usage_by_message.get(id))
                .and_then(|m| m.usage)
            {
                attrs.push(KeyValue::new(
                    "gen_ai.usage.input_tokens",
                    (u.input_tokens + u.cache_read_tokens + u.cache_write_tokens) as i64,
                ));
            }
            let mut span = tracer
                .span_builder(format!("chat {}", model.as_deref().unwrap_or("unknown")))
                .with_kind(SpanKind::Client)
                .with_start_time(at(start_ms, c.started_ms as i64))
                .with_attributes(attrs)
                .start_with_context(tracer, parent);
            span.end_with_timestamp(at(
                start_ms,
                (c.started_ms + c.generation_ms.unwrap_or(0)) as i64,
            ));
            spans += 1;
        }
        for (mut span, end) in tool_spans {
            span.end_with_timestamp(at(start_ms, end as i64));
            spans += 1;
        }
        agent.end_with_timestamp(at(start_ms, turn_ms));
    }

    let mut g = tracer
        .span_builder("grading")
        .with_start_time(at(start_ms, turn_ms))
        .start_with_context(tracer, &root_cx);
    for c in r.criteria.iter() {
        g.add_event(
            "criterion",
            vec![
                KeyValue::new("coder_eval.criterion.type", c.kind.clone()),
                KeyValue::new("coder_eval.criterion.score", c.score),
                KeyValue::new("coder_eval.criterion.passed", c.passed),
            ],
        );
    }
    g.end_with_timestamp(at(start_ms, turn_ms + grading));
    spans += 1;
    root.end_with_timestamp(at(start_ms, turn_ms + grading));
    spans
}

#[cfg(test)]
mod tests {
    use super::traces_url;

    #[test]
    fn a_base_url_gets_the_traces_path_and_a_traces_url_is_kept() {
        assert_eq!(
            traces_url("http://127.0.0.1:4318"),
            "http://127.0.0.1:4318/v1/traces"
        );
        assert_eq!(traces_url("http://h:4318/"), "http://h:4318/v1/traces");
        assert_eq!(traces_url("http://h/v1/traces"), "http://h/v1/traces");
    }
}
