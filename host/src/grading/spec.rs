//! [`CriterionSpec`]: one entry of a task's `success_criteria`, validated as it is read.
//!
//! Deserializing a spec validates it, so a task file with a bad criterion is rejected at
//! load time with its line: a regex or a workspace path that is wrong is reported at its
//! own line and column (the check runs while that scalar is read), anything else (an
//! unknown type, a missing or ill-typed key) at the line where the criterion starts.

use super::builtin;
use super::run_command;
use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};
use std::fmt;

/// One entry of a task's `success_criteria`.
///
/// Common keys: `type`, `weight` (default 1.0; 0 = informational: shown, not counted),
/// `pass_threshold` (0–1, default 0.9), `description`. Every other key is the
/// criterion's parameters (flattened into [`CriterionSpec::params`]). `type: component`
/// takes `component: PATH` (a `.wasm` grader, relative to the task file's folder) and
/// `params: {...}` (handed to the grader as they are).
///
/// ```yaml
/// - type: file_contains
///   path: app.py
///   includes: ["print"]
///   weight: 2
/// - type: component
///   component: graders/readme.wasm
///   params: {readme: README.md}
/// ```
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CriterionSpec {
    /// The criterion type: a built-in (`file_exists`, `json_check`, `command_executed`,
    /// `run_command`, ...) or `component`.
    #[serde(rename = "type")]
    pub kind: String,
    /// What the criterion checks, for people.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Weight in the weighted score, ≥ 0; 0 = informational.
    pub weight: f64,
    /// The score (0–1) at which the criterion passes.
    pub pass_threshold: f64,
    /// The other keys: the criterion's parameters.
    #[serde(flatten)]
    pub params: Map<String, Value>,
}

/// The default `pass_threshold`.
pub const DEFAULT_PASS_THRESHOLD: f64 = 0.9;

impl CriterionSpec {
    /// A spec of `kind` with these parameters and the default weight and threshold.
    pub fn new(kind: &str, params: Value) -> CriterionSpec {
        CriterionSpec {
            kind: kind.to_string(),
            description: None,
            weight: 1.0,
            pass_threshold: DEFAULT_PASS_THRESHOLD,
            params: match params {
                Value::Object(map) => map,
                _ => Map::new(),
            },
        }
    }

    /// Checks the spec: a known type, weight and threshold in range, and parameters the
    /// criterion accepts (known keys of the right types, compiling regexes, workspace
    /// paths that stay inside). The message names the type and the parameter.
    pub fn validate(&self) -> Result<(), String> {
        let at = |e: String| format!("criterion `{}`: {e}", self.kind);
        if !self.weight.is_finite() || self.weight < 0.0 {
            return Err(at(format!("weight must be ≥ 0, got {}", self.weight)));
        }
        if !(0.0..=1.0).contains(&self.pass_threshold) {
            return Err(at(format!(
                "pass_threshold must be between 0 and 1, got {}",
                self.pass_threshold
            )));
        }
        match self.kind.as_str() {
            "component" => self.validate_component().map_err(at),
            "run_command" => run_command::validate(&self.params).map_err(at),
            kind => match builtin::for_type(kind) {
                Some(family) => (family.validate)(&self.guest_params()).map_err(at),
                None => {
                    let mut known = builtin::all_types();
                    known.extend(["run_command", "component"]);
                    let hint = crate::task::closest(kind, known.iter().copied())
                        .map(|best| format!(" (did you mean `{best}`?)"))
                        .unwrap_or_default();
                    Err(format!(
                        "unknown criterion type `{kind}`{hint}; known: {}",
                        known.join(", ")
                    ))
                }
            },
        }
    }

    fn validate_component(&self) -> Result<(), String> {
        for key in self.params.keys() {
            if key != "component" && key != "params" {
                return Err(format!(
                    "unknown key `{key}` (a component criterion takes `component` and `params`)"
                ));
            }
        }
        match self.params.get("component") {
            Some(Value::String(path)) if !path.trim().is_empty() => {}
            Some(_) => return Err("`component` must be a path to a .wasm file".into()),
            None => return Err("missing `component` (the path of the .wasm grader)".into()),
        }
        match self.params.get("params") {
            None | Some(Value::Object(_)) | Some(Value::Null) => Ok(()),
            Some(_) => Err("`params` must be a mapping".into()),
        }
    }

    /// The `description`, else the type.
    pub fn label(&self) -> String {
        self.description
            .clone()
            .unwrap_or_else(|| self.kind.clone())
    }

    /// Whether the criterion only reads (every built-in WASM criterion and every
    /// component); `run_command` runs a process in the workspace and is not. After a
    /// crash or timeout, only read-only criteria run, as evidence.
    pub fn is_read_only(&self) -> bool {
        self.kind != "run_command"
    }

    /// The params a built-in guest receives: the parameters plus `type`.
    pub(crate) fn guest_params(&self) -> Value {
        let mut params = self.params.clone();
        params.insert("type".into(), Value::String(self.kind.clone()));
        Value::Object(params)
    }
}

impl<'de> Deserialize<'de> for CriterionSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(SpecVisitor)
    }
}

struct SpecVisitor;

impl<'de> Visitor<'de> for SpecVisitor {
    type Value = CriterionSpec;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a criterion: a mapping with a `type`")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<CriterionSpec, A::Error> {
        let mut kind: Option<String> = None;
        let mut description = None;
        let mut weight = None;
        let mut pass_threshold = None;
        let mut params = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let duplicate = |k: &str| de::Error::custom(format!("duplicate key `{k}`"));
            match key.as_str() {
                "type" => {
                    if kind.is_some() {
                        return Err(duplicate("type"));
                    }
                    kind = Some(map.next_value()?);
                }
                "description" => description = map.next_value::<Option<String>>()?,
                "weight" => weight = Some(map.next_value::<f64>()?),
                "pass_threshold" => pass_threshold = Some(map.next_value::<f64>()?),
                _ => {
                    if params.contains_key(&key) {
                        return Err(duplicate(&key));
                    }
                    let seed = CheckedValue {
                        kind: kind.as_deref(),
                        path: vec![key.clone()],
                        siblings: &params,
                    };
                    let value = map.next_value_seed(seed)?;
                    params.insert(key, value);
                }
            }
        }
        let spec = CriterionSpec {
            kind: kind.ok_or_else(|| de::Error::missing_field("type"))?,
            description,
            weight: weight.unwrap_or(1.0),
            pass_threshold: pass_threshold.unwrap_or(DEFAULT_PASS_THRESHOLD),
            params,
        };
        spec.validate().map_err(de::Error::custom)?;
        Ok(spec)
    }
}

/// Reads any value as JSON while checking, as each string is read, the parameters whose
/// validity does not depend on others: regexes and workspace paths. An error raised here
/// carries that string's position.
struct CheckedValue<'a> {
    /// The criterion's type, when its `type` key came earlier.
    kind: Option<&'a str>,
    /// The keys and indexes from the criterion down to this value.
    path: Vec<String>,
    /// The keys already read in the enclosing mapping.
    siblings: &'a Map<String, Value>,
}

impl CheckedValue<'_> {
    fn child<'b>(&'b self, part: String, siblings: &'b Map<String, Value>) -> CheckedValue<'b> {
        let mut path = self.path.clone();
        path.push(part);
        CheckedValue {
            kind: self.kind,
            path,
            siblings,
        }
    }

    fn check_str(&self, s: &str) -> Result<(), String> {
        let Some(kind) = self.kind else {
            return Ok(());
        };
        let path: Vec<&str> = self.path.iter().map(String::as_str).collect();
        let sibling = |k: &str| self.siblings.get(k).and_then(Value::as_str);
        let is_regex = match (kind, path.as_slice()) {
            ("file_matches_regex", ["pattern"]) => true,
            ("file_check", ["patterns", _, "pattern"]) => true,
            ("command_executed", ["command_pattern" | "exclude_pattern"]) => true,
            ("json_check", ["assertions", _, "expected"]) => sibling("operator") == Some("regex"),
            ("run_command", ["expected_stdout_regex"]) => true,
            ("run_command", ["expected_stdout"]) => sibling("stdout_match") == Some("regex"),
            _ => false,
        };
        if is_regex {
            // Whether VERBOSE (flags 64) applies is not known yet: accept either reading;
            // the full check at the end of the criterion has the flags.
            let name = path.join(".");
            if criteria_common::regex(&name, s, 0).is_err() {
                criteria_common::regex(&name, s, criteria_common::FLAG_VERBOSE)?;
            }
        }
        let is_path = matches!(
            (kind, path.as_slice()),
            (
                "file_exists"
                    | "file_contains"
                    | "file_check"
                    | "file_matches_regex"
                    | "json_check"
                    | "classification_match",
                ["path"],
            ) | ("json_check", ["json_schema"])
        );
        if is_path {
            criteria_common::check_path(&path.join("."), s)?;
        }
        Ok(())
    }
}

impl<'de> DeserializeSeed<'de> for CheckedValue<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for CheckedValue<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any value")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        serde_json::Number::from_f64(v)
            .map(Value::Number)
            .ok_or_else(|| E::custom(format!("{} is not a JSON number", v)))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Value, E> {
        let label = self.path.join(".");
        self.check_str(v).map_err(|e| {
            // The error's path already names the key (`success_criteria[1].pattern: ...`).
            let e = e.strip_prefix(&format!("{label}: ")).unwrap_or(&e);
            E::custom(format!("criterion `{}`: {e}", self.kind.unwrap_or("?")))
        })?;
        Ok(Value::String(v.to_string()))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Value, E> {
        self.visit_str(&v)
    }
    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let empty = Map::new();
        let mut items = Vec::new();
        loop {
            let seed = self.child(items.len().to_string(), &empty);
            match seq.next_element_seed(seed)? {
                Some(v) => items.push(v),
                None => return Ok(Value::Array(items)),
            }
        }
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let value = map.next_value_seed(self.child(key.clone(), &out))?;
            out.insert(key, value);
        }
        Ok(Value::Object(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[derive(Deserialize)]
    struct Task {
        #[allow(dead_code)]
        task_id: String,
        success_criteria: Vec<CriterionSpec>,
    }

    fn load(yaml: &str) -> Result<Vec<CriterionSpec>, serde_yaml_ng::Error> {
        serde_yaml_ng::from_str::<Task>(yaml).map(|t| t.success_criteria)
    }

    #[test]
    fn reads_common_keys_and_flattened_params() {
        let specs = load(
            "task_id: t\nsuccess_criteria:\n  - type: file_contains\n    path: app.py\n    includes: [print]\n    weight: 2\n    description: prints\n  - type: file_exists\n    path: app.py\n",
        )
        .unwrap();
        assert_eq!(specs[0].kind, "file_contains");
        assert_eq!(specs[0].weight, 2.0);
        assert_eq!(specs[0].pass_threshold, 0.9);
        assert_eq!(specs[0].description.as_deref(), Some("prints"));
        assert_eq!(
            Value::Object(specs[0].params.clone()),
            json!({"path": "app.py", "includes": ["print"]})
        );
        assert_eq!(specs[1].weight, 1.0);
        // Serializing gives the task file's shape back.
        let back = serde_json::to_value(&specs[0]).unwrap();
        assert_eq!(
            back,
            json!({"type": "file_contains", "description": "prints", "weight": 2.0, "pass_threshold": 0.9, "path": "app.py", "includes": ["print"]})
        );
    }

    #[test]
    fn a_bad_regex_is_rejected_at_its_own_line() {
        // Line 7 holds the bad regex (lines counted from 1).
        let yaml = "task_id: t\n\
                    success_criteria:\n  \
                    - type: file_exists\n    \
                    path: app.py\n  \
                    - type: file_matches_regex\n    \
                    path: app.py\n    \
                    pattern: \"print(\"\n    \
                    description: prints\n";
        assert_eq!(yaml.lines().nth(6).unwrap().trim(), "pattern: \"print(\"");
        let err = load(yaml).unwrap_err();
        let location = err.location().expect("a position");
        assert_eq!(location.line(), 7, "{err}");
        let text = err.to_string();
        assert!(text.contains("line 7"), "{text}");
        assert!(
            text.contains("criterion `file_matches_regex`: invalid regex `print(`"),
            "{text}"
        );
        assert!(text.starts_with("success_criteria[1].pattern"), "{text}");
    }

    #[test]
    fn nested_regexes_are_located_too() {
        let yaml = "task_id: t\nsuccess_criteria:\n  - type: file_check\n    path: a.py\n    patterns:\n      - pattern: ok\n      - pattern: \"[\"\n";
        let err = load(yaml).unwrap_err();
        assert_eq!(err.location().unwrap().line(), 7, "{err}");
        let yaml = "task_id: t\nsuccess_criteria:\n  - type: json_check\n    path: a.json\n    assertions:\n      - expression: a\n        operator: regex\n        expected: \"(\"\n";
        let err = load(yaml).unwrap_err();
        assert_eq!(err.location().unwrap().line(), 8, "{err}");
        let yaml = "task_id: t\nsuccess_criteria:\n  - type: command_executed\n    command_pattern: \"python3 app\\\\.py\"\n    exclude_pattern: \"*\"\n";
        let err = load(yaml).unwrap_err();
        assert_eq!(err.location().unwrap().line(), 5, "{err}");
    }

    #[test]
    fn other_mistakes_point_at_the_criterion() {
        let cases = [
            (
                "  - type: file_exsts\n    path: a\n",
                "unknown criterion type `file_exsts` (did you mean `file_exists`?)",
            ),
            (
                "  - type: file_exists\n    paht: a\n",
                "unknown field `paht`",
            ),
            ("  - type: file_exists\n", "missing field `path`"),
            (
                "  - type: file_exists\n    path: a\n    weight: -1\n",
                "weight must be ≥ 0",
            ),
            (
                "  - type: file_exists\n    path: a\n    pass_threshold: 2\n",
                "pass_threshold must be between 0 and 1",
            ),
            (
                "  - type: command_executed\n    min_count: 3\n    max_count: 1\n",
                "max_count (1) must be >= min_count (3)",
            ),
            (
                "  - type: component\n    params: {a: 1}\n",
                "missing `component`",
            ),
            (
                "  - type: component\n    component: g.wasm\n    extra: 1\n",
                "unknown key `extra`",
            ),
            (
                "  - type: run_command\n    timeout: 5\n",
                "missing field `command`",
            ),
            ("  - path: a\n", "missing field `type`"),
            (
                "  - type: run_comand\n    command: x\n",
                "unknown criterion type `run_comand` (did you mean `run_command`?)",
            ),
            // Nothing close: no guess, the known types only.
            (
                "  - type: zzz\n",
                "unknown criterion type `zzz`; known: file_exists",
            ),
        ];
        for (entry, want) in cases {
            let yaml = format!(
                "task_id: t\nsuccess_criteria:\n  - type: file_exists\n    path: ok\n{entry}"
            );
            let err = load(&yaml).unwrap_err();
            assert!(err.to_string().contains(want), "{entry:?}: {err}");
            assert_eq!(
                err.location().map(|l| l.line()),
                Some(5),
                "{entry:?}: {err}"
            );
        }
        // A path leaving the workspace is caught where it is written.
        let err =
            load("task_id: t\nsuccess_criteria:\n  - type: file_exists\n    path: ../secret\n")
                .unwrap_err();
        assert_eq!(err.location().unwrap().line(), 4, "{err}");
        assert!(err.to_string().contains("leaves the workspace"), "{err}");
    }

    #[test]
    fn type_after_the_params_is_still_validated() {
        let err = load("task_id: t\nsuccess_criteria:\n  - pattern: \"(\"\n    path: a\n    type: file_matches_regex\n").unwrap_err();
        assert!(err.to_string().contains("invalid regex"), "{err}");
        assert_eq!(err.location().unwrap().line(), 3, "{err}");
    }

    #[test]
    fn validate_covers_every_builtin_family() {
        for (kind, params) in [
            ("file_exists", json!({"path": "a"})),
            ("json_check", json!({"path": "a.json"})),
            ("command_executed", json!({"command_pattern": "x"})),
            ("classification_match", json!({"expected_label": "a"})),
            ("run_command", json!({"command": "true"})),
            (
                "component",
                json!({"component": "g.wasm", "params": {"x": 1}}),
            ),
        ] {
            CriterionSpec::new(kind, params.clone())
                .validate()
                .unwrap_or_else(|e| panic!("{kind}: {e}"));
        }
        assert!(CriterionSpec::new("nope", json!({})).validate().is_err());
    }
}
