//! `coder-eval scripted-model`.

use coder_eval::components::{ComponentSource, parse_override};
use coder_eval::runtime::translator::ComponentTranslator;
use coder_eval_scripted_model::{Script, ScriptedModel, ServerConfig};
use std::path::PathBuf;
use std::sync::Arc;

/// Serves a model script on loopback (Anthropic Messages, OpenAI Responses and Chat
/// Completions, Gemini), printing `PORT <n>`, until Ctrl-C. Neutral actions in the
/// script are translated for `--harness`. The script format is documented in the
/// `coder-eval-scripted-model` crate.
#[derive(Debug, clap::Args)]
#[command(after_help = "Example:
  coder-eval scripted-model --script tasks/hello_date/script.yaml --port 0 --workspace /tmp/ws")]
pub struct ScriptedModelArgs {
    /// The script (YAML or JSON).
    #[arg(long)]
    script: PathBuf,
    /// Port on 127.0.0.1 (0 = any free one).
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// The harness whose tools neutral actions become.
    #[arg(long, default_value = "claude-code")]
    harness: String,
    /// The workspace path `{{workspace}}` stands for.
    #[arg(long, default_value = ".")]
    workspace: PathBuf,
    /// Append every request as a JSON line to this file.
    #[arg(long)]
    log: Option<PathBuf>,
    /// Replace one harness's component: NAME=PATH (repeatable).
    #[arg(long, value_name = "NAME=PATH", value_parser = parse_override)]
    component: Vec<(String, PathBuf)>,
}

pub fn run(args: ScriptedModelArgs) -> Result<i32, Box<dyn std::error::Error>> {
    let script = Script::load(&args.script)?;
    let source = ComponentSource {
        dir: None,
        overrides: args.component.into_iter().collect(),
    };
    let loaded = source.harness(&args.harness)?;
    let translator = Arc::new(ComponentTranslator::new(&loaded)?);
    let workspace = std::path::absolute(&args.workspace)?.display().to_string();
    let mut config = ServerConfig::new(script, workspace).with_translator(translator);
    config.port = args.port;
    config.log_file = args.log;
    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(async {
        let model = ScriptedModel::start(config).await?;
        println!("PORT {}", model.port());
        eprintln!("scripted model on {} (Ctrl-C to stop)", model.base_url());
        tokio::signal::ctrl_c().await?;
        model.shutdown().await;
        Ok::<_, Box<dyn std::error::Error>>(0)
    })
}
