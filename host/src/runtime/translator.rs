//! [`ComponentTranslator`]: the scripted model's neutral actions (`write_file`, `shell`,
//! `read_file`) translated into a CLI's own tool calls by its harness component.
//!
//! One owner per Store: the component's instance lives on a thread of its own, which owns
//! it and receives the server's calls over a channel (as Zed's extension host does),
//! rather than being shared behind a mutex with the server's threads. The thread ends
//! when the translator is dropped.

use super::harness::Launcher;
use super::{ComponentError, LoadedComponent};
use coder_eval_scripted_model::{ActionTranslator, NeutralAction as ScriptAction, ToolCallSpec};
use harness_kit::{NeutralAction, ToolCall};
use std::sync::mpsc;

/// One call to the owner thread, with where to send its answer.
struct Call {
    action: NeutralAction,
    workspace: String,
    reply: mpsc::SyncSender<Result<ToolCall, ComponentError>>,
}

/// Translates the scripted model's neutral actions through an instance of the harness
/// component that a thread of its own owns.
pub struct ComponentTranslator {
    calls: mpsc::Sender<Call>,
}

impl ComponentTranslator {
    /// Instantiates `loaded` on a new owner thread. Errors: the component could not be
    /// instantiated.
    pub fn new(loaded: &LoadedComponent) -> Result<ComponentTranslator, ComponentError> {
        let launcher = Launcher::new(loaded)?;
        let (calls, inbox) = mpsc::channel::<Call>();
        std::thread::Builder::new()
            .name("coder-eval-translator".into())
            .spawn(move || {
                let mut launcher = launcher;
                for call in inbox {
                    let answer = launcher.translate_action(&call.action, &call.workspace);
                    let _ = call.reply.send(answer);
                }
            })
            .map_err(|source| ComponentError::Instantiate {
                component: loaded.name.to_string(),
                source: source.into(),
            })?;
        Ok(ComponentTranslator { calls })
    }

    /// This CLI's tool call for `action`, from the owner thread.
    fn call(&self, action: NeutralAction, workspace: &str) -> Result<ToolCall, String> {
        let (reply, answer) = mpsc::sync_channel(1);
        let call = Call {
            action,
            workspace: workspace.to_string(),
            reply,
        };
        self.calls
            .send(call)
            .map_err(|_| "the translator's thread has ended".to_string())?;
        answer
            .recv()
            .map_err(|_| "the translator's thread has ended".to_string())?
            .map_err(|err| err.to_string())
    }
}

impl ActionTranslator for ComponentTranslator {
    fn translate(&self, action: &ScriptAction, workspace: &str) -> ToolCallSpec {
        let action = match action {
            ScriptAction::WriteFile { path, content } => NeutralAction::WriteFile {
                path: path.clone(),
                content: content.clone(),
            },
            ScriptAction::Shell { command } => NeutralAction::Shell {
                command: command.clone(),
            },
            ScriptAction::ReadFile { path } => NeutralAction::ReadFile { path: path.clone() },
        };
        match self.call(action, workspace) {
            // A JSON string as arguments = a free-form (custom) tool call, e.g. Codex's
            // apply_patch.
            Ok(call) => match serde_json::from_str::<serde_json::Value>(&call.arguments_json) {
                Ok(serde_json::Value::String(input)) => ToolCallSpec::Custom {
                    name: call.name,
                    input,
                },
                Ok(arguments) => ToolCallSpec::Function {
                    name: call.name,
                    arguments,
                },
                Err(_) => ToolCallSpec::Custom {
                    name: call.name,
                    input: call.arguments_json,
                },
            },
            Err(error) => ToolCallSpec::Function {
                name: "translation_failed".into(),
                arguments: serde_json::json!({ "error": error }),
            },
        }
    }
}
