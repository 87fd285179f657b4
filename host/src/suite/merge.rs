//! The 5-layer merge of a task's fields (built-in default → experiment `defaults` → task
//! file → variant → command line) with each field's lineage. Each field's rule is
//! declared once, in [`MERGE_RULES`].

pub(crate) use crate::results::Layer;
pub use crate::results::Lineage;
pub(crate) use crate::results::LineageEntry;
use serde_yaml_ng::{Mapping, Value};
use std::collections::BTreeMap;

/// How a field combines across layers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MergeRule {
    /// The later layer's value wins.
    Replace,
    /// Mappings merge key by key, recursively (each leaf replaced).
    Deep,
    /// Lists concatenate: earlier layers first (`reverse: false`), or later layers first
    /// (`reverse: true`: `post_run`, so the experiment's cleanup runs after the task's).
    Append { reverse: bool },
}

/// Every top-level field whose rule is not [`MergeRule::Replace`] (coder_eval's rules:
/// sections merge per key, `pre_run` is prepended by the experiment, `post_run` appended).
pub(crate) const MERGE_RULES: &[(&str, MergeRule)] = &[
    ("agent", MergeRule::Deep),
    ("run_limits", MergeRule::Deep),
    ("retry", MergeRule::Deep),
    ("sandbox", MergeRule::Deep),
    ("pre_run", MergeRule::Append { reverse: false }),
    ("post_run", MergeRule::Append { reverse: true }),
    ("tags", MergeRule::Append { reverse: false }),
];

/// The merge rule of a top-level field.
pub(crate) fn rule_of(field: &str) -> MergeRule {
    MERGE_RULES
        .iter()
        .find(|(name, _)| *name == field)
        .map_or(MergeRule::Replace, |(_, rule)| *rule)
}

pub(crate) fn set_path(at: &mut Value, keys: &[&str], value: Value) -> Result<(), String> {
    let Value::Mapping(map) = at else {
        return Err("sets a key inside a field that is not a mapping".into());
    };
    let key = Value::String(keys[0].into());
    if keys.len() == 1 {
        map.insert(key, value);
        return Ok(());
    }
    let next = map
        .entry(key)
        .or_insert_with(|| Value::Mapping(Mapping::new()));
    set_path(next, &keys[1..], value)
}

/// One layer to merge: its values, its name, and a detail per dotted path (or for all).
pub(crate) struct LayerInput<'a> {
    pub(crate) value: &'a Value,
    pub(crate) layer: Layer,
    pub(crate) detail: Option<String>,
    pub(crate) per_path: Option<&'a BTreeMap<String, String>>,
}

fn json(v: &Value) -> serde_json::Value {
    serde_json::to_value(v).unwrap_or(serde_json::Value::Null)
}

/// Merges `layers` (lowest first) by [`MERGE_RULES`], recording each field's lineage.
pub(crate) fn merge(layers: &[LayerInput<'_>]) -> (Mapping, Lineage) {
    let mut out = Mapping::new();
    let mut lineage = Lineage::new();
    // Appended lists: each layer's part, in layer order.
    let mut appended: BTreeMap<String, Vec<(Layer, Vec<Value>)>> = BTreeMap::new();
    for input in layers {
        let Some(map) = input.value.as_mapping() else {
            continue;
        };
        for (k, v) in map {
            let Some(key) = k.as_str() else { continue };
            let detail = |path: &str| {
                input
                    .per_path
                    .and_then(|p| p.get(path).cloned())
                    .or_else(|| input.detail.clone())
            };
            match rule_of(key) {
                MergeRule::Replace => {
                    out.insert(k.clone(), v.clone());
                    lineage.retain(|p, _| p != key && !p.starts_with(&format!("{key}.")));
                    lineage.insert(
                        key.to_string(),
                        LineageEntry {
                            value: json(v),
                            source: input.layer,
                            source_detail: detail(key),
                        },
                    );
                }
                MergeRule::Deep => {
                    let slot = out
                        .entry(k.clone())
                        .or_insert_with(|| Value::Mapping(Mapping::new()));
                    deep_merge(slot, v, key, input.layer, &detail, &mut lineage);
                }
                MergeRule::Append { .. } => {
                    let items = match v {
                        Value::Sequence(s) => s.clone(),
                        Value::Null => Vec::new(),
                        other => vec![other.clone()],
                    };
                    appended
                        .entry(key.to_string())
                        .or_default()
                        .push((input.layer, items));
                }
            }
        }
    }
    for (key, mut parts) in appended {
        if let MergeRule::Append { reverse: true } = rule_of(&key) {
            parts.reverse();
        }
        let items: Vec<Value> = parts.iter().flat_map(|(_, i)| i.clone()).collect();
        let sources: Vec<&str> = parts
            .iter()
            .filter(|(_, i)| !i.is_empty())
            .map(|(l, _)| layer_name(*l))
            .collect();
        let value = Value::Sequence(items);
        lineage.insert(
            key.clone(),
            LineageEntry {
                value: json(&value),
                source: parts
                    .iter()
                    .map(|(l, _)| *l)
                    .max()
                    .unwrap_or(Layer::Default),
                source_detail: (sources.len() > 1)
                    .then(|| format!("appended: {}", sources.join(", "))),
            },
        );
        out.insert(Value::String(key), value);
    }
    (out, lineage)
}

fn layer_name(l: Layer) -> &'static str {
    match l {
        Layer::Default => "default",
        Layer::ExperimentDefaults => "experiment-defaults",
        Layer::Task => "task",
        Layer::Variant => "variant",
        Layer::Cli => "cli",
        Layer::Mutation => "mutation",
    }
}

fn deep_merge(
    slot: &mut Value,
    v: &Value,
    path: &str,
    layer: Layer,
    detail: &dyn Fn(&str) -> Option<String>,
    lineage: &mut Lineage,
) {
    match (slot.as_mapping_mut(), v.as_mapping()) {
        (Some(into), Some(from)) => {
            for (k, v) in from {
                let sub = format!("{path}.{}", k.as_str().unwrap_or("?"));
                let child = into.entry(k.clone()).or_insert(Value::Null);
                if child.is_mapping() && v.is_mapping() {
                    deep_merge(child, v, &sub, layer, detail, lineage);
                } else if v.is_mapping() {
                    *child = Value::Mapping(Mapping::new());
                    lineage.retain(|p, _| p != &sub && !p.starts_with(&format!("{sub}.")));
                    deep_merge(child, v, &sub, layer, detail, lineage);
                } else {
                    *child = v.clone();
                    lineage.retain(|p, _| !p.starts_with(&format!("{sub}.")));
                    lineage.insert(
                        sub.clone(),
                        LineageEntry {
                            value: json(v),
                            source: layer,
                            source_detail: detail(&sub),
                        },
                    );
                }
            }
        }
        _ => {
            *slot = v.clone();
            lineage.insert(
                path.to_string(),
                LineageEntry {
                    value: json(v),
                    source: layer,
                    source_detail: detail(path),
                },
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::experiment::Overrides;

    fn lin(l: &Lineage, path: &str) -> (Layer, serde_json::Value) {
        let e = l
            .get(path)
            .unwrap_or_else(|| panic!("no lineage for {path}: {l:?}"));
        (e.source, e.value.clone())
    }

    #[test]
    fn five_layers_by_their_rules_with_lineage() {
        let defaults: Value = serde_yaml_ng::from_str(
            "agent: {type: claude-code, model: a}\nrun_limits: {max_turns: 5, max_tool_calls: 9}\npre_run: [d1]\npost_run: [dz]\nrepeats: 2",
        )
        .unwrap();
        let task: Value = serde_yaml_ng::from_str(
            "task_id: t\nagent: {model: b}\nrun_limits: {max_turns: 7}\npre_run: [t1]\npost_run: [tz]\ntags: [x]",
        )
        .unwrap();
        let variant: Value =
            serde_yaml_ng::from_str("agent: {model: c}\nrun_limits: {max_tool_calls: 3}").unwrap();
        let (cli, detail) = Overrides {
            set: vec!["run_limits.max_turns=2".into()],
            ..Default::default()
        }
        .layer()
        .unwrap();
        let (merged, lineage) = merge(&[
            LayerInput {
                value: &defaults,
                layer: Layer::ExperimentDefaults,
                detail: None,
                per_path: None,
            },
            LayerInput {
                value: &task,
                layer: Layer::Task,
                detail: None,
                per_path: None,
            },
            LayerInput {
                value: &variant,
                layer: Layer::Variant,
                detail: Some("v".into()),
                per_path: None,
            },
            LayerInput {
                value: &cli,
                layer: Layer::Cli,
                detail: None,
                per_path: Some(&detail),
            },
        ]);
        let root = Value::Mapping(merged.clone());
        let get = |p: &[&str]| {
            let mut v = &root;
            for k in p {
                v = v.get(*k).unwrap();
            }
            v.clone()
        };
        assert_eq!(get(&["agent", "type"]), Value::from("claude-code"));
        assert_eq!(get(&["agent", "model"]), Value::from("c"));
        assert_eq!(get(&["run_limits", "max_turns"]), Value::from(2));
        assert_eq!(get(&["run_limits", "max_tool_calls"]), Value::from(3));
        // pre_run: experiment first; post_run: the task's first, the experiment's last.
        assert_eq!(
            get(&["pre_run"]),
            serde_yaml_ng::from_str::<Value>("[d1, t1]").unwrap()
        );
        assert_eq!(
            get(&["post_run"]),
            serde_yaml_ng::from_str::<Value>("[tz, dz]").unwrap()
        );
        assert_eq!(lin(&lineage, "agent.type").0, Layer::ExperimentDefaults);
        assert_eq!(lin(&lineage, "agent.model"), (Layer::Variant, "c".into()));
        assert_eq!(
            lin(&lineage, "run_limits.max_turns"),
            (Layer::Cli, 2.into())
        );
        assert_eq!(
            lineage["run_limits.max_turns"].source_detail.as_deref(),
            Some("-D run_limits.max_turns=2")
        );
        assert_eq!(
            lin(&lineage, "repeats"),
            (Layer::ExperimentDefaults, 2.into())
        );
        assert_eq!(lin(&lineage, "task_id"), (Layer::Task, "t".into()));
        assert_eq!(
            lineage["post_run"].source_detail.as_deref(),
            Some("appended: task, experiment-defaults")
        );
    }
}
