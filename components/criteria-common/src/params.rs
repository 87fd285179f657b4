//! What the criteria crates say about their own parameters, so the host can check a
//! parameter's string as the task file is read (and point at its line and column) without
//! knowing any criterion's internals.
//!
//! Each criteria crate exports, beside `TYPES` and `validate`, a
//! [`ParamKindFn`]-shaped `param_kind(criterion_type, path, siblings)`: for the string at
//! `path` inside the parameters of a criterion of `criterion_type`, whether it is a regex
//! or a workspace path. `siblings` are the keys already read in the mapping that holds
//! the string (in file order), for a kind that depends on another key (`json_check`'s
//! `expected` is a regex only when its `operator` is `regex`). `None` for every other
//! string, and for a type the crate does not grade. `validate` still checks the whole
//! criterion at the end; this is the early, pointed check.

use serde_json::{Map, Value};

/// What a parameter's string is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamKind {
    /// A regex (Rust syntax; the criterion's `flags` keep Python's numbers).
    Regex,
    /// A workspace path: relative, no `..`, a valid glob if it is one.
    WorkspacePath,
}

/// One step from a criterion's parameters down to a value: a mapping key, or a list
/// index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathSeg<'a> {
    Key(&'a str),
    Index(usize),
}

/// The shape of every criteria crate's `param_kind`.
pub type ParamKindFn = fn(&str, &[PathSeg<'_>], &Map<String, Value>) -> Option<ParamKind>;

impl ParamKind {
    /// Checks `value` as this kind; `what` names the parameter in the error. A regex is
    /// accepted when it compiles with or without VERBOSE (flags 64), since whether the
    /// criterion's `flags` set it may not be known yet: `validate` has the flags.
    pub fn check(self, what: &str, value: &str) -> Result<(), String> {
        match self {
            ParamKind::Regex => {
                if crate::regex(what, value, 0).is_err() {
                    crate::regex(what, value, crate::FLAG_VERBOSE)?;
                }
                Ok(())
            }
            ParamKind::WorkspacePath => crate::check_path(what, value),
        }
    }
}

/// `siblings[key]` as a string, if it is one.
pub fn sibling<'a>(siblings: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    siblings.get(key).and_then(Value::as_str)
}

/// Every string in `params` that `param_kind` names, as (dotted path, kind), in order:
/// the walk the host makes while reading a task file, for the criteria crates' tests.
/// `params` is a criterion's parameters with its `type`.
pub fn kinds_in(param_kind: ParamKindFn, params: &Value) -> Vec<(String, ParamKind)> {
    fn walk<'a>(
        f: ParamKindFn,
        kind: &str,
        value: &'a Value,
        path: &mut Vec<PathSeg<'a>>,
        siblings: &Map<String, Value>,
        out: &mut Vec<(String, ParamKind)>,
    ) {
        match value {
            Value::String(_) => {
                if let Some(k) = f(kind, path, siblings) {
                    let name: Vec<String> = path
                        .iter()
                        .map(|seg| match seg {
                            PathSeg::Key(key) => key.to_string(),
                            PathSeg::Index(i) => i.to_string(),
                        })
                        .collect();
                    out.push((name.join("."), k));
                }
            }
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    path.push(PathSeg::Index(i));
                    walk(f, kind, item, path, &Map::new(), out);
                    path.pop();
                }
            }
            Value::Object(map) => {
                let mut before = Map::new();
                for (key, item) in map {
                    path.push(PathSeg::Key(key));
                    walk(f, kind, item, path, &before, out);
                    path.pop();
                    before.insert(key.clone(), item.clone());
                }
            }
            _ => {}
        }
    }
    let kind = params.get("type").and_then(Value::as_str).unwrap_or("");
    let mut out = Vec::new();
    walk(
        param_kind,
        kind,
        params,
        &mut Vec::new(),
        &Map::new(),
        &mut out,
    );
    out
}

/// `params` once for each string [`kinds_in`] finds, with that string replaced by a value
/// its kind refuses (`a(`, `../x`): a criteria crate's tests check that `validate`
/// rejects each, so `param_kind` never names what `validate` does not check.
pub fn with_each_bad_value(param_kind: ParamKindFn, params: &Value) -> Vec<(String, Value)> {
    kinds_in(param_kind, params)
        .into_iter()
        .map(|(name, kind)| {
            let bad = match kind {
                ParamKind::Regex => "a(",
                ParamKind::WorkspacePath => "../x",
            };
            let mut broken = params.clone();
            if let Some(value) = broken.pointer_mut(&format!("/{}", name.replace('.', "/"))) {
                *value = bad.into();
            }
            (name, broken)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_reads_regexes_with_or_without_verbose_and_paths() {
        assert!(ParamKind::Regex.check("pattern", "a b").is_ok());
        // Only valid with VERBOSE (an escaped `#` is literal, an unescaped one a comment).
        assert!(ParamKind::Regex.check("pattern", "a # (").is_ok());
        let err = ParamKind::Regex.check("pattern", "a(").unwrap_err();
        assert!(err.starts_with("pattern: invalid regex"), "{err}");
        assert!(ParamKind::WorkspacePath.check("path", "src/*.py").is_ok());
        let err = ParamKind::WorkspacePath.check("path", "../x").unwrap_err();
        assert!(err.starts_with("path: "), "{err}");
    }
}
