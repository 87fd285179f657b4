//! Resolving the `agent:` section against the task folder at load: plugin paths made
//! absolute (`$VAR` expanded), `system_prompt_file` and a `claude_settings` path read,
//! and the skill folders the plugins hold.

use super::super::expand::expand_env;
use super::{AgentSpec, ClaudeSettings, SystemPromptMode};
use std::path::{Path, PathBuf};

impl AgentSpec {
    /// The skill folders the plugins hold (`<plugin>/skills/<name>/SKILL.md`, and a
    /// plugin folder that is itself a skill), for harnesses with skills but no plugins.
    pub fn skill_dirs(&self) -> Vec<PathBuf> {
        let mut dirs = Vec::new();
        for plugin in &self.plugins {
            let root = Path::new(&plugin.path);
            if root.join("SKILL.md").is_file() {
                dirs.push(root.to_path_buf());
            }
            if let Ok(entries) = std::fs::read_dir(root.join("skills")) {
                let mut found: Vec<PathBuf> = entries
                    .filter_map(Result::ok)
                    .map(|e| e.path())
                    .filter(|p| p.join("SKILL.md").is_file())
                    .collect();
                found.sort();
                dirs.extend(found);
            }
        }
        dirs
    }

    /// Resolves paths and files against the task folder `dir`: plugin paths (`$VAR`
    /// expanded, must be folders), `system_prompt_file` (read into `system_prompt`),
    /// `claude_settings` given as a path (read and parsed). Errors are one sentence
    /// naming the `agent.` key.
    pub(crate) fn resolve(&mut self, dir: &Path) -> Result<(), String> {
        for (i, plugin) in self.plugins.iter_mut().enumerate() {
            let expanded = expand_env(&plugin.path)
                .map_err(|var| format!("agent.plugins[{i}].path `{}`: the environment variable `{var}` is not set (export it, or write the path)", plugin.path))?;
            let path = dir.join(&expanded);
            if !path.is_dir() {
                return Err(format!(
                    "agent.plugins[{i}].path: {} is not a folder (a local plugin is a folder holding the plugin or its skills)",
                    path.display()
                ));
            }
            plugin.path = std::path::absolute(&path)
                .unwrap_or(path)
                .display()
                .to_string();
        }
        match (&self.system_prompt, &self.system_prompt_file) {
            (Some(_), Some(_)) => {
                return Err("agent: give system_prompt or system_prompt_file, not both".into());
            }
            (None, Some(file)) => {
                let path = dir.join(file);
                let text = std::fs::read_to_string(&path)
                    .map_err(|e| format!("agent.system_prompt_file: {}: {e}", path.display()))?;
                self.system_prompt = Some(text);
            }
            _ => {}
        }
        // coder_eval: a blank prompt is no prompt.
        if self
            .system_prompt
            .as_deref()
            .is_some_and(|p| p.trim().is_empty())
        {
            self.system_prompt = None;
        }
        if self.system_prompt_mode == Some(SystemPromptMode::Replace)
            && self.system_prompt.is_none()
        {
            return Err(
                "agent.system_prompt_mode: `replace` needs a system_prompt (or system_prompt_file) to replace the CLI's own with".into(),
            );
        }
        if let Some(ClaudeSettings::Path(file)) = &self.claude_settings {
            let path = dir.join(file);
            let text = std::fs::read_to_string(&path)
                .map_err(|e| format!("agent.claude_settings: {}: {e}", path.display()))?;
            let object: serde_json::Map<String, serde_json::Value> = serde_json::from_str(&text)
                .map_err(|e| {
                    format!(
                        "agent.claude_settings: {} is not a JSON object: {e}",
                        path.display()
                    )
                })?;
            self.claude_settings = Some(ClaudeSettings::Object(object));
        }
        for pattern in &self.ignore_patterns {
            super::super::sandbox::check_ignore_pattern(pattern)
                .map_err(|e| format!("agent.ignore_patterns: {e}"))?;
        }
        Ok(())
    }
}
