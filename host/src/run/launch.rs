//! What the CLI is started with: the agent settings a launch plan is asked for, and the
//! argv, environment, files and stdin built from the plan ([`launch_spec`]).

use super::RunOptions;
use super::locate::find_cli;
use super::setup::Dirs;
use crate::task::Task;
use crate::turn::live::LaunchSpec;
use coder_eval_scripted_model::ScriptedModel;
use harness_kit::{AgentSettings, LaunchPlan, PromptDelivery};

/// The settings a harness's launch plan is asked for; `model_base_url` = the scripted
/// model's address, when one plays the task.
pub(super) fn agent_settings(task: &Task, model_base_url: Option<String>) -> AgentSettings {
    AgentSettings {
        model: task.agent.model.clone(),
        allowed_tools: task.agent.allowed_tools.clone(),
        disallowed_tools: task.agent.disallowed_tools.clone(),
        permission_mode: task.agent.permission_mode.clone(),
        system_prompt: task.agent.system_prompt.clone(),
        api_key: model_base_url.as_ref().map(|_| "sk-test".to_string()),
        model_base_url,
        // SAFETY: geteuid has no preconditions.
        as_root: unsafe { libc::geteuid() } == 0,
        // The agent fields of harness@0.2.0 are not read from task files yet.
        ..Default::default()
    }
}

/// argv, environment and stdin for the CLI. The environment is built from nothing:
/// PATH, HOME, LANG, TERM, the plan's variables, loopback proxies when the scripted
/// model is used (so phone-home attempts reach it and are refused), and `--pass-env`.
pub(super) fn launch_spec(
    task: &Task,
    plan: &LaunchPlan,
    setup: &Dirs,
    model: Option<&ScriptedModel>,
    options: &RunOptions,
) -> Result<LaunchSpec, String> {
    let program =
        find_cli(&plan.argv[0], options.cli_override.as_deref()).map_err(|e| e.to_string())?;
    let subst = |s: &str| {
        s.replace("{{home}}", &setup.home.display().to_string())
            .replace("{{workspace}}", &setup.workspace.display().to_string())
    };
    for file in &plan.files {
        let path = setup.home.join(&file.path);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
        }
        std::fs::write(&path, subst(&file.content))
            .map_err(|e| format!("{}: {e}", path.display()))?;
    }
    let mut args: Vec<String> = plan.argv[1..].iter().map(|a| subst(a)).collect();
    let stdin = match plan.prompt {
        PromptDelivery::ArgvAt(i) => {
            let i = (i as usize).clamp(1, plan.argv.len()) - 1;
            args.insert(i, task.prompt.clone());
            None
        }
        PromptDelivery::Stdin => Some(task.prompt.clone()),
    };
    let mut path = crate::workspace::host_path();
    if let Some(dir) = program.parent() {
        path = format!("{}:{path}", dir.display());
    }
    // The task's mock commands and `.venv` come first, before the CLI's own folder.
    let workspace_vars = setup.env.vars(&path);
    let path = setup.env.path(&path).unwrap_or(path);
    let mut env: Vec<(String, String)> = vec![
        ("PATH".into(), path),
        ("HOME".into(), setup.home.display().to_string()),
        ("LANG".into(), "C.UTF-8".into()),
        ("TERM".into(), "dumb".into()),
    ];
    if let Some(model) = model {
        let proxy = model.base_url();
        for key in ["HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy"] {
            env.push((key.into(), proxy.clone()));
        }
        for key in ["NO_PROXY", "no_proxy"] {
            env.push((key.into(), "127.0.0.1,localhost".into()));
        }
    }
    env.extend(workspace_vars.into_iter().filter(|(k, _)| k != "PATH"));
    env.extend(plan.env.iter().map(|(k, v)| (k.clone(), subst(v))));
    for key in &options.pass_env {
        if let Ok(value) = std::env::var(key) {
            env.push((key.clone(), value));
        }
    }
    Ok(LaunchSpec {
        program,
        args,
        env,
        cwd: setup.workspace.clone(),
        stdin,
        pid_namespace: options.pid_namespace,
        turn_limit_codes: plan
            .exit_codes
            .iter()
            .filter(|e| e.kind == "turn_limit")
            .map(|e| e.code)
            .collect(),
    })
}
