//! Tool results: a `tool_result` block in a `user` line ends its call (a refusal by the
//! permission rules, a call Claude Code's own security checks blocked, a call its input
//! checks blocked (`<tool_use_error>Blocked: …`), or a call to a tool that does not exist,
//! as denied: it never ran; a
//! failed Bash command with its exit code), and
//! `result.permission_denials` ends as denied a listed call no result ended.

use super::wire::{Block, Line, ResultContent};
use super::{ClaudeReducer, Dialect};
use crate::{Event, ToolStatus, excerpt};

impl ClaudeReducer {
    /// `result.permission_denials`: a listed call not yet finished is finished as denied.
    /// One already finished with an error result without an exit code (a refusal text not
    /// known here) gets a second,
    /// denied end: the host re-marks an errored call denied. One whose result was ok, or
    /// carried an exit code, ran: it stays. Both are noted.
    pub(super) fn denials(&mut self, parsed: &Line, out: &mut Vec<Event>) {
        for denial in &parsed.permission_denials {
            let Some(call_id) = denial.tool_use_id.as_deref() else {
                continue;
            };
            if self.tools_denied.contains(call_id) {
                continue;
            }
            let tool = denial.tool_name.as_deref().unwrap_or("?");
            if self.tools_finished.insert(call_id.to_string()) {
                self.tools_denied.insert(call_id.to_string());
                if self.tools_started.contains(call_id) {
                    out.push(Event::ToolCallFinished {
                        call_id: call_id.to_string(),
                        status: ToolStatus::Denied,
                        output_excerpt: String::new(),
                        exit_code: None,
                        cli_duration_ms: None,
                    });
                }
            } else if !self.tools_failed_silently.contains(call_id) {
                out.push(Event::diagnostic(
                    "permission_denial",
                    format!(
                        "`result.permission_denials` says {tool} call `{call_id}` was refused, \
                         but its tool_result (not a known refusal) already ended it: the call \
                         stays as that result said"
                    ),
                    b"",
                ));
            } else {
                self.tools_denied.insert(call_id.to_string());
                out.push(Event::diagnostic(
                    "permission_denial",
                    format!(
                        "`result.permission_denials` says {tool} call `{call_id}` was refused, \
                         and its error result (not a refusal text known here) did not say it \
                         ran: re-marked denied"
                    ),
                    b"",
                ));
                out.push(Event::ToolCallFinished {
                    call_id: call_id.to_string(),
                    status: ToolStatus::Denied,
                    output_excerpt: String::new(),
                    exit_code: None,
                    cli_duration_ms: None,
                });
            }
        }
    }

    pub(super) fn user(&mut self, parsed: &Line, out: &mut Vec<Event>) {
        let blocks: &[Block] = parsed.message.as_ref().map_or(&[], |m| &m.content);
        for block in blocks {
            if block.kind.as_deref() != Some("tool_result") {
                continue;
            }
            let Some(call_id) = block.tool_use_id.as_deref() else {
                continue;
            };
            if !self.tools_finished.insert(call_id.to_string()) {
                continue;
            }
            let is_error = block.is_error == Some(true);
            let output = result_text(block.content.as_ref());
            let denied = is_error
                && (is_permission_refusal(&output)
                    || is_unknown_tool(&output)
                    || match self.dialect {
                        Dialect::ClaudeCode => {
                            is_security_block(&output) || is_blocked_unrun(&output)
                        }
                        Dialect::QwenCode => is_qwen_not_run(&output),
                    });
            let exit_code = if is_error && !denied {
                exit_code_of(&output, self.dialect)
            } else {
                None
            };
            if is_error && !denied && exit_code.is_none() {
                self.tools_failed_silently.insert(call_id.to_string());
            }
            if denied {
                self.tools_denied.insert(call_id.to_string());
            }
            out.push(Event::ToolCallFinished {
                call_id: call_id.to_string(),
                status: if denied {
                    ToolStatus::Denied
                } else if is_error {
                    ToolStatus::Error
                } else {
                    ToolStatus::Ok
                },
                output_excerpt: excerpt(&output, self.config.excerpt_bytes as usize),
                exit_code,
                cli_duration_ms: None,
            });
        }
    }
}

/// What Claude Code 2.1.x writes as the `tool_result` of a call its permission rules or
/// mode refused (strings of its binary): the call never ran.
const REFUSALS: [&str; 4] = [
    // No rule allows it and no one can be asked (`-p` without a bypass).
    "Claude requested permissions to use ",
    // A deny rule: "Permission to use Bash with command rm -rf / has been denied."
    "Permission to use ",
    // The auto-mode classifier.
    "Permission for this action has been denied",
    // An approval declined.
    "The user doesn't want to proceed with this tool use",
];

/// What Claude Code 2.1.x (2.1.197's binary) writes as the `tool_result` of a call its own
/// checks blocked, when no one can be asked (`-p`): the check's message as it is (the
/// call never ran; `result.permission_denials` lists it too).
/// - A path outside the allowed working directories: "rm in '/ws/build' was blocked. For
///   security, Claude Code may only remove files from the allowed working directories for
///   this session: '/ws'." (also "Edit targeting '…' was blocked. For security, …",
///   "Output redirection to '…' was blocked. For security, …"), or one a deny rule
///   covers: "Output redirection to '…' was blocked by a deny rule.".
/// - A Bash command its parser cannot analyse statically ("too complex"): the reason, as
///   `Contains <node type>` ("Contains simple_expansion", "Contains command_substitution"),
///   "Contains shell syntax (<node type>) that cannot be statically analyzed", or a fixed
///   "Contains …" ("Contains control characters", "Contains Unicode whitespace", …).
/// - The approval texts of its rules and modes: "Current permission mode (…) requires
///   approval for this Bash command", "Permission rule '…' from … requires approval for
///   this …", "This Bash command contains multiple operations. The following part
///   requires approval: …", "Hook '…' blocked this action: …".
const SECURITY_BLOCKS: [&str; 3] = [
    " was blocked. For security, Claude Code may only ",
    " was blocked by a deny rule.",
    " requires approval for this ",
];

/// Whether an error `tool_result`'s text is one of Claude Code's own security checks
/// ([`SECURITY_BLOCKS`]; a `Contains …` reason of its Bash parser) rather than the tool's
/// failure: a failed Bash command says "Exit code N" first, other tools wrap their errors
/// in `<tool_use_error>`.
fn is_security_block(output: &str) -> bool {
    let text = output.trim_start();
    if text.starts_with("<tool_use_error>") || text.starts_with("Exit code ") {
        return false;
    }
    let first = text.lines().next().unwrap_or("");
    SECURITY_BLOCKS.iter().any(|b| text.contains(b))
        || (first.starts_with("Contains ") && first.len() < 200)
        || first.starts_with("This Bash command contains multiple operations")
        || (first.starts_with("Hook '") && first.contains("' blocked this action"))
}

/// Whether an error `tool_result`'s text is a call Claude Code's input checks blocked
/// before it ran (2.1.332: `<tool_use_error>Blocked: …</tool_use_error>`). Every such
/// message in 2.1.332's binary is a refusal: a Bash command whose first part is `sleep N`
/// with N ≥ 25 ("Blocked: sleep 31.4159 followed by: echo imported. To wait for a
/// condition, use Monitor …", "Blocked: standalone sleep 25. …"; PowerShell's
/// "Blocked: Start-Sleep …"), a hook that could not check the call ("Blocked: Claude Code
/// could not work out which hooks apply to this call, …", "Blocked: this call's input
/// can't be written as JSON, …"), or the auto-mode classifier unavailable. Other
/// `<tool_use_error>` texts are the tool's own errors ("File has not been read yet. …").
/// The call is not in `result.permission_denials`.
fn is_blocked_unrun(output: &str) -> bool {
    output
        .trim_start()
        .strip_prefix("<tool_use_error>")
        .is_some_and(|text| text.starts_with("Blocked: "))
}

/// Whether a Qwen Code (0.24.x) error `tool_result` says the call never ran (its texts, in
/// its installed `chunks/*.js`): the model called a tool it does not have (`Tool "x" not
/// found in registry. Tools must use the exact names that are registered.…`, or the MCP
/// and opt-in forms `Tool "x" not found: …`, `Tool "x" is unavailable: …`, `Tool "x" is
/// blocked by the permissions.deny or --exclude-tools rule …`, `Tool "x" has been disabled
/// for this workspace …`, `"x" is a skill name, not a tool name.…`), or its shell tool
/// refused the command before running it (`Blocked: …`: a blocking `sleep`, a command
/// that would kill Qwen Code itself).
fn is_qwen_not_run(output: &str) -> bool {
    let text = output.trim_start();
    if text.starts_with("Blocked: ") {
        return true;
    }
    let Some(rest) = text
        .strip_prefix('"')
        .or_else(|| text.strip_prefix("Tool \""))
    else {
        return false;
    };
    let Some((_, after)) = rest.split_once('"') else {
        return false;
    };
    if text.starts_with('"') {
        return after.starts_with(" is a skill name, not a tool name.");
    }
    [
        " not found in registry.",
        " not found: ",
        " is unavailable: ",
        " is blocked by the permissions.deny",
        " has been disabled for this workspace",
    ]
    .iter()
    .any(|form| after.starts_with(form))
}

/// Whether an error `tool_result`'s text says the model called a tool Claude Code does
/// not have (2.1.x: `<tool_use_error>Error: No such tool available: <name></tool_use_error>`):
/// the call never ran, like a refused one.
fn is_unknown_tool(output: &str) -> bool {
    let text = output.trim_start();
    let text = text.strip_prefix("<tool_use_error>").unwrap_or(text);
    text.starts_with("Error: No such tool available: ")
}

/// Whether an error `tool_result`'s text is a refusal rather than the tool's own failure
/// (which Bash reports as "Exit code N" and others with their own message).
fn is_permission_refusal(output: &str) -> bool {
    let text = output.trim_start();
    REFUSALS.iter().any(|r| text.starts_with(r))
        && (text.contains("haven't granted")
            || text.contains("has been denied")
            || text.contains("doesn't want to proceed"))
}

/// A tool_result's content: a string, or the text of its text blocks, one per line.
fn result_text(content: Option<&ResultContent>) -> String {
    match content {
        Some(ResultContent::Text(s)) => s.to_string(),
        Some(ResultContent::List(blocks)) => blocks
            .iter()
            .filter_map(|b| b.text.as_deref())
            .collect::<Vec<_>>()
            .join("\n"),
        None => String::new(),
    }
}

/// Claude Code's Bash tool reports a failed command as "Exit code N\n<output>"; Qwen
/// Code's `run_shell_command` as lines "Command: …", "Output: …", "Exit Code: N", ….
fn exit_code_of(output: &str, dialect: Dialect) -> Option<i32> {
    if dialect == Dialect::QwenCode {
        return output
            .lines()
            .find_map(|l| l.strip_prefix("Exit Code: "))?
            .trim()
            .parse()
            .ok();
    }
    output
        .strip_prefix("Exit code ")?
        .split(|c: char| !c.is_ascii_digit() && c != '-')
        .next()?
        .parse()
        .ok()
}
