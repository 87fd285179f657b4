//! Test plumbing: a plain HTTP/1.1 client over `TcpStream`, an SSE parser, a test
//! translator and the shared test script.

use std::path::PathBuf;
use std::sync::Arc;

use coder_eval_scripted_model::{
    ActionTranslator, NeutralAction, Script, ScriptedModel, ServerConfig, ToolCallSpec,
};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The workspace path given to test servers.
pub const WS: &str = "/tmp/coder-eval-ws";

/// The script every API test plays:
/// reply 0 = thinking + text + neutral write_file; reply 1 = two parallel raw calls;
/// reply 2 = a 529 error; then text "done".
pub const SCRIPT: &str = r#"
name: api-test
replies:
  - text: "I'll create the file app.py and then run it for you."
    thinking: "Plan: write the file, then run it."
    tool_calls:
      - write_file: {path: "{{workspace}}/app.py", content: "print('hi')\n"}
  - tool_calls:
      - {name: first_tool, arguments: {command: "echo one", cwd: "{{workspace}}"}}
      - {name: second_tool, arguments: {command: "echo two"}}
  - http_error: {status: 529, message: overloaded}
  - text: done
side_text: "Mock title"
"#;

/// A decoded HTTP response.
pub struct Resp {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Resp {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {}", self.body))
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The SSE events of the body: (event name, parsed data; `[DONE]` as a string).
    pub fn sse(&self) -> Vec<(Option<String>, Value)> {
        assert_eq!(self.status, 200, "{}", self.body);
        assert!(
            self.header("content-type")
                .unwrap_or("")
                .starts_with("text/event-stream")
        );
        let mut out = Vec::new();
        for block in self.body.split("\n\n").filter(|b| !b.trim().is_empty()) {
            let (mut name, mut data) = (None, String::new());
            for line in block.lines() {
                if let Some(v) = line.strip_prefix("event:") {
                    name = Some(v.trim().to_string());
                } else if let Some(v) = line.strip_prefix("data:") {
                    data.push_str(v.strip_prefix(' ').unwrap_or(v));
                }
            }
            let value = serde_json::from_str(&data).unwrap_or(Value::String(data));
            out.push((name, value));
        }
        out
    }
}

/// Sends one request (`Connection: close`) and reads the whole answer.
pub async fn request(
    port: u16,
    method: &str,
    target: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Resp {
    let mut s = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    let mut head =
        format!("{method} {target} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n");
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    if method != "CONNECT" && method != "GET" && method != "HEAD" {
        head.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    head.push_str("\r\n");
    s.write_all(head.as_bytes()).await.unwrap();
    s.write_all(body).await.unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).await.unwrap();
    parse_response(&raw)
}

fn parse_response(raw: &[u8]) -> Resp {
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("no header end");
    let head = String::from_utf8_lossy(&raw[..split]).to_string();
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect();
    let mut body = raw[split + 4..].to_vec();
    let chunked = headers
        .iter()
        .any(|(k, v)| k.eq_ignore_ascii_case("transfer-encoding") && v.contains("chunked"));
    if chunked {
        body = dechunk(&body);
    }
    Resp {
        status,
        headers,
        body: String::from_utf8(body).unwrap(),
    }
}

fn dechunk(mut data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let eol = data
            .windows(2)
            .position(|w| w == b"\r\n")
            .expect("chunk size line");
        let size_text = String::from_utf8_lossy(&data[..eol]).to_string();
        let size = usize::from_str_radix(size_text.split(';').next().unwrap().trim(), 16).unwrap();
        data = &data[eol + 2..];
        if size == 0 {
            return out;
        }
        out.extend_from_slice(&data[..size]);
        data = &data[size + 2..];
    }
}

/// POSTs a JSON body.
pub async fn post(port: u16, target: &str, body: &Value) -> Resp {
    let bytes = body.to_string().into_bytes();
    request(
        port,
        "POST",
        target,
        &[("Content-Type", "application/json")],
        &bytes,
    )
    .await
}

/// A translator as a Claude-Code-like harness would write it.
pub fn translator() -> Arc<dyn ActionTranslator> {
    Arc::new(|action: &NeutralAction, ws: &str| match action {
        NeutralAction::WriteFile { path, content } => ToolCallSpec::Function {
            name: "Write".into(),
            arguments: json!({"file_path": path, "content": content}),
        },
        NeutralAction::Shell { command } => ToolCallSpec::Function {
            name: "Bash".into(),
            arguments: json!({"command": command}),
        },
        NeutralAction::ReadFile { path } => ToolCallSpec::Function {
            name: "Read".into(),
            arguments: json!({"file_path": format!("{ws}/{path}")}),
        },
    })
}

/// Starts a server playing `yaml` with the test translator (when `translate`).
pub async fn start_yaml(yaml: &str, translate: bool) -> ScriptedModel {
    let script = Script::from_str(yaml, "test.yaml", true).unwrap();
    let mut config = ServerConfig::new(script, WS);
    if translate {
        config = config.with_translator(translator());
    }
    ScriptedModel::start(config).await.unwrap()
}

/// Starts a server playing [`SCRIPT`] with the test translator.
pub async fn start() -> ScriptedModel {
    start_yaml(SCRIPT, true).await
}

/// The folder holding `corpus/`: the repository's `tests/` (a copy of the recorded
/// corpus), or `$CODER_EVAL_SHARED` to read another copy.
pub fn shared_dir() -> PathBuf {
    match std::env::var_os("CODER_EVAL_SHARED") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests"),
    }
}

/// Concatenates the string values found at `pointer` in every event whose name or
/// `type` is `kind`.
pub fn concat(events: &[(Option<String>, Value)], kind: &str, pointer: &str) -> String {
    events
        .iter()
        .filter(|(_, v)| v.get("type").and_then(Value::as_str) == Some(kind))
        .filter_map(|(_, v)| v.pointer(pointer).and_then(Value::as_str))
        .collect()
}
