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

use criteria_common::{Target, check_path, read_target};
use grader_kit::{GradingInput, Verdict, params_as};
use regex::Regex;
use serde::Deserialize;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// Where coder_eval's `record_cli` writes its log (`cli_mocks/calls.jsonl`).
pub const DEFAULT_LOG: &str = "cli_mocks/calls.jsonl";

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CliCalled {
    #[serde(default = "default_log")]
    log: String,
    #[serde(default)]
    verb: Option<String>,
    #[serde(default)]
    verb_any_of: Option<Vec<String>>,
    #[serde(default)]
    tool: Option<String>,
    #[serde(default)]
    positional: Option<Vec<String>>,
    #[serde(default)]
    flags: Option<BTreeMap<String, FlagMatch>>,
    #[serde(default = "output")]
    value_flags: Vec<String>,
    #[serde(default = "output")]
    ignore_flags: Vec<String>,
    #[serde(default = "one")]
    min_count: u64,
    #[serde(default)]
    max_count: Option<u64>,
}

fn default_log() -> String {
    DEFAULT_LOG.into()
}
fn output() -> Vec<String> {
    vec!["output".into()]
}
fn one() -> u64 {
    1
}

/// One flag predicate; a bare string means `equals`.
#[derive(Deserialize)]
#[serde(untagged)]
enum FlagMatch {
    Equals(String),
    Full(Predicate),
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Predicate {
    #[serde(default)]
    equals: Option<String>,
    #[serde(default)]
    contains: Option<String>,
    #[serde(default)]
    matches_regex: Option<String>,
    #[serde(default)]
    any_of: Option<Vec<String>>,
    #[serde(default)]
    absent: bool,
    #[serde(default)]
    present: bool,
    #[serde(default)]
    aliases: Vec<String>,
    #[serde(default)]
    flags: u32,
}

/// A checked predicate.
enum Test {
    Equals(String),
    Contains(String),
    Regex(Regex),
    AnyOf(BTreeSet<String>),
    Absent,
    Present,
}

struct Flag {
    test: Test,
    aliases: Vec<String>,
}

impl Flag {
    fn names<'a>(&'a self, key: &'a str) -> impl Iterator<Item = &'a str> {
        std::iter::once(key).chain(self.aliases.iter().map(String::as_str))
    }
    fn needs_value(&self) -> bool {
        !matches!(self.test, Test::Absent | Test::Present)
    }
    /// `values` is None when the flag was not passed under any of its names.
    fn holds(&self, values: Option<&[String]>) -> bool {
        match (&self.test, values) {
            (Test::Absent, v) => v.is_none(),
            (Test::Present, v) => v.is_some(),
            (_, None) => false,
            (Test::Equals(want), Some(v)) => v.iter().any(|x| x == want),
            (Test::Contains(want), Some(v)) => v.iter().any(|x| x.contains(want.as_str())),
            (Test::AnyOf(set), Some(v)) => v.iter().any(|x| set.contains(x)),
            (Test::Regex(re), Some(v)) => v.iter().any(|x| re.is_match(x)),
        }
    }
}

/// The whole checked spec.
struct Spec {
    log: String,
    verbs: Vec<Vec<String>>,
    tool: Option<String>,
    positional: Option<Vec<String>>,
    flags: BTreeMap<String, Flag>,
    value_flags: BTreeSet<String>,
    ignore_flags: BTreeSet<String>,
    known: BTreeSet<String>,
    min_count: u64,
    max_count: Option<u64>,
}

/// Whether `text` reads as a number (Python's `float()`, near enough), so `-1` is a
/// value rather than a flag.
fn is_number(text: &str) -> bool {
    text.parse::<f64>().is_ok()
}

fn predicate(key: &str, m: FlagMatch) -> Result<Flag, String> {
    let p = match m {
        FlagMatch::Equals(s) => Predicate {
            equals: Some(s),
            ..Predicate::default()
        },
        FlagMatch::Full(p) => p,
    };
    let mut set = Vec::new();
    for (name, on) in [
        ("equals", p.equals.is_some()),
        ("contains", p.contains.is_some()),
        ("matches_regex", p.matches_regex.is_some()),
        ("any_of", p.any_of.is_some()),
        ("absent", p.absent),
        ("present", p.present),
    ] {
        if on {
            set.push(name);
        }
    }
    if set.len() != 1 {
        return Err(format!(
            "flags.{key}: exactly one of equals / contains / matches_regex / any_of / absent / \
             present, got {}",
            if set.is_empty() {
                "none".to_string()
            } else {
                set.join(", ")
            }
        ));
    }
    if p.flags != 0 && p.matches_regex.is_none() {
        return Err(format!(
            "flags.{key}: `flags` applies only to matches_regex, but the predicate is {}",
            set[0]
        ));
    }
    let test = if let Some(s) = p.equals {
        Test::Equals(s)
    } else if let Some(s) = p.contains {
        Test::Contains(s)
    } else if let Some(s) = p.matches_regex {
        Test::Regex(criteria_common::regex(
            &format!("flags.{key}.matches_regex"),
            &s,
            p.flags,
        )?)
    } else if let Some(list) = p.any_of {
        if list.is_empty() {
            return Err(format!(
                "flags.{key}.any_of must not be empty (it would match nothing)"
            ));
        }
        Test::AnyOf(list.into_iter().collect())
    } else if p.absent {
        Test::Absent
    } else {
        Test::Present
    };
    Ok(Flag {
        test,
        aliases: p.aliases,
    })
}

fn check(params: &Value) -> Result<Spec, String> {
    let p: CliCalled = params_as(params)?;
    check_path("log", &p.log)?;
    if p.min_count == 0 && p.max_count.is_none() {
        return Err(
            "min_count: 0 and no max_count can never fail; set max_count: 0 for a \
                    negative guard, or raise min_count"
                .into(),
        );
    }
    if let Some(max) = p.max_count
        && max < p.min_count
    {
        return Err(format!(
            "max_count ({max}) must be >= min_count ({})",
            p.min_count
        ));
    }
    if p.verb.is_some() && p.verb_any_of.is_some() {
        return Err("give verb or verb_any_of, not both".into());
    }
    if p.verb_any_of.as_ref().is_some_and(Vec::is_empty) {
        return Err("verb_any_of must not be empty: drop it to match any verb".into());
    }
    let verbs: Vec<Vec<String>> = p
        .verb
        .iter()
        .chain(p.verb_any_of.iter().flatten())
        .map(|v| v.split_whitespace().map(String::from).collect())
        .collect();
    for tokens in &verbs {
        if tokens.is_empty() {
            return Err(
                "verb must not be blank: a blank verb is an empty prefix and matches every \
                 invocation"
                    .into(),
            );
        }
        for t in tokens {
            if t.starts_with('-') && t != "-" && !is_number(t.trim_start_matches('-')) {
                let name = t.trim_start_matches('-');
                let name = name.split('=').next().unwrap_or(name);
                return Err(format!(
                    "verb token `{t}` looks like a flag; a verb matches only the non-flag \
                     arguments. Put it in `flags:` instead, e.g. flags: {{{name}: <value>}}"
                ));
            }
        }
    }
    for (i, a) in verbs.iter().enumerate() {
        for b in &verbs[i + 1..] {
            if a == b {
                return Err(format!("verb_any_of lists `{}` twice", a.join(" ")));
            }
            let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
            if long[..short.len()] == short[..] {
                return Err(format!(
                    "verb_any_of entry `{}` is a prefix of `{}`: the shorter one already \
                     accepts every invocation the longer one does",
                    short.join(" "),
                    long.join(" ")
                ));
            }
        }
    }
    if p.positional.as_ref().is_some_and(Vec::is_empty) {
        return Err("positional must not be empty: an empty list asserts nothing".into());
    }
    let flags_given = p.flags.as_ref().is_some_and(|f| !f.is_empty());
    if verbs.is_empty() && p.positional.is_none() && !flags_given && p.tool.is_none() {
        return Err("needs at least one of verb / verb_any_of / positional / flags / tool".into());
    }
    let mut flags = BTreeMap::new();
    let mut owner: BTreeMap<String, String> = BTreeMap::new();
    for (key, m) in p.flags.unwrap_or_default() {
        let flag = predicate(&key, m)?;
        if flag.aliases.contains(&key) {
            return Err(format!("flag `{key}` lists itself in aliases"));
        }
        for name in flag.names(&key) {
            if let Some(other) = owner.get(name)
                && other != &key
            {
                return Err(format!(
                    "flag name `{name}` is claimed by both `{other}` and `{key}` (via \
                     aliases); a flag can belong to only one predicate"
                ));
            }
            owner.insert(name.to_string(), key.clone());
        }
        flags.insert(key, flag);
    }
    let ignore_flags: BTreeSet<String> = p.ignore_flags.into_iter().collect();
    let shadowed: Vec<&String> = owner.keys().filter(|n| ignore_flags.contains(*n)).collect();
    if !shadowed.is_empty() {
        return Err(format!(
            "flag predicate(s) {} are also in ignore_flags, which drops them before matching",
            shadowed
                .iter()
                .map(|s| format!("`{s}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    let mut value_flags: BTreeSet<String> = p.value_flags.into_iter().collect();
    for (key, flag) in &flags {
        if flag.needs_value() {
            value_flags.extend(flag.names(key).map(String::from));
        }
    }
    let mut known: BTreeSet<String> = owner.keys().cloned().collect();
    known.extend(ignore_flags.iter().cloned());
    Ok(Spec {
        log: p.log,
        verbs,
        tool: p.tool,
        positional: p.positional,
        flags,
        value_flags,
        ignore_flags,
        known,
        min_count: p.min_count,
        max_count: p.max_count,
    })
}

/// Checks `cli_called` params (with their `type`).
pub fn validate(params: &Value) -> Result<(), String> {
    check(params).map(drop)
}

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
