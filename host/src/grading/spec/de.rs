//! Reading a [`CriterionSpec`] from a task file: the map visitor, and the seed that checks
//! each parameter (regex, workspace path) while its scalar is read, so an error carries
//! that scalar's own line and column.

use super::super::{python, reference};
use super::{CriterionSpec, default_threshold};
use crate::turn::early_stop::{StopEarlyBlock, StopWhen};
use criteria_common::PathSeg;
use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::fmt;

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
        let mut suite_thresholds = None;
        let mut stop_early: Option<StopEarlyBlock> = None;
        let mut stop_when: Option<StopWhen> = None;
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
                "suite_thresholds" => {
                    suite_thresholds = Some(map.next_value::<BTreeMap<String, f64>>()?)
                }
                "stop_early" => {
                    stop_early = Some(
                        map.next_value::<Option<StopEarlyBlock>>()?
                            .unwrap_or_default(),
                    )
                }
                "stop_when" => stop_when = Some(map.next_value()?),
                _ => {
                    if params.contains_key(&key) {
                        return Err(duplicate(&key));
                    }
                    let seed = CheckedValue {
                        kind: kind.as_deref(),
                        path: vec![Seg::Key(key.clone())],
                        siblings: &params,
                    };
                    let value = map.next_value_seed(seed)?;
                    params.insert(key, value);
                }
            }
        }
        let kind = kind.ok_or_else(|| de::Error::missing_field("type"))?;
        let mut threshold = default_threshold(&kind, pass_threshold);
        // coder_eval: similarity_threshold is reference_comparison's pass threshold, and
        // pylint_score's min_score (0–10) sets it.
        if kind == "reference_comparison"
            && let Ok(similarity) = reference::Params::parse(&params).map(|p| p.pass_threshold())
        {
            threshold = similarity;
        }
        if kind == "pylint_score"
            && let Ok(Some(min)) = python::Pylint::parse(&params).map(|p| p.pass_threshold())
        {
            threshold = min;
        }
        let mut spec = CriterionSpec::resolved(
            kind,
            description,
            weight.unwrap_or(1.0),
            threshold,
            suite_thresholds,
            params,
        )
        .map_err(de::Error::custom)?;
        if (stop_early.is_some() || stop_when.is_some()) && spec.weight == 0.0 {
            return Err(de::Error::custom(format!(
                "criterion `{}`: weight 0 makes it informational, so it cannot also be armed \
                 with `{}` (that arms it for the pass/fail gate); give it a weight, or drop it",
                spec.kind,
                if stop_early.is_some() {
                    "stop_early"
                } else {
                    "stop_when"
                }
            )));
        }
        if stop_early.is_some() && stop_when.is_some() {
            return Err(de::Error::custom(format!(
                "criterion `{}`: give either `stop_early:` or the older `stop_when:`, not both",
                spec.kind
            )));
        }
        spec.stop_early = stop_early;
        spec.stop_when = stop_when;
        Ok(spec)
    }
}

/// One step from a criterion's parameters down to a value.
#[derive(Debug, Clone)]
enum Seg {
    Key(String),
    Index(usize),
}

/// Reads any value as JSON while checking, as each string is read, the parameters whose
/// validity does not depend on others: regexes and workspace paths. Which strings those
/// are, each criterion says itself: the criteria crates' `param_kind`, and the host-side
/// types' own modules. An error raised here carries that string's position.
struct CheckedValue<'a> {
    /// The criterion's type, when its `type` key came earlier.
    kind: Option<&'a str>,
    /// The keys and indexes from the criterion down to this value.
    path: Vec<Seg>,
    /// The keys already read in the enclosing mapping.
    siblings: &'a Map<String, Value>,
}

impl CheckedValue<'_> {
    fn child<'b>(&'b self, part: Seg, siblings: &'b Map<String, Value>) -> CheckedValue<'b> {
        let mut path = self.path.clone();
        path.push(part);
        CheckedValue {
            kind: self.kind,
            path,
            siblings,
        }
    }

    /// The dotted path of this value (`patterns.0.pattern`).
    fn label(&self) -> String {
        self.path
            .iter()
            .map(|s| match s {
                Seg::Key(k) => k.clone(),
                Seg::Index(i) => i.to_string(),
            })
            .collect::<Vec<_>>()
            .join(".")
    }

    fn check_str(&self, s: &str) -> Result<(), String> {
        let Some(kind) = self.kind else {
            return Ok(());
        };
        let path: Vec<PathSeg<'_>> = self
            .path
            .iter()
            .map(|s| match s {
                Seg::Key(k) => PathSeg::Key(k),
                Seg::Index(i) => PathSeg::Index(*i),
            })
            .collect();
        let param_kind = match super::super::builtin::for_type(kind) {
            Some(family) => (family.param_kind)(kind, &path, self.siblings),
            None => match kind {
                "run_command" => super::super::run_command::param_kind(&path, self.siblings),
                "import_check" | "pytest" | "pylint_score" => python::param_kind(&path),
                "reference_comparison" => reference::param_kind(&path),
                _ => None,
            },
        };
        match param_kind {
            Some(param) => param.check(&self.label(), s),
            None => Ok(()),
        }
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
        let label = self.label();
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
            let seed = self.child(Seg::Index(items.len()), &empty);
            match seq.next_element_seed(seed)? {
                Some(v) => items.push(v),
                None => return Ok(Value::Array(items)),
            }
        }
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let value = map.next_value_seed(self.child(Seg::Key(key.clone()), &out))?;
            out.insert(key, value);
        }
        Ok(Value::Object(out))
    }
}
