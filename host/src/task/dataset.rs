//! `dataset:` fan-out: one task file becomes one task per row, `<task_id>/<row_id>`.
//!
//! coder_eval v0.12 semantics (`docs/DATASETS.md`, `models/tasks.py` `Dataset`): rows
//! come inline (`rows`) or from JSONL files (`paths`, relative to the task file, in
//! order); `id_field` (default `id`) names each row, and must be present, unique and
//! match `^[A-Za-z0-9_][A-Za-z0-9_.-]*$` (it names a folder). `${row.<field>}` in the
//! prompt and in every string of `success_criteria` is replaced by the row's value (a
//! string as is, `null` as nothing, a number or boolean as JSON; a list or mapping is an
//! error); a field the row lacks is a load error naming the row. The older single-file
//! `path:` is read as `paths: [path]`. `sample_per_stratum: N` keeps up to N rows per value of `stratify_field`
//! (default `expected_skill`), drawn with `sample_seed` (unset = a new draw each run,
//! as in coder_eval).

use serde::Deserialize;
use serde_json::{Map, Value};
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

/// `dataset:` as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct DatasetSpec {
    #[serde(default)]
    pub rows: Option<Vec<Map<String, Value>>>,
    #[serde(default)]
    pub paths: Option<Vec<PathBuf>>,
    /// coder_eval's older single-file form of `paths`.
    #[serde(default)]
    pub path: Option<PathBuf>,
    /// The row field naming a row's split (`train`, `test`) for `run --split`.
    #[serde(default = "default_split_field")]
    pub split_field: String,
    #[serde(default = "default_id_field")]
    pub id_field: String,
    #[serde(default)]
    pub sample_per_stratum: Option<u32>,
    #[serde(default = "default_stratify_field")]
    pub stratify_field: String,
    #[serde(default)]
    pub sample_seed: Option<u64>,
}

fn default_id_field() -> String {
    "id".into()
}

fn default_split_field() -> String {
    "split".into()
}

fn default_stratify_field() -> String {
    "expected_skill".into()
}

/// One row.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Row {
    /// The value of `id_field`, as text.
    pub id: String,
    pub values: Map<String, Value>,
    /// Where it was written: `dataset.rows[2]` or `rows.jsonl:5`.
    pub origin: String,
}

/// Which rows of a dataset to run, from the command line (coder_eval's `run --split`,
/// `--sample`, `--sample-per-stratum`). `--split` filters first; then `--sample N` (a
/// uniform draw with a fixed seed, reproducible) or else the per-stratum draw (the
/// flag overrides `dataset.sample_per_stratum`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selection {
    pub split: Option<String>,
    pub sample: Option<usize>,
    pub sample_per_stratum: Option<u32>,
}

/// The seed of `--sample N` (coder_eval's is fixed too: the same N rows every run).
const SAMPLE_SEED: u64 = 0x5eed;

/// Reads, checks and samples the rows. Errors name the row (and file:line for JSONL).
#[cfg(test)]
pub(crate) fn load_rows(spec: &DatasetSpec, dir: &Path) -> Result<Vec<Row>, String> {
    load_rows_with(spec, dir, &Selection::default())
}

/// [`load_rows`] with a command-line [`Selection`]. A `--split` that a labelled dataset
/// has no rows of gives no rows (the caller notes it), as coder_eval skips the task.
pub(crate) fn load_rows_with(
    spec: &DatasetSpec,
    dir: &Path,
    select: &Selection,
) -> Result<Vec<Row>, String> {
    let mut raw: Vec<(Map<String, Value>, String)> = Vec::new();
    let paths = match (&spec.paths, &spec.path) {
        (Some(_), Some(_)) => return Err("dataset: give `paths` or `path`, not both".into()),
        (Some(p), None) => Some(p.clone()),
        (None, Some(p)) => Some(vec![p.clone()]),
        (None, None) => None,
    };
    match (&spec.rows, &paths) {
        (Some(_), Some(_)) => {
            return Err("dataset: give `rows` or `paths`, not both".into());
        }
        (None, None) => return Err("dataset: give `rows` or `paths`".into()),
        (Some(rows), None) => {
            for (i, row) in rows.iter().enumerate() {
                raw.push((row.clone(), format!("dataset.rows[{i}]")));
            }
        }
        (None, Some(paths)) => {
            if paths.is_empty() {
                return Err("dataset.paths: an empty list".into());
            }
            for path in paths {
                let real = super::sandbox::inside_root(dir, path, "dataset.paths")?;
                let text = std::fs::read_to_string(&real)
                    .map_err(|e| format!("dataset.paths: {}: {e}", real.display()))?;
                for (n, line) in text.lines().enumerate() {
                    if line.trim().is_empty() {
                        continue;
                    }
                    let at = format!("{}:{}", real.display(), n + 1);
                    let value: Value = serde_json::from_str(line)
                        .map_err(|e| format!("{at}: not a JSON line: {e}"))?;
                    let Value::Object(map) = value else {
                        return Err(format!("{at}: a dataset row is a JSON object"));
                    };
                    raw.push((map, at));
                }
            }
        }
    }
    if raw.is_empty() {
        return Err("dataset: no rows".into());
    }
    let mut seen = HashSet::new();
    let mut rows = Vec::with_capacity(raw.len());
    for (values, origin) in raw {
        let id = match values.get(&spec.id_field) {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Number(n)) => n.to_string(),
            Some(other) => {
                return Err(format!(
                    "{origin}: the row id `{}` is {other}, not a string or number",
                    spec.id_field
                ));
            }
            None => {
                return Err(format!(
                    "{origin}: the row has no `{}` (dataset.id_field): every row needs an id",
                    spec.id_field
                ));
            }
        };
        if !valid_row_id(&id) {
            return Err(format!(
                "{origin}: row id `{}` must match ^[A-Za-z0-9_][A-Za-z0-9_.-]*$ (it names a folder)",
                id.escape_debug()
            ));
        }
        if !seen.insert(id.clone()) {
            return Err(format!("{origin}: row id `{id}` appears twice"));
        }
        rows.push(Row { id, values, origin });
    }
    if let Some(split) = &select.split {
        let label = |r: &Row| match r.values.get(&spec.split_field) {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) if s.is_empty() => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(other) => Some(other.to_string()),
        };
        // A dataset without split labels passes through unfiltered.
        if rows.iter().any(|r| label(r).is_some()) {
            rows.retain(|r| label(r).as_deref() == Some(split.as_str()));
        }
    }
    if let Some(n) = select.sample {
        if n < rows.len() {
            let mut rng = SplitMix(SAMPLE_SEED);
            let mut order: Vec<usize> = (0..rows.len()).collect();
            for i in 0..n {
                let j = i + (rng.next() % (order.len() - i) as u64) as usize;
                order.swap(i, j);
            }
            let mut keep = vec![false; rows.len()];
            for &i in &order[..n] {
                keep[i] = true;
            }
            rows = rows
                .into_iter()
                .zip(keep)
                .filter_map(|(row, k)| k.then_some(row))
                .collect();
        }
    } else if let Some(n) = select.sample_per_stratum.or(spec.sample_per_stratum) {
        if n == 0 {
            return Err("dataset.sample_per_stratum: must be at least 1".into());
        }
        rows = sample_per_stratum(rows, &spec.stratify_field, n as usize, spec.sample_seed);
    }
    Ok(rows)
}

/// `^[A-Za-z0-9_][A-Za-z0-9_.-]*$`.
pub(crate) fn valid_row_id(id: &str) -> bool {
    let mut chars = id.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphanumeric() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
}

/// Up to `n` rows per stratum, in their original order. `seed` `None` draws anew.
fn sample_per_stratum(rows: Vec<Row>, field: &str, n: usize, seed: Option<u64>) -> Vec<Row> {
    let mut strata: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, row) in rows.iter().enumerate() {
        let key = match row.values.get(field) {
            Some(Value::String(s)) => s.clone(),
            Some(other) => other.to_string(),
            None => String::new(),
        };
        strata.entry(key).or_default().push(i);
    }
    let mut rng = SplitMix(seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64)
    }));
    let mut keep = vec![false; rows.len()];
    for members in strata.values_mut() {
        // Partial Fisher-Yates: the first n places hold the draw.
        for i in 0..members.len().min(n) {
            let j = i + (rng.next() % (members.len() - i) as u64) as usize;
            members.swap(i, j);
            keep[members[i]] = true;
        }
    }
    rows.into_iter()
        .zip(keep)
        .filter_map(|(row, k)| k.then_some(row))
        .collect()
}

/// SplitMix64: a small, well-known generator; the draw only needs to be reproducible
/// for one seed on this build.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// Replaces every `${row.<field>}` in `text`. Errors name the row and the field.
pub(crate) fn substitute(text: &str, row: &Row) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("${row.") {
        out.push_str(&rest[..i]);
        let after = &rest[i + "${row.".len()..];
        let Some(end) = after.find('}') else {
            return Err(format!("`${{row.` without its closing `}}` in `{text}`"));
        };
        let field = &after[..end];
        let value = row.values.get(field).ok_or_else(|| {
            format!(
                "dataset row `{}` ({}) has no field `{field}` (used as ${{row.{field}}})",
                row.id, row.origin
            )
        })?;
        match value {
            Value::String(s) => out.push_str(s),
            // coder_eval: null is the empty string; a list or mapping is not a scalar.
            Value::Null => {}
            Value::Array(_) | Value::Object(_) => {
                return Err(format!(
                    "dataset row `{}` ({}): ${{row.{field}}} is a list or mapping, not a scalar",
                    row.id, row.origin
                ));
            }
            other => out.push_str(&other.to_string()),
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// [`substitute`] in every string of a YAML value (keys stay as written).
pub(crate) fn substitute_value(value: &mut serde_yaml_ng::Value, row: &Row) -> Result<(), String> {
    match value {
        serde_yaml_ng::Value::String(s) if s.contains("${row.") => {
            *s = substitute(s, row)?;
        }
        serde_yaml_ng::Value::Sequence(items) => {
            for item in items {
                substitute_value(item, row)?;
            }
        }
        serde_yaml_ng::Value::Mapping(map) => {
            for (_, v) in map.iter_mut() {
                substitute_value(v, row)?;
            }
        }
        serde_yaml_ng::Value::Tagged(tagged) => substitute_value(&mut tagged.value, row)?,
        _ => {}
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(yaml: &str) -> DatasetSpec {
        serde_yaml_ng::from_str(yaml).unwrap()
    }

    #[test]
    fn rows_ids_and_substitution() {
        let rows = load_rows(
            &spec("rows: [{id: a, x: one, n: 3}, {id: b, x: two, n: 4}]"),
            Path::new("/tmp"),
        )
        .unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(
            substitute("say ${row.x} ${row.n}", &rows[1]).unwrap(),
            "say two 4"
        );
        let err = substitute("${row.y}", &rows[0]).unwrap_err();
        assert!(err.contains("row `a`") && err.contains("`y`"), "{err}");
    }

    #[test]
    fn bad_rows_are_named() {
        let err = load_rows(&spec("rows: [{id: a}, {x: 1}]"), Path::new("/tmp")).unwrap_err();
        assert!(err.starts_with("dataset.rows[1]"), "{err}");
        let err = load_rows(&spec("rows: [{id: a}, {id: a}]"), Path::new("/tmp")).unwrap_err();
        assert!(err.contains("appears twice"), "{err}");
        let err = load_rows(&spec("rows: [{id: ../x}]"), Path::new("/tmp")).unwrap_err();
        assert!(err.contains("names a folder"), "{err}");
        let err = load_rows(
            &spec("rows: [{id: a}]\npaths: [x.jsonl]"),
            Path::new("/tmp"),
        )
        .unwrap_err();
        assert!(err.contains("not both"), "{err}");
    }

    #[test]
    fn split_then_sample() {
        let yaml =
            "rows: [{id: a, split: train}, {id: b, split: test}, {id: c, split: train}, {id: d}]";
        let pick = |sel: Selection| {
            load_rows_with(&spec(yaml), Path::new("/tmp"), &sel)
                .unwrap()
                .into_iter()
                .map(|r| r.id)
                .collect::<Vec<_>>()
        };
        // Unlabelled rows are left out once any row is labelled.
        assert_eq!(
            pick(Selection {
                split: Some("train".into()),
                ..Default::default()
            }),
            ["a", "c"]
        );
        assert!(
            pick(Selection {
                split: Some("holdout".into()),
                ..Default::default()
            })
            .is_empty()
        );
        let two = pick(Selection {
            sample: Some(2),
            ..Default::default()
        });
        assert_eq!(two.len(), 2);
        assert_eq!(
            two,
            pick(Selection {
                sample: Some(2),
                ..Default::default()
            })
        );
        assert_eq!(
            pick(Selection {
                sample: Some(9),
                ..Default::default()
            })
            .len(),
            4
        );
        // No labels at all: --split passes everything.
        let plain = load_rows_with(
            &spec("rows: [{id: a}, {id: b}]"),
            Path::new("/tmp"),
            &Selection {
                split: Some("train".into()),
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(plain.len(), 2);
    }

    #[test]
    fn sampling_is_per_stratum_and_seeded() {
        let yaml = "rows: [{id: a, k: x}, {id: b, k: x}, {id: c, k: x}, {id: d, k: y}]\n\
                    stratify_field: k\nsample_per_stratum: 1\nsample_seed: 7\n";
        let one = load_rows(&spec(yaml), Path::new("/tmp")).unwrap();
        let two = load_rows(&spec(yaml), Path::new("/tmp")).unwrap();
        assert_eq!(one, two);
        assert_eq!(one.len(), 2);
        assert_eq!(one.iter().filter(|r| r.values["k"] == "y").count(), 1);
    }
}
