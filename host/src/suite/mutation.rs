//! coder_eval's prompt mutations, applied in order to a variant's resolved prompt.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One of coder_eval's prompt mutations, applied in order to the resolved prompt.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum PromptMutation {
    Prefix {
        content: String,
        #[serde(default = "blank_line")]
        separator: String,
    },
    Suffix {
        content: String,
        #[serde(default = "blank_line")]
        separator: String,
    },
    Replace {
        pattern: String,
        replacement: String,
        #[serde(default)]
        regex: bool,
    },
    Template {
        variables: BTreeMap<String, String>,
    },
}

fn blank_line() -> String {
    "\n\n".into()
}

impl PromptMutation {
    /// The prompt after this mutation; a bad regex is an error naming it.
    pub(crate) fn apply(&self, prompt: &str) -> Result<String, String> {
        Ok(match self {
            PromptMutation::Prefix { content, separator } => {
                format!("{content}{separator}{prompt}")
            }
            PromptMutation::Suffix { content, separator } => {
                format!("{prompt}{separator}{content}")
            }
            PromptMutation::Replace {
                pattern,
                replacement,
                regex: false,
            } => prompt.replace(pattern.as_str(), replacement),
            PromptMutation::Replace {
                pattern,
                replacement,
                regex: true,
            } => regex::Regex::new(pattern)
                .map_err(|e| format!("prompt_mutations: replace: bad regex `{pattern}`: {e}"))?
                .replace_all(prompt, replacement.as_str())
                .into_owned(),
            PromptMutation::Template { variables } => {
                let mut out = prompt.to_string();
                for (k, v) in variables {
                    out = out.replace(&format!("{{{k}}}"), v);
                }
                out
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mutations_in_order() {
        let ms: Vec<PromptMutation> = serde_yaml_ng::from_str(
            "- {type: prefix, content: P}\n- {type: suffix, content: S, separator: ' '}\n- {type: replace, pattern: 'a+', replacement: A, regex: true}\n- {type: template, variables: {x: X}}",
        )
        .unwrap();
        let mut p = "baa {x}".to_string();
        for m in &ms {
            p = m.apply(&p).unwrap();
        }
        assert_eq!(p, "P\n\nbA X S");
        let err =
            serde_yaml_ng::from_str::<Vec<PromptMutation>>("- {type: rephrase, instructions: x}");
        assert!(err.is_err());
    }
}
