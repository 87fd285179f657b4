//! The timing maths of a turn, apart from the collector that feeds them: the four buckets
//! that tile the turn's wall clock, and the union of tool intervals they rest on.
//!
//! DESIGN's buckets: **head** (turn start → first model output), **generation** (model
//! windows minus tool time), **tool** (the UNION of tool intervals, never the sum) and
//! **tail** (last activity → turn end). They add up to the turn's duration exactly: every
//! bucket is computed from stamps floored to whole ms ([`ms`]) before any subtraction.
//! In the turn record they are `harness_startup_ms`, `generation_duration_ms`,
//! `tool_union_ms` and `harness_teardown_ms`.

use crate::results::Timing;

/// µs to whole ms (floor). Every bucket is computed from floored stamps, so the buckets
/// add up exactly.
pub(crate) fn ms(us: u64) -> u64 {
    us / 1000
}

/// The four buckets of a turn that ended at `end_us`. `first_output_us`: the first model
/// output; `last_activity_us`: the last model output or tool end; `intervals`: the tool
/// calls' (start, end) in µs. Without any model output, the whole turn is head.
pub(crate) fn timing(
    end_us: u64,
    first_output_us: Option<u64>,
    last_activity_us: Option<u64>,
    intervals: &[(u64, u64)],
) -> Timing {
    let total = ms(end_us);
    let tool_sum_ms = intervals.iter().map(|&(s, e)| ms(e) - ms(s)).sum();
    let Some(first) = first_output_us else {
        return Timing {
            turn_duration_ms: total,
            harness_startup_ms: Some(total),
            generation_duration_ms: Some(0),
            tool_union_ms: Some(0),
            harness_teardown_ms: Some(0),
            tool_sum_ms,
        };
    };
    let head_end = ms(first).min(total);
    let middle_end = ms(last_activity_us.unwrap_or(first)).clamp(head_end, total);
    let tool_union = union_ms(intervals, head_end, middle_end);
    Timing {
        turn_duration_ms: total,
        harness_startup_ms: Some(head_end),
        generation_duration_ms: Some(middle_end - head_end - tool_union),
        tool_union_ms: Some(tool_union),
        harness_teardown_ms: Some(total - middle_end),
        tool_sum_ms,
    }
}

/// Length in ms of the union of `intervals` (µs) clipped to `[from_ms, to_ms]`.
pub(crate) fn union_ms(intervals: &[(u64, u64)], from_ms: u64, to_ms: u64) -> u64 {
    let mut clipped: Vec<(u64, u64)> = intervals
        .iter()
        .map(|&(s, e)| (ms(s).max(from_ms), ms(e).min(to_ms)))
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

#[cfg(test)]
mod tests {
    use super::*;

    fn buckets(t: &Timing) -> [u64; 4] {
        [
            t.harness_startup_ms.unwrap(),
            t.generation_duration_ms.unwrap(),
            t.tool_union_ms.unwrap(),
            t.harness_teardown_ms.unwrap(),
        ]
    }

    /// ms intervals as µs.
    fn us(intervals: &[(u64, u64)]) -> Vec<(u64, u64)> {
        intervals
            .iter()
            .map(|&(s, e)| (s * 1000, e * 1000))
            .collect()
    }

    #[test]
    fn overlapping_tools_count_once() {
        let tools = us(&[(110, 300), (120, 400), (150, 160)]);
        assert_eq!(union_ms(&tools, 0, 1000), 290);
        assert_eq!(union_ms(&tools, 200, 350), 150);
        assert_eq!(union_ms(&tools, 400, 500), 0);
        assert_eq!(union_ms(&tools, 300, 100), 0);
    }

    #[test]
    fn buckets_are_pinned_against_known_stamps() {
        // Model output at 100 ms and 450 ms; tools 110–300 and 120–400 ms; end 500 ms.
        let t = timing(
            500_000,
            Some(100_000),
            Some(450_000),
            &us(&[(110, 300), (120, 400)]),
        );
        assert_eq!(buckets(&t), [100, 60, 290, 50]);
        assert_eq!(t.turn_duration_ms, 500);
        assert_eq!(t.tool_sum_ms, 470);
        // Sub-ms stamps floor before any subtraction, so the buckets still tile.
        let t = timing(3_999, Some(999), Some(2_500), &[(1_500, 2_100)]);
        assert_eq!(buckets(&t), [0, 1, 1, 1]);
        assert_eq!(buckets(&t).iter().sum::<u64>(), t.turn_duration_ms);
        // No model output: the whole turn is head.
        let t = timing(5_000, None, None, &[]);
        assert_eq!(buckets(&t), [5, 0, 0, 0]);
        // A tool running past the end is clipped to the turn.
        let t = timing(50_000, Some(5_000), Some(90_000), &us(&[(10, 90)]));
        assert_eq!(buckets(&t), [5, 5, 40, 0]);
    }
}
