//! A user-supplied price table (`run --gateway --price-table FILE`):
//! USD per million tokens per model, so a call's cost is its API-reported usage times its
//! model's prices. Never a built-in table: without one, cost is never estimated.
//!
//! The file is YAML or JSON (JSON is YAML), one entry per model as the request names it
//! (the body's `model`, Gemini's path segment):
//!
//! ```yaml
//! claude-sonnet-4-5: {input: 3, output: 15, cache_read: 0.3, cache_write: 3.75}
//! gpt-5: {input: 1.25, output: 10, cache_read: 0.125}
//! ```
//!
//! `input` and `output` are required, `cache_read` and `cache_write` optional: a call
//! that read or wrote cached tokens under a model without that price has no cost (absent,
//! not 0), and says why. Every price is a non-negative, finite number; any other field is
//! an error naming the file, line and column.

use super::call::ApiUsage;
use coder_eval_scripted_model::Api;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One model's prices, USD per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Price {
    /// Uncached input tokens.
    pub input: f64,
    /// Output tokens (reasoning tokens included, as the APIs bill them).
    pub output: f64,
    /// Input tokens read from the prompt cache.
    #[serde(default)]
    pub cache_read: Option<f64>,
    /// Input tokens written to the prompt cache (Anthropic).
    #[serde(default)]
    pub cache_write: Option<f64>,
}

impl Price {
    /// The first field that is not a price (negative, not finite), with its value.
    fn bad_field(&self) -> Option<(&'static str, f64)> {
        [
            ("input", Some(self.input)),
            ("output", Some(self.output)),
            ("cache_read", self.cache_read),
            ("cache_write", self.cache_write),
        ]
        .into_iter()
        .find_map(|(name, v)| {
            v.filter(|v| !(v.is_finite() && *v >= 0.0))
                .map(|v| (name, v))
        })
    }
}

/// The 1-based line and column of `field` in `model`'s entry of `text` (the first line
/// after the model's key that names the field); the model's key line when not found.
fn field_at(text: &str, model: &str, field: &str) -> Option<(usize, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let key = |l: &str, k: &str| {
        let t = l.trim_start().trim_start_matches(['{', ',', ' ']);
        t.starts_with(&format!("{k}:")) || t.starts_with(&format!("\"{k}\""))
    };
    let start = lines.iter().position(|l| key(l, model))?;
    for (i, l) in lines.iter().enumerate().skip(start) {
        let at = [format!("{field}:"), format!("\"{field}\"")]
            .iter()
            .filter_map(|needle| l.find(needle.as_str()))
            .min();
        if let Some(col) = at {
            return Some((i + 1, col + 1));
        }
    }
    Some((start + 1, 1))
}

/// A loaded price table.
#[derive(Debug, Clone, PartialEq)]
pub struct PriceTable {
    /// The file it was read from (named in `cost_source`).
    pub path: PathBuf,
    /// Model name → prices.
    pub models: BTreeMap<String, Price>,
}

/// Why a price table cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum PriceError {
    /// The file cannot be read.
    #[error("price table {path}: cannot read it")]
    Read {
        path: String,
        #[source]
        source: std::io::Error,
    },
    /// Not a map of model → prices: `at` is `FILE:LINE:COL`, the message names the field.
    #[error("{at}: price table: {message}")]
    Parse { at: String, message: String },
    /// No model in it.
    #[error("price table {path}: no model in it (give `MODEL: {{input: USD, output: USD}}`)")]
    Empty { path: String },
}

/// What pricing one call gave.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Priced {
    /// The call's cost, USD.
    Usd(f64),
    /// Not priced, and why (a model not in the table, a cache price missing, no usage).
    Unpriced(String),
}

impl PriceTable {
    /// Reads and checks `path`. Errors: [`PriceError`], naming the file (and the line,
    /// column and field of a bad entry).
    pub fn load(path: &Path) -> Result<PriceTable, PriceError> {
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| PriceError::Read {
            path: shown.clone(),
            source,
        })?;
        PriceTable::parse(&text, path)
    }

    /// As [`PriceTable::load`], from the file's text.
    pub fn parse(text: &str, path: &Path) -> Result<PriceTable, PriceError> {
        let shown = path.display().to_string();
        let models: BTreeMap<String, Price> =
            serde_yaml_ng::from_str::<Option<BTreeMap<String, Price>>>(text)
                .map_err(|err| {
                    let at = match err.location() {
                        Some(l) => format!("{shown}:{}:{}", l.line(), l.column()),
                        None => shown.clone(),
                    };
                    // The location leads the line; serde's own trailing copy is dropped.
                    let message = err.to_string();
                    let message = match message.rfind(" at line ") {
                        Some(i) => message[..i].to_string(),
                        None => message,
                    };
                    PriceError::Parse { at, message }
                })?
                .unwrap_or_default();
        for (model, price) in &models {
            if let Some((field, v)) = price.bad_field() {
                let at = match field_at(text, model, field) {
                    Some((line, col)) => format!("{shown}:{line}:{col}"),
                    None => shown.clone(),
                };
                return Err(PriceError::Parse {
                    at,
                    message: format!(
                        "{model}.{field}: {v} is not a price: give a non-negative number of \
                         USD per million tokens"
                    ),
                });
            }
        }
        if models.is_empty() {
            return Err(PriceError::Empty { path: shown });
        }
        Ok(PriceTable {
            path: path.to_path_buf(),
            models,
        })
    }

    /// The cost of one call of `model` over `api` that reported `usage`. Anthropic's
    /// `input_tokens` exclude cache reads and writes; the OpenAI APIs' and Gemini's
    /// include the cached tokens, which are priced at `cache_read` instead.
    pub(crate) fn price(&self, api: Option<Api>, model: Option<&str>, usage: &ApiUsage) -> Priced {
        let Some(model) = model else {
            return Priced::Unpriced("the request names no model".into());
        };
        let Some(p) = self.models.get(model) else {
            return Priced::Unpriced(format!(
                "model `{model}` is not in the price table {}",
                self.path.display()
            ));
        };
        if usage.is_empty() {
            return Priced::Unpriced("the answer reported no usage".into());
        }
        let read = usage.cache_read_tokens.unwrap_or(0);
        let write = usage.cache_write_tokens.unwrap_or(0);
        let input = usage.input_tokens.unwrap_or(0);
        let uncached = match api {
            Some(Api::Anthropic) => input,
            _ => input.saturating_sub(read),
        };
        let mut usd =
            uncached as f64 * p.input + usage.output_tokens.unwrap_or(0) as f64 * p.output;
        for (tokens, price, name) in [
            (read, p.cache_read, "cache_read"),
            (write, p.cache_write, "cache_write"),
        ] {
            if tokens == 0 {
                continue;
            }
            match price {
                Some(price) => usd += tokens as f64 * price,
                None => {
                    return Priced::Unpriced(format!(
                        "model `{model}` has {tokens} {name} tokens and no {name} price in {}",
                        self.path.display()
                    ));
                }
            }
        }
        // To 1e-10 USD, as the budgets round a sum of reported decimals.
        Priced::Usd((usd / 1e6 * 1e10).round() / 1e10)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(text: &str) -> Result<PriceTable, PriceError> {
        PriceTable::parse(text, Path::new("prices.yaml"))
    }

    #[test]
    fn a_call_costs_its_usage_times_its_models_prices() {
        let t = table(
            "claude-x: {input: 3, output: 15, cache_read: 0.3, cache_write: 3.75}\ngpt-x: {input: 1.25, output: 10, cache_read: 0.125}\n",
        )
        .unwrap();
        let u = |i, o, r, w| ApiUsage {
            input_tokens: Some(i),
            output_tokens: Some(o),
            cache_read_tokens: r,
            cache_write_tokens: w,
        };
        // Anthropic: input excludes the cache.
        assert_eq!(
            t.price(
                Some(Api::Anthropic),
                Some("claude-x"),
                &u(1000, 100, Some(2000), Some(400))
            ),
            Priced::Usd((1000.0 * 3.0 + 100.0 * 15.0 + 2000.0 * 0.3 + 400.0 * 3.75) / 1e6)
        );
        // OpenAI: input includes the cached tokens, priced at cache_read.
        assert_eq!(
            t.price(
                Some(Api::Responses),
                Some("gpt-x"),
                &u(1000, 10, Some(800), None)
            ),
            Priced::Usd((200.0 * 1.25 + 10.0 * 10.0 + 800.0 * 0.125) / 1e6)
        );
        // Absent is not zero: a model not in the table, a missing cache price.
        let missing = t.price(Some(Api::Chat), Some("other"), &u(1, 1, None, None));
        assert!(
            matches!(&missing, Priced::Unpriced(why) if why.contains("`other`") && why.contains("prices.yaml")),
            "{missing:?}"
        );
        let no_write = t.price(Some(Api::Responses), Some("gpt-x"), &u(1, 1, None, Some(5)));
        assert!(
            matches!(&no_write, Priced::Unpriced(why) if why.contains("cache_write")),
            "{no_write:?}"
        );
    }

    #[test]
    fn a_bad_table_names_the_file_line_column_and_field() {
        let err = table("m1: {input: 1, output: 2}\nm2: {input: 1, ouput: 2}\n")
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("prices.yaml:2:"), "{err}");
        assert!(err.contains("ouput"), "{err}");
        let err = table("m1:\n  input: 1\n  output: -2\n")
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("prices.yaml:3:3:"), "{err}");
        assert!(
            err.contains("m1.output") && err.contains("non-negative"),
            "{err}"
        );
        let err = table("m1: {output: 2}\n").unwrap_err().to_string();
        assert!(err.contains("input"), "{err}");
        // JSON is YAML.
        assert!(table(r#"{"m": {"input": 1, "output": 2}}"#).is_ok());
        assert!(matches!(table(""), Err(PriceError::Empty { .. })));
    }
}
