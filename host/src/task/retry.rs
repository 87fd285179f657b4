//! A task file's `retry:` block (coder_eval's top-level `retry:`, `models/retry.py`): how
//! hard a task's run tries to survive an infrastructure error (`crate::run::retry`), not
//! a cap. Every field is optional; absent keeps the built-in value
//! (`crate::run::retry::RetryPolicy::DEFAULT`), and the command line
//! (`--infra-retries`, `--retry-initial-delay`) beats the file:
//!
//! ```yaml
//! retry:
//!   max_retries: 0          # fail fast: no retry (0 to 20)
//!   initial_delay: 5        # seconds before the first retry (0 to 3600)
//!   backoff_multiplier: 3   # each later wait is this many times the one before (1 to 10)
//! ```
//!
//! It merges per key across an experiment's layers (`-D retry.max_retries=0`). An
//! unknown key or a value out of range is an error naming the field and its line.

use serde::{Deserialize, Deserializer};

/// The most `retry.backoff_multiplier` may be.
pub(crate) const MAX_BACKOFF_MULTIPLIER: f64 = 10.0;

/// The most retries `--infra-retries` (and a task's `retry.max_retries`) may ask for.
pub const MAX_RETRIES: u32 = 20;
/// The longest first backoff `--retry-initial-delay` (and `retry.initial_delay`) may ask
/// for, seconds.
pub const MAX_INITIAL_DELAY_SECS: f64 = 3600.0;

/// `retry:` as written (each field `None` when absent).
#[derive(Debug, Clone, Copy, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RetrySpec {
    /// Retries of an infrastructure error after the first attempt (0: none), at most
    /// [`MAX_RETRIES`].
    #[serde(default, deserialize_with = "max_retries")]
    pub max_retries: Option<u32>,
    /// Seconds before the first retry, 0 to
    /// [`MAX_INITIAL_DELAY_SECS`].
    #[serde(default, deserialize_with = "initial_delay")]
    pub initial_delay: Option<f64>,
    /// Factor between successive waits, 1 to [`MAX_BACKOFF_MULTIPLIER`].
    #[serde(default, deserialize_with = "backoff_multiplier")]
    pub backoff_multiplier: Option<f64>,
}

impl RetrySpec {
    /// `self`, with each field `over` sets replacing it.
    pub(crate) fn or_over(self, over: &RetrySpec) -> RetrySpec {
        RetrySpec {
            max_retries: over.max_retries.or(self.max_retries),
            initial_delay: over.initial_delay.or(self.initial_delay),
            backoff_multiplier: over.backoff_multiplier.or(self.backoff_multiplier),
        }
    }
}

fn max_retries<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u32>, D::Error> {
    let max = MAX_RETRIES;
    let Some(n) = Option::<i64>::deserialize(d)? else {
        return Ok(None);
    };
    if !(0..=i64::from(max)).contains(&n) {
        return Err(serde::de::Error::custom(format!(
            "retry.max_retries must be a whole number from 0 to {max}; got {n}"
        )));
    }
    Ok(Some(n as u32))
}

fn seconds_in<'de, D: Deserializer<'de>>(
    d: D,
    field: &str,
    min: f64,
    max: f64,
) -> Result<Option<f64>, D::Error> {
    let Some(n) = Option::<f64>::deserialize(d)? else {
        return Ok(None);
    };
    if !(n.is_finite() && (min..=max).contains(&n)) {
        return Err(serde::de::Error::custom(format!(
            "retry.{field} must be a number from {min} to {max}; got {n}"
        )));
    }
    Ok(Some(n))
}

fn initial_delay<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    seconds_in(d, "initial_delay", 0.0, MAX_INITIAL_DELAY_SECS)
}

fn backoff_multiplier<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    seconds_in(d, "backoff_multiplier", 1.0, MAX_BACKOFF_MULTIPLIER)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_block_is_checked_and_the_command_line_beats_it() {
        let spec: RetrySpec =
            serde_yaml_ng::from_str("max_retries: 0\ninitial_delay: 2.5\n").unwrap();
        assert_eq!(
            spec,
            RetrySpec {
                max_retries: Some(0),
                initial_delay: Some(2.5),
                backoff_multiplier: None
            }
        );
        let cli = RetrySpec {
            max_retries: Some(3),
            ..Default::default()
        };
        assert_eq!(spec.or_over(&cli).max_retries, Some(3));
        assert_eq!(spec.or_over(&cli).initial_delay, Some(2.5));
        for (bad, says) in [
            ("max_retries: -1", "retry.max_retries"),
            ("max_retries: 21", "from 0 to 20"),
            ("initial_delay: .nan", "retry.initial_delay"),
            ("backoff_multiplier: 0.5", "retry.backoff_multiplier"),
            ("max_retry: 1", "unknown field `max_retry`"),
        ] {
            let err = serde_yaml_ng::from_str::<RetrySpec>(bad).unwrap_err();
            assert!(err.to_string().contains(says), "{bad}: {err}");
        }
    }
}
