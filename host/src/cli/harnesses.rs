//! `coder-eval harnesses`.

use super::print_stdout;
use coder_eval::components::{
    BUILTIN_HARNESSES, ComponentSource, EVENTS_AFTER_EXIT, NESTED_SUBAGENTS_TEXT,
    NESTED_SUBAGENTS_UNREPORTED, TOOL_RESULTS_UNREPORTED, parse_override,
};
use coder_eval::exit_codes;
use coder_eval::grading::error_chain;
use coder_eval::limits::limit_name;
use coder_eval::locate;
use coder_eval::runtime::harness::Launcher;
use harness_kit::{AgentSettings, LimitKind, RunLimits};
use std::path::PathBuf;

/// Lists the built-in harnesses, and those a `--components DIR` folder adds (`DIR/NAME.wasm`
/// for a name no built-in harness has), and whether their CLI is installed; with `--parity`,
/// prints for each harness and run limit whether the CLI enforces it natively, the host
/// enforces it, or a task using it is rejected at load. The table is generated from the
/// harness components' own launch plans, so it cannot drift from what runs.
#[derive(Debug, clap::Args)]
pub struct HarnessesArgs {
    /// Print the limits parity table (Markdown).
    #[arg(long)]
    parity: bool,
    /// Print JSON instead of Markdown.
    #[arg(long)]
    json: bool,
    /// A folder of replacement components (`<harness>.wasm`).
    #[arg(long, value_name = "DIR")]
    components: Option<PathBuf>,
    /// Replace one harness's component: NAME=PATH (repeatable).
    #[arg(long, value_name = "NAME=PATH", value_parser = parse_override)]
    component: Vec<(String, PathBuf)>,
}

const LIMITS: [LimitKind; 3] = [
    LimitKind::MaxTurns,
    LimitKind::MaxToolCalls,
    LimitKind::TurnTimeout,
];

pub fn run(args: HarnessesArgs) -> Result<i32, Box<dyn std::error::Error>> {
    let source = ComponentSource {
        dir: args.components,
        overrides: args.component.into_iter().collect(),
    };
    let mut rows = Vec::new();
    // The built-in harnesses, then those the `--components` folder adds.
    let listed: Vec<(String, Option<String>)> = BUILTIN_HARNESSES
        .iter()
        .map(|h| (h.name.to_string(), Some(h.program.to_string())))
        .chain(
            source
                .added_harnesses()
                .into_iter()
                .map(|h| (h.name, h.program)),
        )
        .collect();
    // A component that fails (does not load, its launch plan or `describe` traps) is
    // listed as failed, and the listing goes on.
    let mut failed = 0;
    for (name, program) in &listed {
        match row(name, program.as_deref(), &source) {
            Ok(row) => rows.push(row),
            Err(err) => {
                failed += 1;
                let component = source
                    .file_for(name)
                    .map_or_else(|| format!("builtin:{name}"), |p| p.display().to_string());
                // One line: a table row holds it.
                let error = error_chain(&*err)
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" ");
                eprintln!("error: harness `{name}` (component {component}) failed: {error}");
                rows.push(serde_json::json!({
                    "harness": name,
                    "program": program,
                    "component": component,
                    "error": error,
                }));
            }
        }
    }
    // Printed whole first: the exit code then says the folder holds a bad component.
    let code = if failed > 0 {
        exit_codes::USAGE
    } else {
        exit_codes::OK
    };
    if args.json {
        print_stdout(&(serde_json::to_string_pretty(&rows)? + "\n"));
        return Ok(code);
    }
    let mut text = String::new();
    if args.parity {
        text += "| harness | max_turns | max_tool_calls | turn_timeout | differences the CLI imposes |\n|---|---|---|---|---|\n";
        for r in &rows {
            if let Some(row) = failed_row(r, 5) {
                text += &row;
                continue;
            }
            let l = &r["limits"];
            let name = r["harness"].as_str().unwrap_or("");
            let mut differences = with_unreported_results(name, caveat_text(&r["caveats"]));
            if NESTED_SUBAGENTS_UNREPORTED.contains(&name) {
                differences = if differences == "none" {
                    NESTED_SUBAGENTS_TEXT.to_string()
                } else {
                    format!("{differences}; {NESTED_SUBAGENTS_TEXT}")
                };
            }
            if EVENTS_AFTER_EXIT.contains(&name) {
                differences += "; every event comes once the CLI exited: against a real \
                                model the host sees call N+1 only then (the limits act after \
                                the run, the turn_timeout excepted), and a run the host stops \
                                reports no call";
            }
            text += &format!(
                "| {} | {} | {} | {} | {} |\n",
                name,
                l["max_turns"].as_str().unwrap_or(""),
                l["max_tool_calls"].as_str().unwrap_or(""),
                l["turn_timeout"].as_str().unwrap_or(""),
                differences
            );
        }
        text += "\nhost-enforced: the host stops the CLI when call N+1 (or tool call N+1) \
                 begins. Against the scripted model, call N+1 is held where it is requested, \
                 so no harness acts on its reply; likewise the reply that would hand out \
                 tool call N+1 is held (never sent), so tool N+1 never runs on any harness. \
                 A reply whose parallel calls straddle max_tool_calls is held whole: fewer \
                 than N tools then run (the model never hands out part of a reply). Against \
                 a real model the host sees the call in the stream: a CLI that gets a reply \
                 at once may start its first tool within those milliseconds (its effects \
                 can reach the workspace though the turn does not count it). Native caps \
                 stop before the request is sent.\n";
        text += "\n| harness | agent fields honoured | budget_mode: time (resume) | contract |\n|---|---|---|---|\n";
        for r in &rows {
            if let Some(row) = failed_row(r, 4) {
                text += &row;
                continue;
            }
            let fields: Vec<&str> = r["agent_fields"]
                .as_array()
                .map(|a| a.iter().filter_map(|f| f.as_str()).collect())
                .unwrap_or_default();
            text += &format!(
                "| {} | {} | {} | {} |\n",
                r["harness"].as_str().unwrap_or(""),
                fields.join(", "),
                if r["resume"].as_bool() == Some(true) {
                    "yes: the session is resumed"
                } else {
                    "rejected at load (no resume)"
                },
                r["contract"].as_str().unwrap_or("")
            );
        }
        text += "\nA task that sets another agent field (plugins, setting_sources, \
                 claude_settings, system_prompt_mode: replace, thinking_level, variant, pure, \
                 sdk_options) is refused at load on that harness, naming the field. The fields are each \
                 component's own declaration (harness@0.2.0 `describe`; a harness@0.1.0 \
                 component honours the first five only and cannot resume).\n";
        text += "\n| harness | max_input/output/total_tokens | max_usd | stop_early | expected_turns / expected_tool_calls |\n|---|---|---|---|---|\n";
        for r in &rows {
            if let Some(row) = failed_row(r, 5) {
                text += &row;
                continue;
            }
            let l = &r["live_limits"];
            text += &format!(
                "| {} | {} | {} | {} | {} |\n",
                r["harness"].as_str().unwrap_or(""),
                l["max_output_tokens"].as_str().unwrap_or(""),
                l["max_usd"].as_str().unwrap_or(""),
                l["stop_early"].as_str().unwrap_or(""),
                l["expected_turns / expected_tool_calls"]
                    .as_str()
                    .unwrap_or(""),
            );
        }
        text += "\nBudgets count the normalized usage (input = uncached input, plus cache writes \
                 with count_cache_creation, plus cache reads with count_cached_input; over, \
                 not at, the budget stops) and the stream's own cost (never estimated from \
                 tokens). Where the stream reports a figure only in its final result, the \
                 budget is checked when the run ends, unless the CLI enforces it natively: \
                 the launch plan (harness@0.2.0) hands it the budget (Claude Code \
                 `--max-budget-usd`, which stops at, not over, the amount, after the message \
                 that reached it; the host still checks the final result).\n";
        text += "\n";
        text += DECIDE_WITHIN_RULE;
        text += "\n";
    } else {
        text += &format!("{:<12} {:<9} {}\n", "harness", "program", "installed CLI");
        for r in &rows {
            // A failed component: one line naming the harness, its file and the error.
            if let Some(error) = r["error"].as_str() {
                text += &format!(
                    "{:<12} {:<9} component {} failed: {error}\n",
                    r["harness"].as_str().unwrap_or(""),
                    r["program"].as_str().unwrap_or("-"),
                    r["component"].as_str().unwrap_or(""),
                );
                continue;
            }
            text += &format!(
                "{:<12} {:<9} {}\n",
                r["harness"].as_str().unwrap_or(""),
                r["program"].as_str().unwrap_or(""),
                r["installed"]
                    .as_str()
                    .unwrap_or("not installed (scripts/setup.sh installs the pinned CLIs)")
            );
            // A harness from a `--components` folder names its file.
            if let Some(component) = r["component"]
                .as_str()
                .filter(|c| !c.starts_with("builtin:"))
            {
                text += &format!("{:<12} {:<9} component {component}\n", "", "");
            }
        }
    }
    print_stdout(&text);
    Ok(code)
}

/// The Markdown row (`columns` cells) of a harness whose component failed, in each
/// `--parity` table: its name, then that its component failed and why; `None` for a
/// working one.
fn failed_row(r: &serde_json::Value, columns: usize) -> Option<String> {
    let error = r["error"].as_str()?;
    let mut cells = vec![
        r["harness"].as_str().unwrap_or("").to_string(),
        format!(
            "the component {} failed: {}",
            r["component"].as_str().unwrap_or(""),
            error.replace('|', "\\|")
        ),
    ];
    cells.resize(columns, String::new());
    Some(format!("| {} |\n", cells.join(" | ")))
}

/// One harness's row of the listing (`--json`'s shape): its component, CLI, launch plan,
/// capabilities and how each limit is enforced. Errors: the component does not load, or
/// its launch plan or `describe` traps.
fn row(
    name: &str,
    program: Option<&str>,
    source: &ComponentSource,
) -> Result<serde_json::Value, Box<dyn std::error::Error>> {
    let loaded = source.harness(name)?;
    let mut launcher = Launcher::new(&loaded)?;
    let settings = AgentSettings {
        model_base_url: Some("http://127.0.0.1:9".into()),
        api_key: Some("sk-test".into()),
        ..Default::default()
    };
    let limits = RunLimits {
        max_turns: Some(2),
        max_tool_calls: Some(10),
        turn_timeout_ms: Some(60_000),
        budgets: harness_kit::BudgetLimits {
            max_input_tokens: Some(1_000_000),
            max_output_tokens: Some(100_000),
            max_total_tokens: Some(1_000_000),
            max_usd: Some(1.0),
            ..Default::default()
        },
    };
    let plan = launcher.plan(&settings, &limits)?;
    let enforcement: Vec<(&str, &str)> = LIMITS
        .iter()
        .map(|&kind| {
            let how = match &plan {
                Err(_) => "rejected at load",
                Ok(p) if p.unsupported_limits.contains(&kind) => "rejected at load",
                Ok(p) if p.native_limits.contains(&kind) => "native + host backstop",
                Ok(_) => "host-enforced",
            };
            (limit_name(kind), how)
        })
        .collect();
    let caveats: Vec<String> = match &plan {
        Ok(p) => p
            .caveats
            .iter()
            .map(|c| {
                serde_json::to_value(c)
                    .unwrap_or_default()
                    .as_str()
                    .unwrap_or("")
                    .to_string()
            })
            .collect(),
        Err(_) => Vec::new(),
    };
    let exit_codes = plan
        .as_ref()
        .map(|p| p.exit_codes.clone())
        .unwrap_or_default();
    let installed = program.and_then(|p| locate::find_cli(p, None).ok());
    let described = coder_eval::run::caps::describe_with(&mut launcher)?;
    let caps = &described.caps;
    let agent_fields: Vec<&str> = caps.agent_fields.iter().map(|f| f.task_key()).collect();
    // The limits the host enforces from the stream: token and USD budgets (where the
    // stream reports the figures), stop_early (every harness: the host stops the group).
    let reporting = coder_eval::limits::budget::reporting(name);
    let no_usage = coder_eval::limits::budget::REPORTS_NO_USAGE.contains(&name);
    let tokens = match reporting {
        Some(r) => r.tokens_text(),
        None if no_usage => "rejected at load (the stream reports no usage)".to_string(),
        None => "unknown".to_string(),
    };
    let mut usd = match reporting {
        Some(r) => r
            .cost
            .map_or("rejected at load (the stream reports no cost)", |c| {
                c.as_str()
            })
            .to_string(),
        None if no_usage => "rejected at load (the stream reports no cost)".to_string(),
        None => "rejected at load".to_string(),
    };
    // A budget the launch plan hands the CLI (harness@0.2.0 `run-limits.budgets`).
    let native = |kind: LimitKind| plan.as_ref().is_ok_and(|p| p.native_limits.contains(&kind));
    if native(LimitKind::MaxUsd) {
        usd += " + native (the CLI stops itself between model calls)";
    }
    let mut live_limits = serde_json::Map::new();
    for (field, kind) in [
        ("max_input_tokens", LimitKind::MaxInputTokens),
        ("max_output_tokens", LimitKind::MaxOutputTokens),
        ("max_total_tokens", LimitKind::MaxTotalTokens),
    ] {
        let mut how = tokens.clone();
        if native(kind) {
            how += " + native (the CLI stops itself between model calls)";
        }
        live_limits.insert(field.into(), how.into());
    }
    live_limits.insert("max_usd".into(), usd.into());
    live_limits.insert(
        "stop_early".into(),
        if EVENTS_AFTER_EXIT.contains(&name) {
            "host-enforced on the event that decides, but after the run only: the CLI \
             reports its calls once it exited (grok-cli prints its transcript at the \
             end, Continue's calls are in its session file), so nothing stops it early; \
             a fail-stop decides the verdict and holds no command"
        } else if TOOL_RUNS_BEFORE_STREAMED.contains(&name) {
            "host-enforced, live, on the event that decides (a command counts once it \
             ran); a fail-stop cannot hold the forbidden command, even with \
             count_attempts (the CLI starts a tool before it streams the call): it \
             runs, and the turn stops right after"
        } else if STOP_HOLD_UNCHECKED.contains(&name) {
            "host-enforced, live, on the event that decides (a command counts once it \
             ran: the forbidden one runs, and the turn stops right after); whether \
             count_attempts holds it is not checked on this CLI yet: assume it may run"
        } else {
            "host-enforced, live, on the event that decides (a command counts once it \
             ran: the forbidden one runs, and the turn stops right after; with \
             count_attempts an attempt counts as the call starts, and the stop comes \
             before it runs)"
        }
        .into(),
    );
    live_limits.insert(
        "expected_turns / expected_tool_calls".into(),
        "a warning and a badge, never a stop".into(),
    );
    Ok(serde_json::json!({
        "harness": name,
        "program": program,
        "component": loaded.name.to_string(),
        "installed": installed.as_ref().map(|p| p.display().to_string()),
        "caveats": caveats,
        "agent_fields": agent_fields,
        "contract": format!("harness@{}", launcher.version()),
        "resume": caps.resume,
        "exit_codes": exit_codes,
        "limits": enforcement.iter().map(|(k, v)| (k.to_string(), serde_json::Value::from(*v))).collect::<serde_json::Map<_, _>>(),
        "live_limits": live_limits,
    }))
}

/// What `stop_early.decide_within: N` counts, as `harnesses --parity` states it (the
/// early-stop watcher's rule, `turn::early_stop`).
pub(crate) const DECIDE_WITHIN_RULE: &str = "stop_early.decide_within: N counts the tool \
     calls that finished and ran: a call the CLI denied (its permission rules or its own \
     security checks refused it, or the model called a tool the CLI does not have) never \
     ran and does not use up the budget; a criterion still undecided after N such calls, \
     with none in flight, fails (decision_budget_exceeded). The same on every harness.";

/// The built-in harnesses whose CLI starts a tool before it streams the call (so the
/// host sees a tool call only once it is running, or done): a fail-stop on that call
/// cannot keep the forbidden command from running, even one that counts attempts
/// (`count_attempts`: a call counts as it starts; by default only once it ran). Measured against the scripted model
/// (tasks/scenarios/early_fail: `echo step 2` reaches steps.txt on these; asserted in
/// tests/all/live_early_stop.rs).
pub(crate) const TOOL_RUNS_BEFORE_STREAMED: &[&str] = &["codex", "opencode", "gemini-cli", "kilo"];

/// The built-in harnesses the early_fail scenario has not been checked on yet (added
/// after that measurement): their stop_early row says so rather than promise a hold.
/// Kilo shares OpenCode's stream (tools reported once done), so it is in the list above.
pub(crate) const STOP_HOLD_UNCHECKED: &[&str] = &["qwen-code", "cline", "copilot", "letta"];

/// `caveats` (table text) with what a harness in [`TOOL_RESULTS_UNREPORTED`] cannot say.
fn with_unreported_results(harness: &str, caveats: String) -> String {
    let Some((_, files)) = TOOL_RESULTS_UNREPORTED.iter().find(|(h, _)| *h == harness) else {
        return caveats;
    };
    let words = format!(
        "the stream has no tool results: every tool call's outcome is unknown (no output, \
         no exit code; a failed command looks like any other), known to have ended only \
         when the next model call shows, so when max_turns holds the next call the last \
         allowed call's tools end interrupted and are not commands (command_executed on \
         them fails though they ran); it writes {files} into the workspace"
    );
    if caveats == "none" {
        words
    } else {
        format!("{caveats}; {words}")
    }
}

/// The caveats of one harness as table text.
fn caveat_text(caveats: &serde_json::Value) -> String {
    let list: Vec<&str> = caveats
        .as_array()
        .map(|a| a.iter().filter_map(|c| c.as_str()).collect())
        .unwrap_or_default();
    let words: Vec<&str> = list
        .iter()
        .map(|c| match *c {
            "parallel_calls_serialized" => {
                "one reply's tool calls stream one after another: each counts as a model call, so a max_turns cap can fire inside a reply whose other calls still run"
            }
            "shell_failures_unreported" => {
                "a failing shell command that printed output is reported as ok"
            }
            "tool_start_from_cli_duration" => {
                "tools appear only when finished: start placed by the CLI's duration"
            }
            "blocking_shell_refused" => {
                "a shell command starting with a sleep of 2 s or more followed by more commands is refused unrun (denied: no command)"
            }
            "tool_start_reported_late" => {
                "a tool's start reaches the stream late: its interval is short by that lag"
            }
            other => other,
        })
        .collect();
    if words.is_empty() {
        "none".into()
    } else {
        words.join("; ")
    }
}
