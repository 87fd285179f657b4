//! coder_eval's prompt mutations, applied in order to a variant's resolved prompt.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One of coder_eval's prompt mutations, applied in order to the resolved prompt.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub(crate) enum PromptMutation {
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
            } => {
                let re = regex::Regex::new(pattern).map_err(|e| {
                    format!("prompt_mutations: replace: bad regex `{pattern}`: {e}")
                })?;
                let template = python_replacement(replacement).map_err(|e| {
                    format!("prompt_mutations: replace: replacement `{replacement}`: {e}")
                })?;
                re.replace_all(prompt, template.as_str()).into_owned()
            }
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

/// A Python `re.sub` replacement (coder_eval applies regex mutations with Python's `re`)
/// as a `regex` crate template: `\1`, `\12` and `\g<1>` / `\g<name>` are groups (`${1}`,
/// `${name}`), `\n`, `\t`, `\r`, `\\` the characters, another escaped non-letter itself
/// with its backslash (as Python keeps it), and a literal `$` is `$$`. An escaped ASCII
/// letter Python does not know is an error, as in Python (`bad escape`).
fn python_replacement(text: &str) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '$' => out.push_str("$$"),
            '\\' => match chars.next() {
                None => return Err("a trailing backslash".into()),
                Some(d) if d.is_ascii_digit() => {
                    let mut group = d.to_string();
                    if let Some(&e) = chars.peek()
                        && e.is_ascii_digit()
                    {
                        group.push(e);
                        chars.next();
                    }
                    out.push_str(&format!("${{{group}}}"));
                }
                Some('g') => {
                    if chars.next() != Some('<') {
                        return Err("`\\g` without `<name>`".into());
                    }
                    let name: String = chars.by_ref().take_while(|&c| c != '>').collect();
                    if name.is_empty() {
                        return Err("an empty `\\g<>`".into());
                    }
                    out.push_str(&format!("${{{name}}}"));
                }
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some('r') => out.push('\r'),
                Some('f') => out.push('\x0c'),
                Some('v') => out.push('\x0b'),
                Some('a') => out.push('\x07'),
                Some('b') => out.push('\x08'),
                Some('\\') => out.push('\\'),
                Some(d) if d.is_ascii_alphabetic() => return Err(format!("bad escape \\{d}")),
                Some('$') => out.push_str("\\$$"),
                Some(d) => {
                    out.push('\\');
                    out.push(d);
                }
            },
            c => out.push(c),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regex_replacements_read_as_python_re_sub() {
        let m = |pattern: &str, replacement: &str| PromptMutation::Replace {
            pattern: pattern.into(),
            replacement: replacement.into(),
            regex: true,
        };
        // Python: re.sub(r"(hi)", r"costs $5 [\1] [\g<1>]", "hi") == "costs $5 [hi] [hi]"
        assert_eq!(
            m("(hi)", r"costs $5 [\1] [\g<1>]").apply("hi").unwrap(),
            "costs $5 [hi] [hi]"
        );
        assert_eq!(
            m("(?P<w>o+)", r"<\g<w>>\n\\").apply("foo").unwrap(),
            "f<oo>\n\\"
        );
        assert!(m("x", r"\q").apply("x").unwrap_err().contains("bad escape"));
    }

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
