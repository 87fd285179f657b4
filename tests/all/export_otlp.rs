//! `coder-eval export --format otlp`: real runs against the scripted model, sent to an
//! in-process OTLP/HTTP receiver (axum on loopback, the protobuf decoded with the
//! OpenTelemetry project's own message types), and the traces checked against the runs.

use crate::support::{bin, root, scratch};
use coder_eval::results::{RunSummary, TaskResult, ToolOutcome};
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value as AnyValue;
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message;
use std::collections::BTreeMap;
use std::process::Command;
use std::sync::{Arc, Mutex};

/// A loopback OTLP/HTTP receiver: its base URL, and the spans it was sent.
fn receiver() -> (String, Arc<Mutex<Vec<Span>>>) {
    let spans: Arc<Mutex<Vec<Span>>> = Arc::default();
    let kept = spans.clone();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Runtime::new().unwrap();
        runtime.block_on(async move {
            let app = axum::Router::new().route(
                "/v1/traces",
                axum::routing::post(move |body: axum::body::Bytes| {
                    let kept = kept.clone();
                    async move {
                        let request = ExportTraceServiceRequest::decode(body).unwrap();
                        let mut all = kept.lock().unwrap();
                        for rs in request.resource_spans {
                            for ss in rs.scope_spans {
                                all.extend(ss.spans);
                            }
                        }
                        ""
                    }
                }),
            );
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            tx.send(listener.local_addr().unwrap()).unwrap();
            axum::serve(listener, app).await.unwrap();
        });
    });
    let addr = rx.recv().unwrap();
    (format!("http://{addr}"), spans)
}

fn attr(span: &Span, key: &str) -> Option<String> {
    span.attributes
        .iter()
        .find(|kv| kv.key == key)
        .and_then(|kv| kv.value.as_ref()?.value.as_ref())
        .map(|v| match v {
            AnyValue::StringValue(s) => s.clone(),
            AnyValue::IntValue(i) => i.to_string(),
            AnyValue::DoubleValue(d) => d.to_string(),
            AnyValue::BoolValue(b) => b.to_string(),
            other => format!("{other:?}"),
        })
}

#[test]
fn each_run_is_one_trace_with_its_model_and_tool_spans_at_their_times() {
    let out = scratch("otlp-run");
    let mut cmd = Command::new(bin());
    cmd.arg("run")
        .arg(root().join("tasks/scenarios/parallel/task.yaml"))
        .arg(root().join("tasks/scenarios/tool_error/task.yaml"))
        .args(["--harness", "claude-code", "--harness", "pi", "--out"])
        .arg(&out);
    let _ = cmd.output().unwrap();
    let summary: RunSummary =
        serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).unwrap()).unwrap();
    let results: Vec<TaskResult> = summary
        .rows
        .iter()
        .map(|r| {
            serde_json::from_str(&std::fs::read_to_string(out.join(&r.result)).unwrap()).unwrap()
        })
        .collect();

    let (url, spans) = receiver();
    let export = Command::new(bin())
        .args(["export", "--format", "otlp", "--endpoint", &url])
        .arg(&out)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&export.stdout);
    assert!(
        export.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&export.stderr)
    );
    assert!(stdout.starts_with("sent 4 trace(s)"), "{stdout}");

    let spans = spans.lock().unwrap().clone();
    let mut traces: BTreeMap<Vec<u8>, Vec<Span>> = BTreeMap::new();
    for s in spans {
        traces.entry(s.trace_id.clone()).or_default().push(s);
    }
    assert_eq!(traces.len(), results.len(), "one trace per run");
    for spans in traces.values() {
        let root = spans.iter().find(|s| s.parent_span_id.is_empty()).unwrap();
        let task = attr(root, "coder_eval.task_id").unwrap();
        let harness = attr(root, "coder_eval.harness").unwrap();
        let r = results
            .iter()
            .find(|r| r.task_id == task && r.harness == harness)
            .unwrap();
        let t = r.turn.as_ref().unwrap();
        let who = format!("{task} {harness}");
        assert_eq!(
            attr(root, "coder_eval.status").unwrap(),
            r.status.as_str(),
            "{who}"
        );
        let named = |prefix: &str| {
            spans
                .iter()
                .filter(|s| s.name.starts_with(prefix))
                .collect::<Vec<_>>()
        };
        let agent = named("invoke_agent ");
        assert_eq!(agent.len(), 1, "{who}");
        assert_eq!(agent[0].parent_span_id, root.span_id, "{who}");
        assert_eq!(named("setup").len(), 1, "{who}");
        assert_eq!(named("grading")[0].events.len(), r.criteria.len(), "{who}");
        // `chat <model>`, or `chat` where no model is known.
        let chats = spans
            .iter()
            .filter(|s| s.name == "chat" || s.name.starts_with("chat "))
            .count();
        assert_eq!(chats, t.model_calls.len(), "{who}");
        let tools = named("execute_tool ");
        assert_eq!(tools.len(), t.tool_calls.len(), "{who}");
        for (span, call) in tools.iter().zip(&t.tool_calls) {
            assert_eq!(
                attr(span, "gen_ai.tool.call.id").as_deref(),
                Some(call.call_id.as_str()),
                "{who}"
            );
            assert_eq!(span.parent_span_id, agent[0].span_id, "{who}");
            // Its recorded interval, on the trace's clock.
            assert_eq!(
                (span.start_time_unix_nano - agent[0].start_time_unix_nano) / 1_000_000,
                call.started_ms,
                "{who}"
            );
            let failed = span.status.as_ref().is_some_and(|s| s.code == 2);
            assert_eq!(failed, call.status == ToolOutcome::Error, "{who}");
        }
        // Every span lies within the root.
        for s in spans {
            assert!(
                s.start_time_unix_nano >= root.start_time_unix_nano,
                "{who}: {}",
                s.name
            );
            assert!(
                s.end_time_unix_nano <= root.end_time_unix_nano,
                "{who}: {}",
                s.name
            );
        }
    }
}

#[test]
fn a_collector_that_is_not_there_is_an_error_naming_it() {
    let out = scratch("otlp-none");
    let _ = Command::new(bin())
        .arg("run")
        .arg(root().join("tasks/scenarios/hello/task.yaml"))
        .args(["--harness", "pi", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    // A port nothing listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}");
    let export = Command::new(bin())
        .args(["export", "--format", "otlp", "--endpoint", &url])
        .arg(&out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&export.stderr);
    assert_eq!(export.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains(&format!("{url}/v1/traces")), "{stderr}");
}

#[test]
fn run_with_an_otlp_endpoint_sends_its_traces_when_it_ends() {
    let (url, spans) = receiver();
    let out = scratch("otlp-live");
    let run = Command::new(bin())
        .arg("run")
        .arg(root().join("tasks/scenarios/hello/task.yaml"))
        .args(["--harness", "pi", "--otlp-endpoint", &url, "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let spans = spans.lock().unwrap();
    let roots: Vec<&Span> = spans
        .iter()
        .filter(|s| s.parent_span_id.is_empty())
        .collect();
    assert_eq!(roots.len(), 1);
    assert_eq!(attr(roots[0], "coder_eval.harness").as_deref(), Some("pi"));
    let chats: Vec<&Span> = spans
        .iter()
        .filter(|s| s.name.starts_with("chat"))
        .collect();
    assert!(!chats.is_empty());
    // Pi reports usage per call: each chat span carries it.
    assert!(
        chats
            .iter()
            .all(|s| attr(s, "gen_ai.usage.output_tokens").is_some())
    );
}
