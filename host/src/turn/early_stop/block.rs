//! How a task file arms a criterion: the `stop_early:` block, or the older `stop_when:`.

use serde::{Deserialize, Serialize};

/// A criterion's `stop_early:` block (coder_eval's `StopEarlyPolicy`): its presence arms
/// the criterion.
///
/// ```yaml
/// - type: command_executed
///   command_pattern: "python app\\.py"
///   stop_early: {on_pass: stop, decide_within: 3}
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct StopEarlyBlock {
    /// What a live pass does: `continue` (default: the verdict latches, the run goes on)
    /// or `stop` (a pass-stop, under the floor rule).
    #[serde(default)]
    pub on_pass: OnPass,
    /// Tool calls (finished) within which the criterion must decide, else it latches an
    /// effective fail (`decision_budget_exceeded`). At least 1.
    #[serde(default, deserialize_with = "at_least_one")]
    pub decide_within: Option<u32>,
}

/// `stop_early.on_pass`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum OnPass {
    #[default]
    Continue,
    Stop,
}

/// The older arming (coder_eval before the `stop_early:` block): `stop_when: pass|fail` on
/// the criterion, armed by `run_limits.stop_early: true`. `pass` means
/// `stop_early: {on_pass: stop}`, `fail` means `stop_early: {}`; a polarity the instance
/// cannot decide is refused at load (as coder_eval did then).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum StopWhen {
    Pass,
    Fail,
}

impl StopWhen {
    /// The block it means.
    pub(crate) fn block(self, decide_within: Option<u32>) -> StopEarlyBlock {
        StopEarlyBlock {
            on_pass: match self {
                StopWhen::Pass => OnPass::Stop,
                StopWhen::Fail => OnPass::Continue,
            },
            decide_within,
        }
    }
}

fn at_least_one<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<u32>, D::Error> {
    let n = Option::<i64>::deserialize(d)?;
    match n {
        Some(n) if n < 1 => Err(serde::de::Error::custom(format!(
            "decide_within must be at least 1 tool call, got {n}"
        ))),
        Some(n) => u32::try_from(n)
            .map(Some)
            .map_err(|_| serde::de::Error::custom(format!("decide_within {n} is too large"))),
        None => Ok(None),
    }
}
