//! [`ComponentTranslator`]: the scripted model's neutral actions (`write_file`, `shell`,
//! `read_file`) translated into a CLI's own tool calls by its harness component.
//!
//! One owner per Store: the component's instance lives on a thread of its own, which owns
//! it and receives the server's calls over a channel (as Zed's extension host does),
//! rather than being shared behind a mutex with the server's threads. The thread ends
//! when the translator is dropped.
//!
//! A translation that fails (the component traps or passes its deadline) leaves the
//! instance unusable, so it is never called again: that action and every later one are
//! answered with a `translation_failed` tool call naming the first failure, and the run
//! takes that failure from [`ComponentTranslator::take_failure`] after the turn and makes
//! the task an ERROR of kind `component` (an unplayed script is no verdict on the agent).

use super::harness::Launcher;
use super::{ComponentError, LoadedComponent};
use coder_eval_scripted_model::{ActionTranslator, NeutralAction as ScriptAction, ToolCallSpec};
use harness_kit::{NeutralAction, ToolCall};
use std::sync::{Mutex, mpsc};

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
    /// The first failed translation: its sentence (for later actions), and the error
    /// itself until [`ComponentTranslator::take_failure`] takes it.
    failed: Mutex<Option<(String, Option<ComponentError>)>>,
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
        Ok(ComponentTranslator {
            calls,
            failed: Mutex::new(None),
        })
    }

    /// The first translation that failed, once (later calls give `None`); `None` too when
    /// every translation succeeded.
    pub(crate) fn take_failure(&self) -> Option<ComponentError> {
        let mut failed = self.failed.lock().unwrap_or_else(|e| e.into_inner());
        failed.as_mut().and_then(|(_, error)| error.take())
    }

    /// This CLI's tool call for `action`, from the owner thread.
    /// Errors: the sentence of this call's failure, or of the first failed one (the
    /// instance is not entered again after a failure).
    fn call(&self, action: NeutralAction, workspace: &str) -> Result<ToolCall, String> {
        if let Some((sentence, _)) = &*self.failed.lock().unwrap_or_else(|e| e.into_inner()) {
            return Err(format!(
                "not translated: an earlier translation failed: {sentence}"
            ));
        }
        let (reply, answer) = mpsc::sync_channel(1);
        let call = Call {
            action,
            workspace: workspace.to_string(),
            reply,
        };
        self.calls
            .send(call)
            .map_err(|_| "the translator's thread has ended".to_string())?;
        match answer.recv() {
            Ok(Ok(call)) => Ok(call),
            Ok(Err(error)) => {
                let sentence = error.to_string();
                let mut failed = self.failed.lock().unwrap_or_else(|e| e.into_inner());
                failed.get_or_insert((sentence.clone(), Some(error)));
                Err(sentence)
            }
            Err(_) => Err("the translator's thread has ended".to_string()),
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::cache::ComponentCache;

    fn shell(command: &str) -> ScriptAction {
        ScriptAction::Shell {
            command: command.into(),
        }
    }

    fn failure_sentence(spec: &ToolCallSpec) -> Option<String> {
        match spec {
            ToolCallSpec::Function { name, arguments } if name == "translation_failed" => {
                Some(arguments["error"].as_str().unwrap_or_default().to_string())
            }
            _ => None,
        }
    }

    /// A trap in `translate-action` is kept for the run (once), and later actions name it
    /// rather than entering the trapped instance ("cannot enter component instance").
    #[test]
    fn a_failed_translation_is_kept_and_never_reenters_the_instance() {
        let path =
            std::path::Path::new(env!("CODER_EVAL_TEST_COMPONENTS_DIR")).join("test_panicker.wasm");
        let loaded = ComponentCache::for_harnesses(None)
            .load_file(&path)
            .expect("the panicker loads");
        let translator = ComponentTranslator::new(&loaded).unwrap();
        // Before the failure, translations work and nothing is kept.
        let ok = translator.translate(&shell("echo hi"), "/ws");
        assert_eq!(failure_sentence(&ok), None, "{ok:?}");
        assert!(translator.take_failure().is_none());
        let first = translator.translate(&shell("echo PANIC"), "/ws");
        let first = failure_sentence(&first).expect("a translation_failed call");
        assert!(first.contains("translate-action"), "{first}");
        let later = translator.translate(&shell("echo fine"), "/ws");
        let later = failure_sentence(&later).expect("a translation_failed call");
        assert!(later.contains("an earlier translation failed"), "{later}");
        assert!(later.contains("translate-action"), "{later}");
        assert!(!later.contains("cannot enter"), "{later}");
        let kept = translator.take_failure().expect("the failure is kept");
        assert!(
            matches!(kept, ComponentError::Trap { .. }),
            "{kept}: {kept:?}"
        );
        assert!(kept.to_string().contains("translate-action"), "{kept}");
        assert!(translator.take_failure().is_none(), "taken once");
    }
}
