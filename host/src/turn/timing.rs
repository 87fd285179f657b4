//! The timing maths of a turn, apart from the collector that feeds them: the four buckets
//! that tile the turn's wall clock, and the union of tool intervals they rest on.
//!
//! DESIGN's buckets: **head** (turn start → first model output), **generation** (model
//! windows minus tool time), **tool** (the UNION of tool intervals, never the sum) and
//! **tail** (last activity → turn end). They add up to the turn's duration exactly: every
//! bucket is computed from stamps floored to whole ms ([`ms`]) before any subtraction.
//! In the turn record they are `harness_startup_ms`, `generation_duration_ms`,
//! `tool_union_ms` and `harness_teardown_ms`.
//!
//! The union is kept incrementally ([`ToolUnion`]): tool calls end almost in order, so
//! each new interval merges into the last span in O(1); one that ends out of order is
//! merged where it belongs. Queries (the tool time inside each model call's window) then
//! cost O(log n) each through prefix sums ([`ToolUnion::index`]), so a turn of n events
//! is collected in O(n log n) at worst, not O(n²).

use crate::results::Timing;

/// µs to whole ms (floor). Every bucket is computed from floored stamps, so the buckets
/// add up exactly.
pub(crate) fn ms(us: u64) -> u64 {
    us / 1000
}

/// The union of tool intervals, in whole ms, kept as sorted disjoint spans as intervals
/// arrive.
#[derive(Debug, Clone, Default)]
pub(crate) struct ToolUnion {
    /// Sorted, disjoint, non-empty `[start, end)` spans, ms.
    spans: Vec<(u64, u64)>,
}

impl ToolUnion {
    /// Adds the interval `[start_ms, end_ms)`; an empty one adds nothing.
    pub(crate) fn insert(&mut self, start_ms: u64, end_ms: u64) {
        if start_ms >= end_ms {
            return;
        }
        match self.spans.last_mut() {
            None => return self.spans.push((start_ms, end_ms)),
            // After the last span (the usual case: calls end in order).
            Some(last) if start_ms > last.1 => return self.spans.push((start_ms, end_ms)),
            // Overlapping or touching the last span.
            Some(last) if start_ms >= last.0 => {
                last.1 = last.1.max(end_ms);
                return;
            }
            Some(_) => {}
        }
        // Out of order: merge with every span it overlaps or touches.
        let first = self.spans.partition_point(|&(_, e)| e < start_ms);
        let last = self.spans.partition_point(|&(s, _)| s <= end_ms);
        if first == last {
            self.spans.insert(first, (start_ms, end_ms));
        } else {
            let merged = (
                start_ms.min(self.spans[first].0),
                end_ms.max(self.spans[last - 1].1),
            );
            self.spans.splice(first..last, [merged]);
        }
    }

    /// The union, indexed for [`UnionIndex::covered`] queries.
    pub(crate) fn index(self) -> UnionIndex {
        let mut prefix = Vec::with_capacity(self.spans.len() + 1);
        let mut total = 0;
        prefix.push(0);
        for &(s, e) in &self.spans {
            total += e - s;
            prefix.push(total);
        }
        UnionIndex {
            spans: self.spans,
            prefix,
        }
    }
}

/// A finished [`ToolUnion`] with prefix sums of its span lengths.
#[derive(Debug, Clone)]
pub(crate) struct UnionIndex {
    spans: Vec<(u64, u64)>,
    /// `prefix[i]` = total length of `spans[..i]`.
    prefix: Vec<u64>,
}

impl UnionIndex {
    /// ms of the union before `x`.
    fn before(&self, x: u64) -> u64 {
        let i = self.spans.partition_point(|&(_, e)| e <= x);
        let partial = self.spans.get(i).map_or(0, |&(s, _)| x.saturating_sub(s));
        self.prefix[i] + partial
    }

    /// Length in ms of the union inside `[from_ms, to_ms]`.
    pub(crate) fn covered(&self, from_ms: u64, to_ms: u64) -> u64 {
        if to_ms <= from_ms {
            return 0;
        }
        self.before(to_ms) - self.before(from_ms)
    }
}

/// The four buckets of a turn that ended at `end_us`. `first_output_us`: the first model
/// output; `last_activity_us`: the last model output or tool end; `tools`: the union of
/// the tool intervals; `tool_sum_ms`: their plain sum. Without any model output, the
/// whole turn is head.
pub(crate) fn timing(
    end_us: u64,
    first_output_us: Option<u64>,
    last_activity_us: Option<u64>,
    tools: &UnionIndex,
    tool_sum_ms: u64,
) -> Timing {
    let total = ms(end_us);
    let Some(first) = first_output_us else {
        return Timing {
            turn_duration_ms: total,
            harness_startup_ms: Some(total),
            generation_duration_ms: Some(0),
            tool_union_ms: Some(0),
            harness_teardown_ms: Some(0),
            tool_sum_ms,
            retry_wait_ms: None,
        };
    };
    let head_end = ms(first).min(total);
    let middle_end = ms(last_activity_us.unwrap_or(first)).clamp(head_end, total);
    let tool_union = tools.covered(head_end, middle_end);
    Timing {
        turn_duration_ms: total,
        harness_startup_ms: Some(head_end),
        generation_duration_ms: Some(middle_end - head_end - tool_union),
        tool_union_ms: Some(tool_union),
        harness_teardown_ms: Some(total - middle_end),
        tool_sum_ms,
        retry_wait_ms: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The definition: the union of `intervals` (ms) clipped to `[from, to]`, recomputed
    /// from scratch (what the collector did on every model call before the union was
    /// kept incrementally).
    fn union_by_definition(intervals: &[(u64, u64)], from: u64, to: u64) -> u64 {
        let mut clipped: Vec<(u64, u64)> = intervals
            .iter()
            .map(|&(s, e)| (s.max(from), e.min(to)))
            .filter(|(s, e)| s < e)
            .collect();
        clipped.sort_unstable();
        let mut total = 0;
        let mut current: Option<(u64, u64)> = None;
        for (s, e) in clipped {
            match current {
                Some((cs, ce)) if s <= ce => current = Some((cs, ce.max(e))),
                Some((cs, ce)) => {
                    total += ce - cs;
                    current = Some((s, e));
                }
                None => current = Some((s, e)),
            }
        }
        total + current.map_or(0, |(s, e)| e - s)
    }

    fn union_of(intervals: &[(u64, u64)]) -> UnionIndex {
        let mut union = ToolUnion::default();
        for &(s, e) in intervals {
            union.insert(s, e);
        }
        union.index()
    }

    fn buckets(t: &Timing) -> [u64; 4] {
        [
            t.harness_startup_ms.unwrap(),
            t.generation_duration_ms.unwrap(),
            t.tool_union_ms.unwrap(),
            t.harness_teardown_ms.unwrap(),
        ]
    }

    #[test]
    fn overlapping_tools_count_once() {
        // Two calls overlapping from 120 to 300 ms, and one inside the first.
        let tools = union_of(&[(110, 300), (120, 400), (150, 160)]);
        assert_eq!(tools.covered(0, 1000), 290);
        assert_eq!(tools.covered(200, 350), 150);
        assert_eq!(tools.covered(400, 500), 0);
        assert_eq!(tools.covered(300, 100), 0);
    }

    #[test]
    fn buckets_are_pinned_against_known_stamps() {
        // Model output at 100 ms and 450 ms; tools 110–300 and 120–400 ms; end 500 ms.
        let tools = union_of(&[(110, 300), (120, 400)]);
        let t = timing(500_000, Some(100_000), Some(450_000), &tools, 470);
        assert_eq!(buckets(&t), [100, 60, 290, 50]);
        assert_eq!(t.turn_duration_ms, 500);
        assert_eq!(t.tool_sum_ms, 470);
        // Sub-ms stamps floor before any subtraction, so the buckets still tile.
        let tools = union_of(&[(1, 2)]);
        let t = timing(3_999, Some(999), Some(2_500), &tools, 1);
        assert_eq!(buckets(&t), [0, 1, 1, 1]);
        assert_eq!(buckets(&t).iter().sum::<u64>(), t.turn_duration_ms);
        // No model output: the whole turn is head.
        let t = timing(5_000, None, None, &union_of(&[]), 0);
        assert_eq!(buckets(&t), [5, 0, 0, 0]);
        // A tool running past the end is clipped to the turn.
        let tools = union_of(&[(10, 90)]);
        let t = timing(50_000, Some(5_000), Some(90_000), &tools, 80);
        assert_eq!(buckets(&t), [5, 5, 40, 0]);
    }

    #[test]
    fn the_incremental_union_is_the_union_by_definition() {
        // Intervals that end almost in order, some out of order, some empty, some
        // touching; every query window checked against the definition.
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        for round in 0..200 {
            let mut intervals = Vec::new();
            let mut at = 0;
            for _ in 0..(round % 40) {
                at += next(30);
                let start = if next(5) == 0 {
                    at.saturating_sub(next(200))
                } else {
                    at
                };
                let end = start + next(60);
                intervals.push((start, end));
            }
            let tools = union_of(&intervals);
            for _ in 0..50 {
                let from = next(at + 100);
                let to = next(at + 100);
                assert_eq!(
                    tools.covered(from, to),
                    union_by_definition(&intervals, from, to),
                    "{intervals:?} [{from}, {to}]"
                );
            }
        }
    }
}
