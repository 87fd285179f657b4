//! `turn.completed.usage`: the thread's cumulative totals, overlapping buckets as Codex
//! reports them, kept as a high-water mark and turned into disjoint ones.

use harness_kit::{Usage, u64_field};
use serde_json::Value;

/// Codex's usage fields as reported (overlapping).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct RawUsage {
    input: u64,
    cached: u64,
    cache_write: u64,
    output: u64,
}

impl RawUsage {
    pub(super) fn of(v: &Value) -> RawUsage {
        let nested = |outer: &str, inner: &str| v.get(outer).and_then(|d| u64_field(d, inner));
        RawUsage {
            input: u64_field(v, "input_tokens").unwrap_or(0),
            cached: u64_field(v, "cached_input_tokens")
                .or_else(|| nested("input_tokens_details", "cached_tokens"))
                .unwrap_or(0),
            cache_write: u64_field(v, "cache_write_input_tokens").unwrap_or(0),
            output: u64_field(v, "output_tokens").unwrap_or(0),
        }
    }

    /// The per-field maximum (the totals are cumulative: the latest is the largest).
    pub(super) fn high_water(self, other: RawUsage) -> RawUsage {
        RawUsage {
            input: self.input.max(other.input),
            cached: self.cached.max(other.cached),
            cache_write: self.cache_write.max(other.cache_write),
            output: self.output.max(other.output),
        }
    }

    /// Disjoint buckets: full-rate input = input − cache reads − cache writes.
    pub(super) fn disjoint(self) -> Usage {
        Usage {
            input_tokens: self
                .input
                .saturating_sub(self.cached)
                .saturating_sub(self.cache_write),
            output_tokens: self.output,
            cache_read_tokens: self.cached,
            cache_write_tokens: Some(self.cache_write),
        }
    }
}
