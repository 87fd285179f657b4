//! The verdict a judge submits (checked and normalized), its tool's schema, and what the
//! judge's tokens cost.

use super::{JudgeUsage, JudgeVerdict};
use serde_json::Value;

impl JudgeVerdict {
    /// Validates a `submit_verdict` input.
    pub(crate) fn from_input(input: &Value) -> Result<JudgeVerdict, String> {
        let Some(obj) = input.as_object() else {
            return Err(format!("the verdict is not an object: {input}"));
        };
        let score = match obj.get("score") {
            None => return Err("the verdict has no score".into()),
            Some(Value::Number(n)) => n.as_f64().unwrap_or(f64::NAN),
            Some(Value::String(s)) => s
                .trim()
                .parse::<f64>()
                .map_err(|_| format!("score is not a number: {s:?}"))?,
            Some(other) => return Err(format!("score is not a number: {other}")),
        };
        if !score.is_finite() {
            return Err(format!("score is not finite: {score}"));
        }
        let rationale = match obj.get("rationale") {
            None | Some(Value::Null) => String::new(),
            Some(Value::String(s)) => s.split_whitespace().collect::<Vec<_>>().join(" "),
            Some(other) => return Err(format!("rationale must be a string, got {other}")),
        };
        if rationale.is_empty() {
            return Err("rationale is empty".into());
        }
        let findings = match obj.get("findings") {
            Some(Value::Array(items)) => items
                .iter()
                .filter(|v| !v.is_null())
                .map(|v| match v {
                    Value::String(s) => s.trim().to_string(),
                    other => other.to_string(),
                })
                .filter(|s| !s.is_empty())
                .collect(),
            _ => Vec::new(),
        };
        Ok(JudgeVerdict {
            score: score.clamp(0.0, 1.0),
            rationale,
            findings,
        })
    }

    /// The JSON schema of the `submit_verdict` tool's input.
    pub(crate) fn input_schema() -> Value {
        serde_json::json!({
            "type": "object",
            "properties": {
                "score": {"type": "number", "minimum": 0, "maximum": 1,
                          "description": "The verdict, 0 (fails the rubric) to 1 (fully meets it)."},
                "rationale": {"type": "string", "description": "A one or two sentence headline."},
                "findings": {"type": "array", "items": {"type": "string"},
                             "description": "Concrete observations, each tied to a file, a line or a behaviour."}
            },
            "required": ["score", "rationale", "findings"]
        })
    }
}

/// USD per million (input, output, cache read, cache write) tokens of Anthropic models,
/// by model-name family (Anthropic's price list, 2026).
fn price(model: &str) -> Option<(f64, f64, f64, f64)> {
    let m = model.trim_start_matches("anthropic.");
    if m.contains("opus-4-5") || m.contains("opus-4-6") || m.contains("opus-4-7") {
        Some((5.0, 25.0, 0.5, 6.25))
    } else if m.contains("opus") {
        Some((15.0, 75.0, 1.5, 18.75))
    } else if m.contains("sonnet") {
        Some((3.0, 15.0, 0.3, 3.75))
    } else if m.contains("haiku-4") {
        Some((1.0, 5.0, 0.1, 1.25))
    } else if m.contains("haiku") {
        Some((0.8, 4.0, 0.08, 1.0))
    } else {
        None
    }
}

/// USD for `usage` on `model`; `None` when the price or the counts are unknown.
pub fn cost(model: &str, usage: &JudgeUsage) -> Option<f64> {
    let (i, o, cr, cw) = price(model)?;
    let tokens = usage.input_tokens? as f64 * i
        + usage.output_tokens? as f64 * o
        + usage.cache_read_tokens.unwrap_or(0) as f64 * cr
        + usage.cache_write_tokens.unwrap_or(0) as f64 * cw;
    Some(tokens / 1e6)
}
