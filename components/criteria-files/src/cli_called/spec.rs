//! `cli_called`'s parameters, checked into a [`Spec`]: flag predicates (a bare string is
//! `equals`), verbs, and the flags that take a value.

use super::DEFAULT_LOG;
use criteria_common::check_path;
use grader_kit::params_as;
use regex::Regex;
use serde::Deserialize;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

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

pub(super) struct Flag {
    test: Test,
    aliases: Vec<String>,
}

impl Flag {
    pub(super) fn names<'a>(&'a self, key: &'a str) -> impl Iterator<Item = &'a str> {
        std::iter::once(key).chain(self.aliases.iter().map(String::as_str))
    }
    fn needs_value(&self) -> bool {
        !matches!(self.test, Test::Absent | Test::Present)
    }
    /// `values` is None when the flag was not passed under any of its names.
    pub(super) fn holds(&self, values: Option<&[String]>) -> bool {
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
pub(super) struct Spec {
    pub(super) log: String,
    pub(super) verbs: Vec<Vec<String>>,
    pub(super) tool: Option<String>,
    pub(super) positional: Option<Vec<String>>,
    pub(super) flags: BTreeMap<String, Flag>,
    pub(super) value_flags: BTreeSet<String>,
    pub(super) ignore_flags: BTreeSet<String>,
    pub(super) known: BTreeSet<String>,
    pub(super) min_count: u64,
    pub(super) max_count: Option<u64>,
}

/// Whether `text` reads as a number (Python's `float()`, near enough), so `-1` is a
/// value rather than a flag.
pub(super) fn is_number(text: &str) -> bool {
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

pub(super) fn check(params: &Value) -> Result<Spec, String> {
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
