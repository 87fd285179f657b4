//! Serves a script by hand, like `mockllm.py`: prints `PORT <n>`, logs every request
//! to stderr (and to `--log FILE` as JSON lines), and runs until killed.
//!
//! `cargo run --example serve -- SCRIPT [--workspace DIR] [--port N] [--log FILE]`
//!
//! Neutral actions are not translated here (no translator): such replies get HTTP 500.

use std::path::PathBuf;
use std::time::Duration;

use coder_eval_scripted_model::{Script, ScriptedModel, ServerConfig};

#[tokio::main]
async fn main() {
    let mut args = std::env::args().skip(1);
    let mut script_path = None;
    let mut config_workspace = std::env::current_dir().unwrap().display().to_string();
    let (mut port, mut log) = (0u16, None);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--workspace" => config_workspace = args.next().expect("--workspace DIR"),
            "--port" => port = args.next().and_then(|p| p.parse().ok()).expect("--port N"),
            "--log" => log = Some(PathBuf::from(args.next().expect("--log FILE"))),
            _ => script_path = Some(PathBuf::from(arg)),
        }
    }
    let path = script_path.expect("usage: serve SCRIPT [--workspace DIR] [--port N] [--log FILE]");
    let script = Script::load(&path).unwrap_or_else(|e| panic!("{e}"));
    let mut config = ServerConfig::new(script, config_workspace);
    config.port = port;
    config.log_file = log;
    let server = ScriptedModel::start(config)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    println!("PORT {}", server.port());
    let mut seen = 0;
    loop {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let records = server.requests();
        for r in &records[seen..] {
            eprintln!("[scripted-model] {}", serde_json::to_string(r).unwrap());
        }
        seen = records.len();
    }
}
