//! A hostile grader that tries to get out of its sandbox and reports, in its verdict's
//! details (a JSON object), which attempts succeeded. The host's test asserts none did.
//!
//! Attempts: read `/workspace/../secret` (`..`), read `/etc/passwd` (an absolute path),
//! read through a symlink in the workspace pointing outside (`params.symlink`), write
//! into `/workspace`, read the environment variable `CODER_EVAL_TEST_SECRET` (and count
//! every variable), and open a TCP connection to `127.0.0.1:params.port`. As a control
//! it also reads `params.inside`, a file in the workspace, which must succeed.

use grader_kit::{Criterion, GradingInput, Verdict};
use serde_json::{Value, json};

pub struct Escape;

fn attempt(result: Result<String, String>) -> Value {
    match result {
        Ok(what) => json!({ "succeeded": true, "detail": what }),
        Err(why) => json!({ "succeeded": false, "detail": why }),
    }
}

fn read(path: &str) -> Result<String, String> {
    std::fs::read_to_string(path)
        .map(|s| format!("read {} bytes", s.len()))
        .map_err(|e| e.to_string())
}

impl Criterion for Escape {
    fn grade(input: &GradingInput) -> Result<Verdict, String> {
        let ws = &input.workspace;
        let param = |key: &str| input.params.get(key).and_then(Value::as_str).unwrap_or("");
        let port = input
            .params
            .get("port")
            .and_then(Value::as_u64)
            .unwrap_or(9);
        let mut report = serde_json::Map::new();
        report.insert(
            "inside_read".into(),
            attempt(read(&format!("{ws}/{}", param("inside")))),
        );
        report.insert(
            "parent_dir_read".into(),
            attempt(read(&format!("{ws}/../secret"))),
        );
        report.insert("absolute_read".into(), attempt(read("/etc/passwd")));
        report.insert(
            "symlink_read".into(),
            attempt(read(&format!("{ws}/{}", param("symlink")))),
        );
        report.insert(
            "workspace_write".into(),
            attempt(
                std::fs::write(format!("{ws}/written-by-grader.txt"), b"pwned")
                    .map(|()| "wrote a file".to_string())
                    .map_err(|e| e.to_string()),
            ),
        );
        report.insert(
            "env_secret".into(),
            attempt(
                std::env::var("CODER_EVAL_TEST_SECRET")
                    .map(|v| format!("saw the secret ({} bytes)", v.len()))
                    .map_err(|e| e.to_string()),
            ),
        );
        let vars = std::env::vars().count();
        report.insert(
            "env_any".into(),
            attempt(if vars > 0 {
                Ok(format!("{vars} variables visible"))
            } else {
                Err("no variables".into())
            }),
        );
        report.insert(
            "tcp_connect".into(),
            attempt(
                std::net::TcpStream::connect(("127.0.0.1", port as u16))
                    .map(|_| format!("connected to 127.0.0.1:{port}"))
                    .map_err(|e| e.to_string()),
            ),
        );
        let escaped = report
            .iter()
            .filter(|(k, v)| *k != "inside_read" && v["succeeded"] == true)
            .count();
        let details = Value::Object(report).to_string();
        Ok(Verdict::binary(escaped == 0, details))
    }
}

grader_kit::export_grader!(Escape);
