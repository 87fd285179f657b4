//! The files and folders a resolved task names ([`Task::named_paths`]), for a suite
//! unit's content id (`suite::plan::task_reads`).

use super::{Reference, Task};
use std::path::{Path, PathBuf};

impl Task {
    /// Every file or folder the resolved task names, as (field, absolute or
    /// task-folder-relative path resolved against [`Task::dir`]), in field order:
    /// `sandbox.template_dir`, `reference`, `agent.plugins[i].path`, and per criterion
    /// `success_criteria[i]` its component or plugin file and any string parameter that
    /// names an existing file or folder relative to the task folder (a script, a data
    /// file). Only paths that exist are listed. Inline content (the prompt, the system
    /// prompt, `claude_settings`) is not a path: it is in the resolved task.
    pub(crate) fn named_paths(&self) -> Vec<(String, PathBuf)> {
        let mut out = Vec::new();
        let mut add = |what: String, path: &Path| {
            let path = self.dir.join(path);
            if path.exists() {
                out.push((what, path));
            }
        };
        if let Some(template) = &self.sandbox.template_dir {
            add("sandbox.template_dir".into(), template);
        }
        match &self.reference {
            Some(Reference::Directory(p)) | Some(Reference::File(p)) => add("reference".into(), p),
            _ => {}
        }
        for (i, plugin) in self.agent.plugins.iter().enumerate() {
            add(format!("agent.plugins[{i}].path"), Path::new(&plugin.path));
        }
        for (i, criterion) in self.success_criteria.iter().enumerate() {
            for path in criterion.named_paths() {
                add(format!("success_criteria[{i}]"), &path);
            }
        }
        out
    }
}
