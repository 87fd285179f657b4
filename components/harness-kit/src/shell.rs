//! Shell commands as agents run them: the command of a tool input, and the script inside
//! a `bash -lc '...'` / `sh -c "..."` wrapper.
//!
//! The one definition of "the shell command of a tool call": the reducers (Codex's
//! `exec_command` input), the host's turn record (`TurnRecord.commands`) and the graders
//! (`grader_kit::ToolUse::shell_command`, which re-exports this module) all read it here,
//! so they cannot disagree.

use serde_json::Value;

/// The shell command of a tool call, from its input (the tool's name does not matter: any
/// call whose input has a `command` or `cmd` runs a command). That field as a string; an
/// argv array is joined with shell quoting, so `["bash", "-lc", "ls -a"]` reads
/// `bash -lc 'ls -a'` and splits back ([`split_shell`]) into the same words. Failing
/// both, a `commands` list of strings (Cline's `run_commands`, which runs each in turn)
/// reads as the lines of one script. `None` when the input has none of these fields, or
/// it is neither a string nor an array of strings. Wrappers are kept: see
/// [`unwrap_shell`].
pub fn shell_command(input: &Value) -> Option<String> {
    let Some(value) = input.get("command").or_else(|| input.get("cmd")) else {
        let lines: Option<Vec<&str>> = input
            .get("commands")?
            .as_array()?
            .iter()
            .map(Value::as_str)
            .collect();
        return lines.filter(|l| !l.is_empty()).map(|l| l.join("\n"));
    };
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Array(items) => {
            let words: Option<Vec<&str>> = items.iter().map(Value::as_str).collect();
            Some(
                words?
                    .iter()
                    .map(|w| quote(w))
                    .collect::<Vec<_>>()
                    .join(" "),
            )
        }
        _ => None,
    }
}

/// The script inside shell wrappers: `bash -lc 'python3 app.py'` → `python3 app.py`,
/// for `bash`, `sh`, `zsh`, `dash` and `ksh` (by path or name) with any flag group
/// holding `c` (`-c`, `-lc`, `-ic`, `-l -c`), nested wrappers too. A command that is not
/// a wrapper, or that does not split as shell words, comes back unchanged.
pub fn unwrap_shell(command: &str) -> String {
    let mut current = command.trim().to_string();
    for _ in 0..4 {
        match unwrap_once(&current) {
            Some(inner) => current = inner.trim().to_string(),
            None => break,
        }
    }
    current
}

fn unwrap_once(command: &str) -> Option<String> {
    let words = split_shell(command)?;
    let program = words.first()?;
    let name = program.rsplit('/').next().unwrap_or(program);
    if !matches!(name, "bash" | "sh" | "zsh" | "dash" | "ksh") {
        return None;
    }
    let mut i = 1;
    while let Some(word) = words.get(i) {
        if let Some(long) = word.strip_prefix("--") {
            if long.is_empty() {
                return None;
            }
            i += 1;
            continue;
        }
        let flags = word.strip_prefix('-')?;
        if flags.is_empty() || !flags.chars().all(|c| c.is_ascii_alphabetic()) {
            return None;
        }
        if flags.contains('c') {
            return words.get(i + 1).cloned();
        }
        i += 1;
    }
    None
}

/// Splits a command line into words the way a POSIX shell does for quoting: `'...'` is
/// literal, `"..."` honours `\"`, `\\`, `\$` and `` \` ``, a backslash outside quotes
/// escapes the next character. `None` when a quote is left open. No expansion is done.
pub fn split_shell(line: &str) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '\'' => break,
                        other => word.push(other),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '"' => break,
                        '\\' => match chars.next()? {
                            e @ ('"' | '\\' | '$' | '`') => word.push(e),
                            '\n' => {}
                            other => {
                                word.push('\\');
                                word.push(other);
                            }
                        },
                        other => word.push(other),
                    }
                }
            }
            '\\' => {
                in_word = true;
                match chars.next() {
                    Some('\n') => {}
                    Some(other) => word.push(other),
                    None => word.push('\\'),
                }
            }
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            other => {
                in_word = true;
                word.push(other);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    Some(words)
}

/// One word quoted for the shell when it needs it.
fn quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn splits_like_a_shell() {
        assert_eq!(
            split_shell(r#"echo 'a b' "c \"d\"" e\ f"#).unwrap(),
            vec!["echo", "a b", r#"c "d""#, "e f"]
        );
        assert_eq!(split_shell("  ").unwrap(), Vec::<String>::new());
        assert_eq!(split_shell("''").unwrap(), vec![""]);
        assert!(split_shell("echo 'open").is_none());
    }

    #[test]
    fn unwraps_shell_wrappers() {
        assert_eq!(unwrap_shell("bash -lc 'python3 app.py'"), "python3 app.py");
        assert_eq!(unwrap_shell(r#"/bin/sh -c "ls -la""#), "ls -la");
        assert_eq!(unwrap_shell("zsh -l -c 'echo hi'"), "echo hi");
        assert_eq!(
            unwrap_shell(r#"bash -lc "sh -c 'python3 app.py'""#),
            "python3 app.py"
        );
        assert_eq!(unwrap_shell("python3 app.py"), "python3 app.py");
        assert_eq!(unwrap_shell("bash script.sh"), "bash script.sh");
        assert_eq!(unwrap_shell("bash -lc 'open"), "bash -lc 'open");
        // Codex's `command_execution` lines.
        assert_eq!(unwrap_shell("/bin/bash -lc date"), "date");
        assert_eq!(unwrap_shell("/bin/zsh -lc 'ls .'"), "ls .");
        assert_eq!(unwrap_shell(r#"bash -lc 'echo '"'"'hi'"'"''"#), "echo 'hi'");
        assert_eq!(unwrap_shell(r#"/bin/sh -c "a \"b\" \$c""#), r#"a "b" $c"#);
        assert_eq!(
            unwrap_shell("go test ./...\n  -run X"),
            "go test ./...\n  -run X"
        );
        assert_eq!(unwrap_shell("python -c 'print(1)'"), "python -c 'print(1)'");
    }

    #[test]
    fn reads_command_fields() {
        assert_eq!(
            shell_command(&json!({"command": "ls"})).as_deref(),
            Some("ls")
        );
        assert_eq!(
            shell_command(&json!({"commands": ["date", "ls -a"]})).as_deref(),
            Some("date\nls -a")
        );
        assert_eq!(shell_command(&json!({"commands": []})), None);
        let argv = shell_command(&json!({"cmd": ["bash", "-lc", "python3 app.py"]})).unwrap();
        assert_eq!(argv, "bash -lc 'python3 app.py'");
        assert_eq!(unwrap_shell(&argv), "python3 app.py");
        assert_eq!(shell_command(&json!({"file_path": "x"})), None);
        assert_eq!(shell_command(&json!({"command": 3})), None);
    }
}
