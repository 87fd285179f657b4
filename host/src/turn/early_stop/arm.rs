//! A task's early stop as the run and its recording hold it ([`LivePlan`]: the armed
//! criteria, their graders and parameters, the bar), and its live watchers armed from it,
//! fresh for each run or replay ([`arm`]). The plan is made and checked at load
//! (`grading::live::plan`); the recording header keeps it, so a replay re-arms the same
//! watchers and reaches the same decision at the same event.

use super::{Arming, Decidability, EarlyStop, LiveWatcher};
use crate::runtime::grader_v2::{LiveInstance, exports_live};
use serde::{Deserialize, Serialize};

/// One armed criterion, as the run and its recording hold it (a replay re-arms from it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ArmedSpec {
    /// The criterion's index in `success_criteria`.
    pub index: usize,
    /// `type: description`.
    pub label: String,
    pub weight: f64,
    pub on_pass_stop: bool,
    pub decide_within: Option<u32>,
    /// The grader: `builtin:<name>`, or the absolute path of the `.wasm` file.
    pub component: String,
    /// The parameters the watcher is armed with (the built-ins' include `type`).
    pub params_json: String,
}

/// The early stop of a task: the armed criteria and the bar.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LivePlan {
    pub armed: Vec<ArmedSpec>,
    /// `run_limits.stop_early_gate_threshold`.
    pub gate_threshold: f64,
    /// `run_limits.max_turns`, for `turns_remaining`.
    pub max_turns: Option<u32>,
    /// The prompt the watchers are armed with.
    pub prompt: String,
    /// Triggers that can never fire on their instance (inert), for people:
    /// `success_criteria[1] (command_executed: …): on_pass: stop` (0-based, as field errors number it).
    #[serde(default)]
    pub inert: Vec<String>,
}

/// A live watcher the early-stop watcher can drive across the turn's task.
pub(crate) type BoxedWatcher = Box<dyn LiveWatcher + Send>;

/// Arms one watcher of `spec`, given `prompt`. Errors: the sentence (the component
/// could not be loaded, has no live interface, or its `arm` failed).
pub(crate) fn arm_one(spec: &ArmedSpec, prompt: &str) -> Result<LiveInstance, String> {
    let loaded = crate::components::criteria::load_named(&spec.component)?;
    if !exports_live(&loaded) {
        return Err(format!(
            "`{}` has no live interface (coder-eval:grader/live@0.2.0): it cannot be judged \
             live",
            spec.component
        ));
    }
    crate::runtime::off_runtime(|| LiveInstance::arm(&loaded, &spec.params_json, prompt))
        .map_err(|e| e.to_string())?
}

/// How `spec` is armed, with the decidability its instance reported.
pub(crate) fn to_arming(spec: &ArmedSpec, decidability: Decidability) -> Arming {
    Arming {
        index: spec.index,
        label: spec.label.clone(),
        weight: spec.weight,
        on_pass_stop: spec.on_pass_stop,
        decide_within: spec.decide_within,
        decidability,
    }
}

/// Fresh watchers for one run (or one replay) of `plan`.
pub fn arm(plan: &LivePlan) -> Result<EarlyStop<BoxedWatcher>, String> {
    let mut arming = Vec::new();
    let mut watchers: Vec<BoxedWatcher> = Vec::new();
    for spec in &plan.armed {
        let watcher = arm_one(spec, &plan.prompt)
            .map_err(|e| format!("success_criteria[{}] ({}): {e}", spec.index, spec.label))?;
        arming.push(to_arming(spec, watcher.decidability()));
        watchers.push(Box::new(watcher));
    }
    Ok(EarlyStop::new(
        arming,
        watchers,
        plan.gate_threshold,
        plan.max_turns,
    ))
}
