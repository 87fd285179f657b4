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
    /// Runs that could not be sent: (task_id/harness, why).
    pub skipped: Vec<(String, String)>,
    /// Runs with nothing to trace (no CLI ran: a setup error, `skip: true`).
    pub not_run: Vec<String>,
}

/// The traces URL for `endpoint`: an OTLP/HTTP base URL (as `OTEL_EXPORTER_OTLP_ENDPOINT`)
/// gets `/v1/traces`; one that already ends so is used as it is.
pub fn traces_url(endpoint: &str) -> String {
    match reqwest::Url::parse(endpoint) {
        Ok(mut url) => {
            let path = url.path().trim_end_matches('/').to_string();
            if !path.ends_with("/v1/traces") {
                url.set_path(&format!("{path}/v1/traces"));
            }
            url.to_string()
        }
        Err(_) => format!("{}/v1/traces", endpoint.trim_end_matches('/')),
    }
}

/// `url` without its user name and password, for messages.
pub fn shown(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(mut u) => {
            if !u.username().is_empty() || u.password().is_some() {
                let _ = u.set_username("");
                let _ = u.set_password(None);
            }
            u.to_string()
        }
        Err(_) => url.to_string(),
    }
}

/// Whether `endpoint` is a URL an OTLP/HTTP exporter can use (`http` or `https`, with a
/// host): checked before a run starts, so a typo does not wait for the run's end.
pub fn check_endpoint(endpoint: &str) -> Result<(), OtlpError> {
    let bad = |message: String| OtlpError::Setup {
        endpoint: shown(endpoint),
        message,
    };
    let url = reqwest::Url::parse(endpoint).map_err(|e| bad(format!("not a URL ({e})")))?;
    if !matches!(url.scheme(), "http" | "https") || url.host().is_none() {
        return Err(bad(
            "an OTLP/HTTP endpoint is an http:// or https:// URL with a host".into(),
        ));
    }
    Ok(())
}

/// Refuses early, and plainly, a collector nothing listens at (the exporter's own error
/// for it is a nested debug dump).
fn reachable(url: &str) -> Result<(), OtlpError> {
    let parsed = reqwest::Url::parse(url).map_err(|e| OtlpError::Setup {
        endpoint: url.to_string(),
        message: e.to_string(),
    })?;
    let addrs = parsed.socket_addrs(|| None).map_err(|e| OtlpError::Send {
        endpoint: url.to_string(),
        message: format!("cannot resolve its host: {e}"),
    })?;
    let mut last = None;
    for addr in addrs {
        match std::net::TcpStream::connect_timeout(&addr, crate::limits::OTLP_CONNECT_TIMEOUT) {
            Ok(_) => return Ok(()),
            Err(e) => last = Some(format!("{addr}: {e}")),
        }
    }
    Err(OtlpError::Send {
        endpoint: url.to_string(),
        message: format!(
            "nothing answers there ({})",
            last.unwrap_or_else(|| "no address".into())
        ),
    })
}

/// Sends `units` to the OTLP/HTTP collector at `endpoint` (see [`traces_url`]), one trace
/// per unit, and waits until the exporter has handed every span over. Blocking: call it
/// outside an async runtime.
pub fn send(units: &[Unit], endpoint: &str) -> Result<Sent, OtlpError> {
    check_endpoint(endpoint)?;
    let url = traces_url(endpoint);
    reachable(&url).map_err(|e| match e {
        OtlpError::Send { message, .. } => OtlpError::Send {
            endpoint: shown(&url),
            message,
        },
        other => other,
    })?;
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_protocol(Protocol::HttpBinary)
        .with_endpoint(&url)
        .with_timeout(crate::limits::OTLP_EXPORT_TIMEOUT)
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
        if r.turn.is_none() {
            sent.not_run.push(name);
            continue;
        }
        let Some(start_ms) = unit.started_unix_ms else {
            sent.skipped.push((
                name,
                "its recording does not carry its wall-clock start (made by a coder-eval \
                 older than the export)"
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
        endpoint: shown(&url),
        message: plain(&e.to_string()),
    })?;
    Ok(sent)
}

/// The message model call `i` of `t` produced: the one with its message id, else the first
/// of its thread that began between its start and the thread's next call.
fn message_of(t: &crate::results::TurnRecord, i: usize) -> Option<&crate::results::MessageRecord> {
    let call = &t.model_calls[i];
    if let Some(id) = &call.message_id {
        return t.messages.iter().find(|m| &m.message_id == id);
    }
    let next = t.model_calls[i + 1..]
        .iter()
        .find(|c| c.parent_call_id == call.parent_call_id)
        .map_or(u64::MAX, |c| c.started_ms);
    t.messages.iter().find(|m| {
        m.parent_call_id == call.parent_call_id
            && m.first_ms >= call.started_ms
            && m.first_ms < next
    })
}

fn at(start_ms: u64, offset_ms: i64) -> SystemTime {
    let ms = i64::try_from(start_ms)
        .unwrap_or(i64::MAX)
        .saturating_add(offset_ms)
        .max(0) as u64;
    UNIX_EPOCH
        .checked_add(Duration::from_millis(ms))
        .unwrap_or(UNIX_EPOCH)
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
                (u.input_tokens + u.cache_read_tokens + u.cache_writes_or_zero()) as i64,
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
        let output_per_call = crate::limits::budget::reporting(&r.harness)
            .is_none_or(|rep| rep.output == crate::limits::budget::ReportedAt::EachCall);
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
        for (i, c) in t.model_calls.iter().enumerate() {
            let parent = c
                .parent_call_id
                .as_deref()
                .and_then(|p| tool_cx.get(p))
                .unwrap_or(&agent_cx);
            let mut attrs = vec![KeyValue::new("gen_ai.operation.name", "chat")];
            if let Some(m) = &model {
                attrs.push(KeyValue::new("gen_ai.request.model", m.clone()));
            }
            if let Some(u) = message_of(t, i).and_then(|m| m.usage) {
                attrs.push(KeyValue::new(
                    "gen_ai.usage.input_tokens",
                    (u.input_tokens + u.cache_read_tokens + u.cache_writes_or_zero()) as i64,
                ));
                if output_per_call {
                    attrs.push(KeyValue::new(
                        "gen_ai.usage.output_tokens",
                        u.output_tokens as i64,
                    ));
                }
            }
            let name = match &model {
                Some(m) => format!("chat {m}"),
                None => "chat".to_string(),
            };
            let mut span = tracer
                .span_builder(name)
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
    // Each criterion at the time it started, as graded one after another.
    let mut offset = turn_ms;
    for c in r.criteria.iter() {
        let at_ms = offset.min(turn_ms + grading);
        offset += c.duration_ms as i64;
        g.add_event_with_timestamp(
            "criterion",
            at(start_ms, at_ms),
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

/// The exporter's error without its nested debug dumps: the HTTP status when it names
/// one, else its first 200 characters.
fn plain(message: &str) -> String {
    if let Some(i) = message.find("status") {
        let code: String = message[i..]
            .chars()
            .skip_while(|c| !c.is_ascii_digit())
            .take_while(char::is_ascii_digit)
            .collect();
        if code.len() == 3 {
            return format!("the collector answered HTTP {code}");
        }
    }
    message.chars().take(200).collect()
}

#[cfg(test)]
mod tests;
