//! Durations in task files: a number of seconds, or a string with a unit ("1500ms",
//! "90s", "5m", "1h"), positive and at most [`MAX_DURATION_SECS`]; errors name the field.

use serde::{Deserialize, Deserializer};
use std::time::Duration;

/// `turn_timeout`: a [`duration`] whose errors name the field.
pub(crate) fn turn_timeout<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
    named_duration(d, "turn_timeout")
}

/// `task_timeout`: a [`duration`] whose errors name the field.
pub(crate) fn task_timeout<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
    named_duration(d, "task_timeout")
}

fn named_duration<'de, D: Deserializer<'de>>(
    d: D,
    field: &str,
) -> Result<Option<Duration>, D::Error> {
    duration(d).map_err(|e| serde::de::Error::custom(format!("{field}: {e}")))
}

/// A duration: a number of seconds, or "1500ms", "90s", "5m", "1h"; positive, at most
/// [`MAX_DURATION_SECS`].
pub(crate) fn duration<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Raw {
        Seconds(f64),
        Text(String),
    }
    let Some(raw) = Option::<Raw>::deserialize(d)? else {
        return Ok(None);
    };
    let secs = match raw {
        Raw::Seconds(s) => s,
        Raw::Text(text) => parse_duration(&text).map_err(serde::de::Error::custom)?,
    };
    if !(secs.is_finite() && secs > 0.0) {
        return Err(serde::de::Error::custom(format!(
            "a duration must be positive, got {secs}"
        )));
    }
    if secs > MAX_DURATION_SECS {
        return Err(serde::de::Error::custom(format!(
            "a duration must be at most 30 days ({MAX_DURATION_SECS} s), got {secs} s"
        )));
    }
    Ok(Some(Duration::from_secs_f64(secs)))
}

/// The longest duration a task file may give (30 days, in seconds): beyond it a timeout
/// is a typo, and far beyond it a deadline would not fit in an `Instant`.
pub(crate) const MAX_DURATION_SECS: f64 = 30.0 * 24.0 * 3600.0;

pub(super) fn parse_duration(text: &str) -> Result<f64, String> {
    let text = text.trim();
    let (number, scale) = if let Some(n) = text.strip_suffix("ms") {
        (n, 0.001)
    } else if let Some(n) = text.strip_suffix('s') {
        (n, 1.0)
    } else if let Some(n) = text.strip_suffix('m') {
        (n, 60.0)
    } else if let Some(n) = text.strip_suffix('h') {
        (n, 3600.0)
    } else {
        (text, 1.0)
    };
    number
        .trim()
        .parse::<f64>()
        .map(|n| n * scale)
        .map_err(|_| {
            format!("`{text}` is not a duration (seconds, or e.g. \"90s\", \"5m\", \"1500ms\")")
        })
}
