//! The run layer's [`AgentRunner`]: an `agent_judge` runs as a task of its own through
//! the same machinery as the agent ([`prepare`](super::prepare), [`run_one`](super::run_one)):
//! its workspace is filled from the copy the criterion made, its HOME is fresh (no user
//! settings), it plays its `scripted_model` or reaches the real model with the variables
//! handed to judges, and its own `task.json` and recording land in
//! `<task result>/judges/judge-<n>/<harness>/`.

use super::{RunOptions, prepare, run_one};
use crate::grading::judge::JudgeUsage;
use crate::grading::judge::agent::{AgentRunner, JudgeRun, JudgeRunRequest};
use crate::limits::RunLimitsSpec;
use crate::results::{StampedEvent, TaskStatus};
use crate::task::{AgentSpec, SandboxSpec, Task};
use harness_kit::Event;
use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Runs `agent_judge` CLIs for one task's grading.
pub(crate) struct JudgeRunner {
    /// The run's options, with `out_dir` the folder judges write into: for a judge that
    /// plays a script (the CLI gets `--pass-env`'s variables only)...
    scripted: RunOptions,
    /// ...and for one that reaches a real model (plus the judges' own, `--judge-env`).
    real: RunOptions,
    /// The task file's folder (the judge task's `dir`).
    task_dir: PathBuf,
    next: AtomicUsize,
}

impl JudgeRunner {
    /// Judges of the task whose results are in `result_dir`; the CLI gets `--pass-env`'s
    /// variables and the judges' own (`--judge-env`).
    pub(crate) fn new(options: &RunOptions, result_dir: PathBuf, task_dir: PathBuf) -> JudgeRunner {
        let mut scripted = options.clone();
        scripted.out_dir = result_dir.join("judges");
        scripted.script_override = None;
        let mut real = scripted.clone();
        for name in options.judge_env.clone() {
            if !real.pass_env.contains(&name) {
                real.pass_env.push(name);
            }
        }
        JudgeRunner {
            scripted,
            real,
            task_dir,
            next: AtomicUsize::new(1),
        }
    }

    async fn run(&self, r: JudgeRunRequest) -> Result<JudgeRun, String> {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        let options = if r.scripted_model.is_some() {
            &self.scripted
        } else {
            &self.real
        };
        let task = Task {
            path: self.task_dir.join("agent_judge"),
            dir: self.task_dir.clone(),
            task_id: format!("judge-{n}"),
            description: Some("agent_judge".into()),
            prompt: r.prompt,
            agent: AgentSpec {
                harness: Some(r.harness.clone()),
                model: Some(r.model),
                allowed_tools: r.allowed_tools,
                disallowed_tools: r.disallowed_tools,
                permission_mode: r.permission_mode.filter(|m| m != "bypassPermissions"),
                system_prompt: Some(r.system_prompt),
                scripted_model: r.scripted_model,
                ..AgentSpec::default()
            },
            run_limits: RunLimitsSpec {
                max_turns: Some(r.max_turns),
                turn_timeout: Some(r.turn_timeout),
                ..RunLimitsSpec::default()
            },
            sandbox: SandboxSpec {
                template_dir: Some(r.workdir),
                ..SandboxSpec::default()
            },
            tags: Vec::new(),
            skip: false,
            reference: None,
            pre_run: Vec::new(),
            post_run: Vec::new(),
            success_criteria: Vec::new(),
            expected_commands: None,
            retry: Default::default(),
            row: None,
            load_notes: Vec::new(),
        };
        let prepared = prepare(vec![task], &[r.harness], options)
            .map_err(|e| crate::grading::error_chain(&e))?;
        let mut result = None;
        for p in prepared {
            // The judge's CLI stops with the host's interrupt, as the agent's does.
            result = Some(run_one(p, options, crate::interrupt::cancel_on_interrupt()).await);
        }
        let result = result.ok_or("the judge was not prepared")?;
        let Some(turn) = result.turn else {
            return Err(result
                .error
                .unwrap_or_else(|| "the judge's CLI did not run".into()));
        };
        let final_text = turn.final_text().map(str::to_string);
        let trajectory = turn
            .tool_calls
            .iter()
            .map(|c| StampedEvent {
                line: 0,
                stamp_us: c.started_ms * 1000,
                event: Event::ToolCallStarted {
                    call_id: c.call_id.clone(),
                    name: c.name.clone(),
                    input_json: c.input.to_string(),
                    parent_call_id: c.parent_call_id.clone(),
                },
            })
            .collect();
        Ok(JudgeRun {
            trajectory,
            final_text,
            // Absent when the judge CLI's stream reported none (never zeros).
            usage: turn.usage.map(|u| JudgeUsage {
                input_tokens: Some(u.input_tokens),
                output_tokens: Some(u.output_tokens),
                cache_read_tokens: Some(u.cache_read_tokens),
                cache_write_tokens: u.cache_write_tokens,
            }),
            cost_usd: turn.cost_usd,
            failure: (result.status == TaskStatus::Error || result.status == TaskStatus::Timeout)
                .then(|| {
                    result
                        .error
                        .unwrap_or_else(|| format!("{:?}", result.status))
                }),
        })
    }
}

impl AgentRunner for JudgeRunner {
    fn run_judge<'a>(
        &'a self,
        request: JudgeRunRequest,
    ) -> Pin<Box<dyn Future<Output = Result<JudgeRun, String>> + Send + 'a>> {
        Box::pin(self.run(request))
    }
}
