//! The path fields of a layer (`agent.scripted_model`, `initial_prompt_file`): made
//! absolute for the merge, and relative again in the lineage a unit's id hashes.

use super::{Layer, Lineage};
use serde_yaml_ng::Value;
use std::path::{Path, PathBuf};

/// A path field of a layer made absolute against `base` (the layer's own folder).
fn absolutize(layer: &mut Value, path: &[&str], base: &Path) {
    let mut at = layer;
    for key in &path[..path.len() - 1] {
        match at.get_mut(*key) {
            Some(next) => at = next,
            None => return,
        }
    }
    if let Some(v) = at.get_mut(path[path.len() - 1])
        && let Some(s) = v.as_str()
    {
        let joined = base.join(s);
        *v = Value::String(
            std::path::absolute(&joined)
                .unwrap_or(joined)
                .display()
                .to_string(),
        );
    }
}

/// The path fields of a layer, as dotted lineage paths: an experiment's are relative to
/// its file, the command line's to the current folder.
pub(super) const PATH_FIELDS: &[&str] = &["agent.scripted_model", "initial_prompt_file"];

pub(super) fn absolutize_paths(layer: &mut Value, base: &Path) {
    for field in PATH_FIELDS {
        absolutize(layer, &field.split('.').collect::<Vec<_>>(), base);
    }
}

/// `base` as [`absolutize`] joins it (an empty base is the current folder).
fn absolute_base(base: &Path) -> PathBuf {
    let base = if base.as_os_str().is_empty() {
        Path::new(".")
    } else {
        base
    };
    std::path::absolute(base).unwrap_or_else(|_| base.to_path_buf())
}

/// The path fields' lineage values as their layer wrote them: relative to the experiment
/// file's folder (`experiment_dir`, for its defaults and variants) or to `cwd` (the
/// command line's `-D`), not the absolute paths the merge reads. The lineage is part of
/// a unit's id (`suite::plan`), so a plan made in one checkout gives the same ids in a
/// checkout at another path (a pod mounting the repository elsewhere). A path outside
/// its base, or given absolute, stays as it is.
pub(super) fn relative_lineage(lineage: &mut Lineage, experiment_dir: Option<&Path>, cwd: &Path) {
    for field in PATH_FIELDS {
        let Some(entry) = lineage.get_mut(*field) else {
            continue;
        };
        let base = match entry.source {
            Layer::ExperimentDefaults | Layer::Variant => match experiment_dir {
                Some(dir) => dir,
                None => continue,
            },
            Layer::Cli => cwd,
            _ => continue,
        };
        let Some(value) = entry.value.as_str() else {
            continue;
        };
        if let Ok(rel) = Path::new(value).strip_prefix(absolute_base(base)) {
            entry.value = serde_json::Value::String(rel.display().to_string());
        }
    }
}
