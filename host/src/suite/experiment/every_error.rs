//! Every error of an experiment file, not only the first ([`every_error`]), for
//! `coder-eval check`: parsing stops at its first error (serde does), so the file is
//! parsed again with the failing line commented out, until it loads or the next error
//! cannot be placed on a line of its own.

use super::{Experiment, ExperimentError};
use std::path::Path;

/// At most this many errors are reported per file.
const MAX_ERRORS: usize = 50;

/// The errors of experiment file `path` (whose text is `text`), in the order found: the
/// first error of [`Experiment::parse`] and [`Experiment::refusals`], then each next one
/// found with the line of the one before commented out (comment lines keep every line
/// number). Only a `key: value` line (not a list item's first line, not a block's key)
/// is commented out; an error that has no line, or that only the removal caused (a
/// missing field, a line already out), ends the list. Empty when the file loads.
pub fn every_error(path: &Path, text: &str) -> Vec<ExperimentError> {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let mut errors: Vec<ExperimentError> = Vec::new();
    let mut out: Vec<usize> = Vec::new();
    while errors.len() < MAX_ERRORS {
        let err = match Experiment::parse(&lines.join("\n"), path).and_then(|e| e.refusals()) {
            Ok(()) => break,
            Err(err) => err,
        };
        let message = err.to_string();
        let caused = !errors.is_empty() && message.contains("missing field");
        let line = match &err {
            ExperimentError::Invalid { line, .. } if *line > 0 && !out.contains(line) => *line,
            _ => {
                if !caused && errors.iter().all(|e| e.to_string() != message) {
                    errors.push(err);
                }
                break;
            }
        };
        if caused {
            break;
        }
        errors.push(err);
        let Some(text) = lines.get(line - 1) else {
            break;
        };
        let trimmed = text.trim_start();
        let leaf = !trimmed.starts_with("- ")
            && trimmed
                .split_once(':')
                .is_some_and(|(_, value)| !value.trim().is_empty());
        if !leaf {
            break;
        }
        lines[line - 1] = format!("# {text}");
        out.push(line);
    }
    errors
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_type_errors_are_both_reported_each_on_its_line() {
        let text = "experiment_id: types\ndefaults:\n  repeats: \"three\"\nvariants:\n  - variant_id: a\n    run_limits: {max_turns: \"lots\"}\n";
        let errors: Vec<String> = every_error(Path::new("/x/types.yaml"), text)
            .iter()
            .map(|e| e.to_string())
            .collect();
        assert_eq!(errors.len(), 2, "{errors:#?}");
        assert!(errors[0].starts_with("/x/types.yaml:3:"), "{errors:#?}");
        assert!(errors[0].contains("repeats"), "{errors:#?}");
        assert!(errors[1].starts_with("/x/types.yaml:6:"), "{errors:#?}");
        assert!(errors[1].contains("max_turns"), "{errors:#?}");
        // A good file: none; one error: one.
        assert!(
            every_error(
                Path::new("/x/ok.yaml"),
                "experiment_id: a\nvariants: [{variant_id: a}]\n"
            )
            .is_empty()
        );
        assert_eq!(
            every_error(
                Path::new("/x/one.yaml"),
                "experiment_id: a\ndefaults: {repeats: 0}\nvariants: [{variant_id: a}]\n"
            )
            .len(),
            1
        );
    }
}
