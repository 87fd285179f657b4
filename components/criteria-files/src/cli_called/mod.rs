//! `cli_called`: did the agent invoke a CLI with these arguments? Reads a structured
//! invocation log in the workspace — JSON Lines, one object per invocation with at least
//! an `argv` list of strings (coder_eval's `record_cli` shims write it; `tool`, `exit`,
//! `ts` may be there too) — and counts the records that match, argument by argument.
//!
//! Params (coder_eval's `CliCalledCriterion`):
//! - `log`: the log, workspace-relative (default `cli_mocks/calls.jsonl`);
//! - `verb` (a whitespace-separated subcommand chain that must be an ordered prefix of the
//!   non-flag arguments, compared token by token) or `verb_any_of` (alternative verbs);
//! - `tool`: only records whose `tool` equals this;
//! - `positional`: non-flag arguments that must follow the verb, in order (a prefix);
//! - `flags`: flag name (no dashes) → predicate: a bare string (= `equals`) or exactly one
//!   of `equals`, `contains`, `matches_regex` (with `flags`, Python `re` numbers), `any_of`
//!   (non-empty), `absent: true`, `present: true`; plus `aliases` (other names of the same
//!   flag). Unlisted flags are ignored;
//! - `value_flags` (default `[output]`): flags that take the next token as their value
//!   (the keys of `flags` with a value predicate do too; every other flag is a switch);
//! - `ignore_flags` (default `[output]`): flags dropped before matching;
//! - `min_count` (default 1), `max_count` (optional).
//!
//! Argument splitting: `--name=value` binds; `--` ends the flags; a lone `-` and a bare
//! negative number are positional; `-abc` is three switches unless `-a` takes a value
//! (`-avalue`) or `abc` is a declared name.
//!
//! Score (binary, unlike `command_executed`): 1 when `min_count ≤ matches ≤ max_count`.
//! A missing log, a `<log>.error` sentinel beside it (a record the shim could not write),
//! a record carrying `sidecar_error` or `rule_error`, or any unusable line (not JSON, not
//! an object, `argv` not a list of strings) is an error, score 0: the log cannot be
//! trusted, and a `max_count: 0` guard must not pass on it.

use criteria_common::{Target, read_target};
use grader_kit::{GradingInput, Verdict};
use serde_json::Value;
use std::collections::BTreeMap;

/// Where coder_eval's `record_cli` writes its log (`cli_mocks/calls.jsonl`).
pub const DEFAULT_LOG: &str = "cli_mocks/calls.jsonl";

mod spec;
pub use spec::validate;
use spec::{Spec, check, is_number};

/// Splits `argv` into its non-flag arguments and its flags (name → values; a switch has
/// the value `""`).
fn split(spec: &Spec, argv: &[String]) -> (Vec<String>, BTreeMap<String, Vec<String>>) {
    let mut positional = Vec::new();
    let mut flags: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut record = |name: &str, value: &str| {
        if !spec.ignore_flags.contains(name) {
            flags
                .entry(name.to_string())
                .or_default()
                .push(value.to_string());
        }
    };
    let mut i = 0;
    let mut end_of_flags = false;
    while i < argv.len() {
        let token = &argv[i];
        i += 1;
        if end_of_flags || !token.starts_with('-') || token == "-" {
            positional.push(token.clone());
            continue;
        }
        if token == "--" {
            end_of_flags = true;
            continue;
        }
        if let Some((name, value)) = token.split_once('=') {
            record(name.trim_start_matches('-'), value);
            continue;
        }
        let name = token.trim_start_matches('-');
        let known = spec.value_flags.contains(name) || spec.known.contains(name);
        if !known && is_number(name) {
            positional.push(token.clone());
            continue;
        }
        if !known && !token.starts_with("--") && name.chars().count() > 1 {
            let mut chars = name.chars();
            let head = chars.next().unwrap().to_string();
            if spec.value_flags.contains(&head) {
                record(&head, chars.as_str());
            } else {
                for c in name.chars() {
                    record(&c.to_string(), "");
                }
            }
            continue;
        }
        if spec.value_flags.contains(name) && i < argv.len() {
            record(name, &argv[i]);
            i += 1;
        } else {
            record(name, "");
        }
    }
    (positional, flags)
}

fn matches(spec: &Spec, argv: &[String], record: &serde_json::Map<String, Value>) -> bool {
    if let Some(tool) = &spec.tool
        && record.get("tool").and_then(Value::as_str) != Some(tool.as_str())
    {
        return false;
    }
    let (positional, flags) = split(spec, argv);
    let mut offset = 0;
    if !spec.verbs.is_empty() {
        match spec
            .verbs
            .iter()
            .find(|v| positional.len() >= v.len() && positional[..v.len()] == v[..])
        {
            Some(v) => offset = v.len(),
            None => return false,
        }
    }
    if let Some(want) = &spec.positional {
        let end = offset + want.len();
        if positional.len() < end || positional[offset..end] != want[..] {
            return false;
        }
    }
    spec.flags.iter().all(|(key, flag)| {
        let values: Vec<String> = flag
            .names(key)
            .flat_map(|n| flags.get(n).cloned().unwrap_or_default())
            .collect();
        flag.holds((!values.is_empty()).then_some(values.as_slice()))
    })
}

/// Grades `cli_called`.
pub fn grade(input: &GradingInput) -> Result<Verdict, String> {
    let spec = check(&input.params)?;
    let content = match read_target(input, &spec.log)? {
        Target::One(_, content) => content,
        Target::Missing(why) => return Err(format!("invocation log: {why}")),
    };
    let sentinel = format!("{}.error", spec.log);
    if let Target::One(_, text) = read_target(input, &sentinel)? {
        let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        return Err(format!(
            "the recorder could not write to `{}` ({} dropped record(s)); the log is \
             incomplete, so the verdict cannot be trusted. First: {}",
            spec.log,
            lines.len(),
            lines.first().unwrap_or(&"?")
        ));
    }
    let mut usable = Vec::new();
    let mut unusable = 0usize;
    for line in content.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let Ok(Value::Object(record)) = serde_json::from_str::<Value>(line) else {
            unusable += 1;
            continue;
        };
        let argv: Option<Vec<String>> =
            record.get("argv").and_then(Value::as_array).and_then(|a| {
                a.iter()
                    .map(|x| x.as_str().map(String::from))
                    .collect::<Option<Vec<String>>>()
            });
        match argv {
            Some(argv) => usable.push((argv, record)),
            None => unusable += 1,
        }
    }
    for key in ["sidecar_error", "rule_error"] {
        let broken: Vec<&Value> = usable
            .iter()
            .filter_map(|(_, r)| r.get(key).filter(|v| !v.is_null()))
            .collect();
        if let Some(first) = broken.first() {
            return Err(format!(
                "`{}`: {} record(s) carry `{key}` (the recorder's response rules did not run \
                 as the task described). First: {first}",
                spec.log,
                broken.len()
            ));
        }
    }
    if unusable > 0 {
        return Err(format!(
            "invocation log `{}` has {unusable} unusable record(s) (not JSON, not an object, \
             or `argv` not a list of strings); the verdict cannot be trusted",
            spec.log
        ));
    }
    let count = usable
        .iter()
        .filter(|(argv, record)| matches(&spec, argv, record))
        .count() as u64;
    let within = count >= spec.min_count && spec.max_count.is_none_or(|max| count <= max);
    let mut bound = format!("min_count={}", spec.min_count);
    if let Some(max) = spec.max_count {
        bound.push_str(&format!(", max_count={max}"));
    }
    let mut facets = Vec::new();
    if let Some(t) = &spec.tool {
        facets.push(format!("tool={t:?}"));
    }
    if !spec.verbs.is_empty() {
        facets.push(format!(
            "verb={:?}",
            spec.verbs
                .iter()
                .map(|v| v.join(" "))
                .collect::<Vec<_>>()
                .join(" | ")
        ));
    }
    if let Some(p) = &spec.positional {
        facets.push(format!("positional={p:?}"));
    }
    if !spec.flags.is_empty() {
        facets.push(format!("flags={:?}", spec.flags.keys().collect::<Vec<_>>()));
    }
    let wanted = facets.join(", ");
    let details = if within {
        format!("{count} invocation(s) matched ({wanted}); satisfies {bound}")
    } else if count < spec.min_count {
        let sample: Vec<String> = usable
            .iter()
            .take(3)
            .map(|(argv, _)| grader_kit::truncate(&argv.join(" "), 120))
            .collect();
        let more = usable.len().saturating_sub(3);
        format!(
            "{count} invocation(s) matched ({wanted}); needs {bound}. {} invocation(s) \
             recorded in `{}`{}{}",
            usable.len(),
            spec.log,
            if sample.is_empty() {
                String::new()
            } else {
                format!(". Recorded: {}", sample.join("; "))
            },
            if more > 0 {
                format!(" (+{more} more)")
            } else {
                String::new()
            }
        )
    } else {
        format!("{count} invocation(s) matched ({wanted}) but {bound} forbids it")
    };
    Ok(Verdict::binary(within, details))
}

#[cfg(test)]
mod tests;
