//! The built-in criterion `json_check`: parse a workspace JSON file, optionally validate it
//! against a JSON Schema, then evaluate path assertions.
//!
//! Params:
//! - `path` — the JSON file (relative; a glob must match exactly one file);
//! - `json_schema` — a schema file in the workspace, or `schema` — the schema inline
//!   (not both). Validation uses the `jsonschema` crate (drafts 4, 6, 7, 2019-09, 2020-12;
//!   no remote `$ref`);
//! - `assertions: [{expression, operator = equals, expected}]` — `expression` in the
//!   language of [`path`] (a JMESPath subset, or a JSON Pointer); operators `equals`,
//!   `not_equals`, `contains` (substring, array element or object key), `gt`, `gte`,
//!   `lt`, `lte` (numbers, or strings by code point), `type` (`string`, `number`,
//!   `integer`, `boolean`, `array`, `object`, `null`), `regex` (Rust syntax, searched in a
//!   string) and `exists` (not `null`); `expected` is required except for `exists`.
//!
//! Score: a missing file or invalid JSON scores 0. Otherwise the mean of the active
//! parts: schema (1 or 0; a failed schema skips the assertions and scores 0), assertions
//! (passed / total). Neither part = valid JSON, 1. Numbers compare by value (`1 == 1.0`).

pub mod path;

use criteria_common::{ParamKind, PathSeg, Target, check_path, read_target, sibling};
use grader_kit::{Criterion, GradingInput, Verdict, params_as};
use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};

/// The criterion types this component grades.
pub const TYPES: &[&str] = &["json_check"];

/// Which parameter strings are regexes or workspace paths (see
/// [`criteria_common::ParamKindFn`]): an assertion's `expected` when its `operator`
/// (read before it) is `regex`; `path` and `json_schema`.
pub fn param_kind(
    criterion_type: &str,
    path: &[PathSeg<'_>],
    siblings: &Map<String, Value>,
) -> Option<ParamKind> {
    use PathSeg::Key;
    match (criterion_type, path) {
        ("json_check", [Key("assertions"), _, Key("expected")])
            if sibling(siblings, "operator") == Some("regex") =>
        {
            Some(ParamKind::Regex)
        }
        ("json_check", [Key("path" | "json_schema")]) => Some(ParamKind::WorkspacePath),
        _ => None,
    }
}

const OPERATORS: &[&str] = &[
    "equals",
    "not_equals",
    "contains",
    "gt",
    "gte",
    "lt",
    "lte",
    "type",
    "regex",
    "exists",
];
const TYPE_NAMES: &[&str] = &[
    "string", "number", "integer", "boolean", "array", "object", "null",
];

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct JsonCheck {
    path: String,
    #[serde(default)]
    json_schema: Option<String>,
    #[serde(default)]
    schema: Option<Value>,
    #[serde(default)]
    assertions: Option<Vec<Assertion>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Assertion {
    expression: String,
    #[serde(default = "equals")]
    operator: String,
    /// `Some(Value::Null)` for an explicit `expected: null`, `None` when absent.
    #[serde(default, deserialize_with = "present")]
    expected: Option<Value>,
}

fn equals() -> String {
    "equals".into()
}

fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

/// Checks `params` the way grading reads them: keys and types, the path, schema source,
/// each assertion's expression, operator, `expected` and regex.
pub fn validate(params: &Value) -> Result<(), String> {
    let kind = params.get("type").and_then(Value::as_str).unwrap_or("");
    if kind != "json_check" {
        return Err(format!("criteria-json does not grade type `{kind}`"));
    }
    let p: JsonCheck = params_as(params)?;
    check(&p)
}

fn check(p: &JsonCheck) -> Result<(), String> {
    check_path("path", &p.path)?;
    if let Some(schema_path) = &p.json_schema {
        check_path("json_schema", schema_path)?;
        if p.schema.is_some() {
            return Err("give `json_schema` (a file) or `schema` (inline), not both".into());
        }
    }
    if let Some(schema) = &p.schema {
        jsonschema::validator_for(schema).map_err(|e| format!("schema: invalid schema: {e}"))?;
    }
    for (i, a) in p.assertions.iter().flatten().enumerate() {
        let at = format!("assertions[{i}]");
        path::parse(&a.expression)
            .map_err(|e| format!("{at}: expression `{}`: {e}", a.expression))?;
        if !OPERATORS.contains(&a.operator.as_str()) {
            return Err(format!(
                "{at}: unknown operator `{}` (known: {})",
                a.operator,
                OPERATORS.join(", ")
            ));
        }
        if a.operator != "exists" && a.expected.is_none() {
            return Err(format!(
                "{at}: `expected` is required for operator `{}`",
                a.operator
            ));
        }
        match (a.operator.as_str(), &a.expected) {
            ("regex", Some(Value::String(re))) => {
                criteria_common::regex(&format!("{at}.expected"), re, 0)?;
            }
            ("regex", _) => return Err(format!("{at}: `expected` must be a regex string")),
            ("type", Some(Value::String(t))) if TYPE_NAMES.contains(&t.as_str()) => {}
            ("type", _) => {
                return Err(format!(
                    "{at}: `expected` must be one of {}",
                    TYPE_NAMES.join(", ")
                ));
            }
            _ => {}
        }
    }
    Ok(())
}

/// Grades `json_check`.
pub fn grade(input: &GradingInput) -> Result<Verdict, String> {
    validate(&input.params)?;
    let p: JsonCheck = input.params()?;
    let (rel, content) = match read_target(input, &p.path)? {
        Target::One(rel, content) => (rel, content),
        Target::Missing(why) => return Ok(Verdict::fail(why)),
    };
    let doc: Value = match serde_json::from_str(&content) {
        Ok(doc) => doc,
        Err(e) => return Ok(Verdict::fail(format!("`{rel}` is not valid JSON: {e}"))),
    };
    let assertions = p.assertions.unwrap_or_default();
    let schema = match (&p.json_schema, p.schema) {
        (Some(file), _) => Some(load_schema(input, file)?),
        (None, Some(inline)) => Some(Ok(inline)),
        (None, None) => None,
    };
    if schema.is_none() && assertions.is_empty() {
        return Ok(Verdict::pass(format!("`{rel}` is valid JSON")));
    }
    let mut scores = Vec::new();
    let mut parts = vec![format!("`{rel}`")];
    if let Some(schema) = schema {
        let (ok, detail) = match schema {
            Err(why) => (false, why),
            Ok(schema) => schema_check(&schema, &doc),
        };
        parts.push(detail);
        if !ok {
            if !assertions.is_empty() {
                parts.push("assertions skipped (schema failed)".into());
            }
            return Ok(Verdict::fail(parts.join("; ")));
        }
        scores.push(1.0);
    }
    if !assertions.is_empty() {
        let mut passed = 0usize;
        let mut failed = Vec::new();
        for a in &assertions {
            let expr = path::parse(&a.expression)
                .map_err(|e| format!("expression `{}`: {e}", a.expression))?;
            let actual = path::eval(&expr, &doc);
            match apply(&a.operator, &actual, a.expected.as_ref()) {
                Ok(true) => passed += 1,
                Ok(false) => failed.push(format!(
                    "`{}` {}: expected {}, got {}",
                    a.expression,
                    a.operator,
                    a.expected.as_ref().map_or("a value".into(), short),
                    short(&actual)
                )),
                Err(why) => failed.push(format!("`{}` {}: {why}", a.expression, a.operator)),
            }
        }
        scores.push(passed as f64 / assertions.len() as f64);
        let mut part = format!("assertions {passed}/{} passed", assertions.len());
        if !failed.is_empty() {
            part.push_str(&format!(" ({})", failed.join("; ")));
        }
        parts.push(part);
    }
    let score = scores.iter().sum::<f64>() / scores.len() as f64;
    parts.push(format!("score {score:.2}"));
    Ok(Verdict::new(score, parts.join("; ")))
}

fn short(value: &Value) -> String {
    grader_kit::truncate(&value.to_string(), 200)
}

/// The schema from a workspace file: `Ok(Err(why))` when it is missing or not JSON (the
/// schema part scores 0), `Err` for a path outside the workspace.
fn load_schema(input: &GradingInput, file: &str) -> Result<Result<Value, String>, String> {
    Ok(match read_target(input, file)? {
        Target::Missing(why) => Err(format!("schema: {why}")),
        Target::One(rel, text) => serde_json::from_str(&text)
            .map_err(|e| format!("schema: `{rel}` is not valid JSON: {e}")),
    })
}

fn schema_check(schema: &Value, doc: &Value) -> (bool, String) {
    let validator = match jsonschema::validator_for(schema) {
        Ok(v) => v,
        Err(e) => return (false, format!("schema: malformed schema: {e}")),
    };
    let errors: Vec<String> = validator
        .iter_errors(doc)
        .take(5)
        .map(|e| {
            let at = e.instance_path().to_string();
            let at = if at.is_empty() { "/".to_string() } else { at };
            format!("{at}: {e}")
        })
        .collect();
    if errors.is_empty() {
        (true, "schema valid".into())
    } else {
        (false, format!("schema invalid: {}", errors.join("; ")))
    }
}

/// Numbers by value, everything else structurally.
fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_f64(), y.as_f64()) {
            (Some(x), Some(y)) if x.fract() != 0.0 || y.fract() != 0.0 => x == y,
            _ => x.as_i128() == y.as_i128() || x.as_f64() == y.as_f64(),
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| json_eq(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_eq(v, w)))
        }
        _ => a == b,
    }
}

fn apply(op: &str, actual: &Value, expected: Option<&Value>) -> Result<bool, String> {
    let null = Value::Null;
    let expected = expected.unwrap_or(&null);
    Ok(match op {
        "equals" => json_eq(actual, expected),
        "not_equals" => !json_eq(actual, expected),
        "exists" => !actual.is_null(),
        "contains" => match (actual, expected) {
            (Value::String(s), Value::String(sub)) => s.contains(sub.as_str()),
            (Value::Array(items), want) => items.iter().any(|i| json_eq(i, want)),
            (Value::Object(map), Value::String(key)) => map.contains_key(key),
            _ => {
                return Err(format!(
                    "cannot test whether {} contains {}",
                    short(actual),
                    short(expected)
                ));
            }
        },
        "gt" | "gte" | "lt" | "lte" => {
            let ord = match (actual, expected) {
                (Value::Number(a), Value::Number(b)) => a
                    .as_f64()
                    .zip(b.as_f64())
                    .and_then(|(a, b)| a.partial_cmp(&b)),
                (Value::String(a), Value::String(b)) => Some(a.cmp(b)),
                _ => None,
            }
            .ok_or_else(|| format!("cannot compare {} with {}", short(actual), short(expected)))?;
            match op {
                "gt" => ord.is_gt(),
                "gte" => ord.is_ge(),
                "lt" => ord.is_lt(),
                _ => ord.is_le(),
            }
        }
        "type" => {
            let want = expected.as_str().unwrap_or("");
            match actual {
                Value::String(_) => want == "string",
                Value::Number(n) => {
                    want == "number"
                        || (want == "integer" && n.as_f64().is_some_and(|f| f.fract() == 0.0))
                }
                Value::Bool(_) => want == "boolean",
                Value::Array(_) => want == "array",
                Value::Object(_) => want == "object",
                Value::Null => want == "null",
            }
        }
        "regex" => {
            let pattern = expected.as_str().unwrap_or("");
            let re = criteria_common::regex("expected", pattern, 0)?;
            match actual {
                Value::String(s) => criteria_common::search(&re, s).is_some(),
                other => return Err(format!("regex needs a string, got {}", short(other))),
            }
        }
        other => return Err(format!("unknown operator `{other}`")),
    })
}

/// The component.
pub struct Json;

impl Criterion for Json {
    fn grade(input: &GradingInput) -> Result<Verdict, String> {
        grade(input)
    }
}

grader_kit::export_grader!(Json);

#[cfg(test)]
mod tests;
