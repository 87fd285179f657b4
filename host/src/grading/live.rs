//! Which criteria of a task are armed for early stop, checked at load into the task's
//! [`LivePlan`] (see `turn::early_stop` for the semantics; the plan, and arming its
//! watchers once per run or replay, are `turn::early_stop::arm`'s).
//!
//! Arming: a criterion's `stop_early:` block, unless `run_limits.stop_early: false` (the
//! kill switch); or, the older form, `stop_when: pass|fail` with
//! `run_limits.stop_early: true` (the master arm). Both forms mean the same: `stop_when:
//! pass` is `stop_early: {on_pass: stop}`, `stop_when: fail` is `stop_early: {}`.
//!
//! Refused at load, naming the criterion: an armed criterion that cannot be judged live (a
//! type whose component has no `live` interface, a built-in type that is not live), one
//! whose instance can decide nothing live, a `stop_when` naming a verdict the instance
//! cannot reach, and `run_limits.stop_early: true` with no `stop_when` criterion (coder_eval
//! removed the master arm: arming is per criterion). A trigger of a `stop_early:` block the
//! instance cannot decide is inert (coder_eval's rule) and is listed in `inert`.

use super::spec::{Criterion, CriterionSpec};
use crate::turn::early_stop::{ArmedSpec, LivePlan, OnPass, StopWhen, arm_one, to_arming};

fn label(spec: &CriterionSpec) -> String {
    match &spec.description {
        Some(d) => format!("{}: {d}", spec.kind),
        None => spec.kind.clone(),
    }
}

/// A task's early stop, checked (see the module doc for what is refused), from its parts:
/// its `run_limits` (`stop_early`, the gate, `max_turns`), its `success_criteria`, its folder (a component criterion's
/// path is relative to it) and its prompt (given to a live criterion as it arms). `None`
/// when nothing is armed. Errors: the sentence, naming the criterion by index and type.
pub fn plan(
    limits: &crate::limits::RunLimitsSpec,
    criteria: &[CriterionSpec],
    dir: &std::path::Path,
    prompt: &str,
) -> Result<Option<LivePlan>, String> {
    let legacy = limits.stop_early == Some(true);
    if limits.stop_early == Some(false) {
        return Ok(None);
    }
    if legacy && !criteria.iter().any(|c| c.stop_when.is_some()) {
        return Err(
            "run_limits.stop_early: true arms the criteria that say `stop_when:`, and none does; \
             arming is per criterion: put a `stop_early:` block (e.g. `stop_early: {on_pass: \
             stop}`) on a live criterion (run_limits.stop_early: false is the kill switch)"
                .into(),
        );
    }
    let mut armed = Vec::new();
    let mut inert = Vec::new();
    for (index, spec) in criteria.iter().enumerate() {
        let block = match (spec.stop_early, spec.stop_when) {
            (Some(block), _) => block,
            (None, Some(when)) if legacy => when.block(None),
            (None, Some(_)) => {
                return Err(format!(
                    "success_criteria[{}] (`{}`): `stop_when:` arms only with run_limits.stop_early: \
                     true (the older form); or write `stop_early: {{...}}` on it",
                    index, spec.kind
                ));
            }
            (None, None) => continue,
        };
        let at = |e: String| format!("success_criteria[{index}] (`{}`): {e}", spec.kind);
        let (component, params) = match &spec.criterion {
            Criterion::Builtin { family, params, .. } => {
                (format!("builtin:{}", family.name), params.clone())
            }
            Criterion::Component { path, params } => {
                (dir.join(path).display().to_string(), params.clone())
            }
            Criterion::RunCommand(_) | Criterion::Host(_) => {
                return Err(at(format!(
                    "`stop_early` arms a live criterion, and {} runs after the agent: \
                     it cannot be judged live (live built-ins: command_executed, skill_triggered; \
                     or a component exporting coder-eval:grader/live@0.2.0)",
                    spec.kind
                )));
            }
            Criterion::Plugin { .. } => {
                return Err(at(format!(
                    "`stop_early` arms a live criterion; the plugin type `{}` is graded after \
                     the agent (plugins are batch criteria)",
                    spec.kind
                )));
            }
        };
        if let Criterion::Builtin { .. } = &spec.criterion
            && !criteria_trajectory::LIVE_TYPES.contains(&spec.kind.as_str())
        {
            return Err(at(format!(
                "`stop_early` arms a live criterion, and `{}` cannot be judged live (live \
                 built-ins: {}; or a component exporting coder-eval:grader/live@0.2.0)",
                spec.kind,
                criteria_trajectory::LIVE_TYPES.join(", ")
            )));
        }
        let armed_spec = ArmedSpec {
            index,
            label: label(spec),
            weight: spec.weight,
            on_pass_stop: block.on_pass == OnPass::Stop,
            decide_within: block.decide_within,
            component,
            params_json: params.to_string(),
        };
        let watcher = arm_one(&armed_spec, prompt).map_err(at)?;
        let d = watcher.decidability();
        if !d.can_pass && !d.can_fail {
            return Err(at(
                "armed with `stop_early`, but this instance can decide nothing live (e.g. \
                 command_executed with min_count 0 and no max_count always scores 1): no trigger \
                 could ever fire; drop the block"
                    .into(),
            ));
        }
        if let Some(when) = spec.stop_when {
            let (ok, what) = match when {
                StopWhen::Pass => (d.can_pass, "pass"),
                StopWhen::Fail => (d.can_fail, "fail"),
            };
            if !ok {
                return Err(at(format!(
                    "`stop_when: {what}`, but this instance can never {what} live (e.g. \
                     command_executed passes live only without max_count, fails live only \
                     with it)"
                )));
            }
        }
        let arming = to_arming(&armed_spec, d);
        for trigger in arming.inert_triggers() {
            inert.push(format!(
                "success_criteria[{}] ({}): {trigger}",
                index, armed_spec.label
            ));
        }
        armed.push(armed_spec);
    }
    if armed.is_empty() {
        return Ok(None);
    }
    Ok(Some(LivePlan {
        armed,
        gate_threshold: limits.gate_threshold(),
        max_turns: limits.max_turns,
        prompt: prompt.to_string(),
        inert,
    }))
}
