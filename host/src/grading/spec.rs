//! [`CriterionSpec`]: one entry of a task's `success_criteria`, parsed once, as it is
//! read, into a typed [`Criterion`].
//!
//! Deserializing a spec (in `spec/de.rs`) validates and resolves it, so a task file with a bad
//! criterion is rejected at load time with its line, and grading never looks at a type
//! name again: a regex or a workspace path that is wrong is reported at its own line and
//! column (the check runs while that scalar is read), anything else (an unknown type, a
//! missing or ill-typed key) at the line where the criterion starts.

use super::builtin;
use super::run_command;
use super::{judge, plugins, python, reference, suite};
use crate::components::criteria::BuiltinCriteria;
use crate::turn::early_stop::{StopEarlyBlock, StopWhen};
use serde::Serialize;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// coder_eval criterion types that need a vendor's service or CLI, which cannot run here:
/// refused at load, with where they belong (a vendor plugin: see [`super::plugins`]).
pub(crate) const VENDOR_TYPES: &[(&str, &str)] = &[
    (
        "uipath_eval",
        "it runs UiPath's agent evaluation service (the `uipath` CLI and a UiPath tenant)",
    ),
    (
        "system_one_judge",
        "it calls UiPath's System One judging service",
    ),
];

/// One entry of a task's `success_criteria`.
///
/// Common keys: `type`, `weight` (default 1.0; 0 = informational: shown, not counted),
/// `pass_threshold` (0–1, default 0.9; 0.7 for the judges; `similarity_threshold` for
/// `reference_comparison`, `min_score / 10` for `pylint_score`), `description`,
/// `suite_thresholds` (judged across a dataset's rows, [`suite`]). Every other key is the
/// criterion's parameters (flattened into its params). `type: component`
/// takes `component: PATH` (a `.wasm` grader, relative to the task file's folder) and
/// `params: {...}` (handed to the grader as they are).
///
/// ```yaml
/// - type: file_contains
///   path: app.py
///   includes: ["print"]
///   weight: 2
/// - type: component
///   component: graders/readme.wasm
///   params: {readme: README.md}
/// ```
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CriterionSpec {
    /// The criterion type: a built-in (`file_exists`, `json_check`, `command_executed`,
    /// `run_command`, ...) or `component`.
    #[serde(rename = "type")]
    pub kind: String,
    /// What the criterion checks, for people.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Weight in the weighted score, ≥ 0; 0 = informational.
    pub weight: f64,
    /// The score (0–1) at which the criterion passes.
    pub pass_threshold: f64,
    /// Minimums over a dataset's rows, judged at suite level ([`suite`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub suite_thresholds: Option<BTreeMap<String, f64>>,
    /// `stop_early: {on_pass, decide_within}`: arms a live criterion for early stop (see
    /// `turn::early_stop`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) stop_early: Option<StopEarlyBlock>,
    /// The older arming, `stop_when: pass|fail` (with `run_limits.stop_early: true`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) stop_when: Option<StopWhen>,
    /// The other keys: the criterion's parameters, as written.
    #[serde(flatten)]
    pub(crate) params: Map<String, Value>,
    /// What the spec resolved to at load: what grading runs.
    #[serde(skip)]
    pub(crate) criterion: Criterion,
}

/// A criterion as grading runs it, resolved once from its spec.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Criterion {
    /// A built-in WASM criterion.
    Builtin {
        /// The component that grades it.
        family: &'static BuiltinCriteria,
        /// What its guest receives: the parameters plus `type`.
        params: Value,
        /// It also judges the agent's final answer (`classification_match`), which the
        /// host adds to `params` as `final_text`.
        wants_final_text: bool,
    },
    /// A user component (`type: component`).
    Component {
        /// The `.wasm` file, relative to the task file's folder.
        path: String,
        /// Handed to the grader as they are.
        params: Value,
    },
    /// The host-native `run_command` (and coder_eval's older `program_stdout_equals`).
    RunCommand(run_command::Params),
    /// Another host-native criterion, with its params parsed and checked at load.
    Host(HostCriterion),
    /// A plugin type registered by name (`--criteria DIR`, [`plugins`]).
    Plugin {
        /// The component file.
        path: PathBuf,
        /// Handed to the component as they are.
        params: Value,
    },
}

/// The host-native criteria besides `run_command`, each with its typed params.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum HostCriterion {
    /// `pytest` ([`python`]).
    Pytest(python::Pytest),
    /// `pylint_score` ([`python`]).
    PylintScore(python::Pylint),
    /// `import_check` ([`python`]).
    ImportCheck(python::ImportCheck),
    /// `reference_comparison` ([`reference`]).
    ReferenceComparison(reference::Params),
    /// `llm_judge` ([`judge`]).
    LlmJudge(judge::LlmJudge),
    /// `agent_judge` ([`judge::agent`]); boxed, being the largest by far.
    AgentJudge(Box<judge::agent::AgentJudge>),
}

/// The default `pass_threshold`.
pub(crate) const DEFAULT_PASS_THRESHOLD: f64 = 0.9;

impl CriterionSpec {
    /// A spec of `kind` with these parameters and the default weight and threshold.
    /// Errors: as when a task file holds it (see [`CriterionSpec`]'s checks).
    pub fn new(kind: &str, params: Value) -> Result<CriterionSpec, String> {
        let params = match params {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        let threshold = default_threshold(kind, None);
        CriterionSpec::resolved(kind.to_string(), None, 1.0, threshold, None, params)
    }

    /// Checks and resolves a criterion's parts.
    fn resolved(
        kind: String,
        description: Option<String>,
        weight: f64,
        pass_threshold: f64,
        suite_thresholds: Option<BTreeMap<String, f64>>,
        params: Map<String, Value>,
    ) -> Result<CriterionSpec, String> {
        let mut spec = CriterionSpec {
            kind,
            description,
            weight,
            pass_threshold,
            suite_thresholds,
            stop_early: None,
            stop_when: None,
            params,
            criterion: Criterion::Component {
                path: String::new(),
                params: Value::Null,
            },
        };
        spec.criterion = spec.resolve()?;
        Ok(spec)
    }

    /// Checks the spec and resolves it: a known type, weight and threshold in range, and
    /// parameters the criterion accepts (known keys of the right types, compiling regexes,
    /// workspace paths that stay inside). The message names the type and the parameter.
    fn resolve(&self) -> Result<Criterion, String> {
        let at = |e: String| format!("criterion `{}`: {e}", self.kind);
        if !self.weight.is_finite() || self.weight < 0.0 {
            return Err(at(format!("weight must be ≥ 0, got {}", self.weight)));
        }
        if !(0.0..=1.0).contains(&self.pass_threshold) {
            return Err(at(format!(
                "pass_threshold must be between 0 and 1, got {}",
                self.pass_threshold
            )));
        }
        if let Some(t) = &self.suite_thresholds {
            suite::validate(&self.kind, self.weight, t).map_err(at)?;
        }
        let host = |check: Result<HostCriterion, String>| check.map(Criterion::Host).map_err(at);
        match self.kind.as_str() {
            "program_stdout_equals" => run_command::from_program_stdout_equals(&self.params)
                .and_then(|p| run_command::parse(&p))
                .map(Criterion::RunCommand)
                .map_err(at),
            "pytest" => host(python::Pytest::parse(&self.params).map(HostCriterion::Pytest)),
            "pylint_score" => {
                host(python::Pylint::parse(&self.params).map(HostCriterion::PylintScore))
            }
            "import_check" => {
                host(python::ImportCheck::parse(&self.params).map(HostCriterion::ImportCheck))
            }
            "reference_comparison" => {
                host(reference::Params::parse(&self.params).map(HostCriterion::ReferenceComparison))
            }
            "llm_judge" => host(judge::LlmJudge::parse(&self.params).map(HostCriterion::LlmJudge)),
            "agent_judge" => host(
                judge::agent::AgentJudge::parse(&self.params)
                    .map(|j| HostCriterion::AgentJudge(Box::new(j))),
            ),
            kind if plugins::lookup(kind).is_some() => {
                let plugin = plugins::lookup(kind).expect("just looked up");
                plugins::validate(kind, &self.params).map_err(at)?;
                Ok(Criterion::Plugin {
                    path: plugin.component,
                    params: plugins::guest_params(&self.params),
                })
            }
            kind if VENDOR_TYPES.iter().any(|(t, _)| *t == kind) => {
                let why = VENDOR_TYPES
                    .iter()
                    .find(|(t, _)| *t == kind)
                    .map_or("", |(_, w)| w);
                Err(format!(
                    "criterion type `{kind}` belongs to a vendor plugin: {why}, which is not \
                     available here. Provide it as a plugin criterion (a .wasm registered \
                     under the name `{kind}` with --criteria DIR, see README \"Criterion \
                     plugins\"), or remove the criterion"
                ))
            }
            "component" => {
                self.validate_component().map_err(at)?;
                Ok(Criterion::Component {
                    path: self
                        .params
                        .get("component")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string(),
                    params: match self.params.get("params") {
                        Some(Value::Object(p)) => Value::Object(p.clone()),
                        _ => Value::Object(Default::default()),
                    },
                })
            }
            "run_command" => run_command::parse(&self.params)
                .map(Criterion::RunCommand)
                .map_err(at),
            kind => match builtin::for_type(kind) {
                Some(family) => {
                    let params = self.guest_params();
                    (family.validate)(&params).map_err(at)?;
                    Ok(Criterion::Builtin {
                        family,
                        params,
                        wants_final_text: kind == "classification_match",
                    })
                }
                None => {
                    let mut known = builtin::all_types();
                    known.extend(builtin::HOST_TYPES.iter().copied());
                    known.push("component");
                    let plugged = plugins::names();
                    known.extend(plugged.iter().map(String::as_str));
                    let hint = crate::suggest::closest(kind, known.iter().copied())
                        .map(|best| format!(" (did you mean `{best}`?)"))
                        .unwrap_or_default();
                    Err(format!(
                        "unknown criterion type `{kind}`{hint}; known: {}",
                        known.join(", ")
                    ))
                }
            },
        }
    }

    /// The files and folders the criterion names (relative to the task folder, or
    /// absolute): its component or plugin file, and every string parameter that names a
    /// relative path (one holding a `/` or a `.`), whole or word by word (a command's
    /// script); the caller keeps those that exist. For a unit's
    /// content id (`Task::named_paths`).
    pub(crate) fn named_paths(&self) -> Vec<PathBuf> {
        fn strings<'a>(value: &'a Value, out: &mut Vec<&'a str>) {
            match value {
                Value::String(s) => out.push(s),
                Value::Array(items) => items.iter().for_each(|v| strings(v, out)),
                Value::Object(map) => map.values().for_each(|v| strings(v, out)),
                _ => {}
            }
        }
        let mut paths = Vec::new();
        match &self.criterion {
            Criterion::Component { path, .. } => paths.push(PathBuf::from(path)),
            Criterion::Plugin { path, .. } => paths.push(path.clone()),
            _ => {}
        }
        let mut found = Vec::new();
        self.params.values().for_each(|v| strings(v, &mut found));
        // A string names a path as a whole, or word by word (`sh ../shared/check.sh`).
        let words = found.into_iter().flat_map(|s| {
            std::iter::once(s.trim()).chain(
                s.split_whitespace()
                    .map(|w| w.trim_matches(|c| c == '"' || c == '\'')),
            )
        });
        for s in words {
            if !s.is_empty() && !s.contains('\n') && (s.contains('/') || s.contains('.')) {
                let path = PathBuf::from(s);
                if path.is_relative() && !paths.contains(&path) {
                    paths.push(path);
                }
            }
        }
        paths
    }

    fn validate_component(&self) -> Result<(), String> {
        for key in self.params.keys() {
            if key != "component" && key != "params" {
                return Err(format!(
                    "unknown key `{key}` (a component criterion takes `component` and `params`)"
                ));
            }
        }
        match self.params.get("component") {
            Some(Value::String(path)) if !path.trim().is_empty() => {}
            Some(_) => return Err("`component` must be a path to a .wasm file".into()),
            None => return Err("missing `component` (the path of the .wasm grader)".into()),
        }
        match self.params.get("params") {
            None | Some(Value::Object(_)) | Some(Value::Null) => Ok(()),
            Some(_) => Err("`params` must be a mapping".into()),
        }
    }

    /// Whether the criterion only reads (every built-in WASM criterion, every component
    /// and plugin, `reference_comparison`); `run_command`, `pytest`, `pylint_score` and
    /// `import_check` run code in the workspace, and the judges call a model (at a cost),
    /// so they are not. After a crash or timeout, only read-only criteria run, as
    /// evidence.
    pub(crate) fn is_read_only(&self) -> bool {
        match &self.criterion {
            Criterion::RunCommand(_) => false,
            Criterion::Host(host) => matches!(host, HostCriterion::ReferenceComparison(_)),
            Criterion::Builtin { .. } | Criterion::Component { .. } | Criterion::Plugin { .. } => {
                true
            }
        }
    }

    /// Whether it runs in the grader sandbox on the trajectory (a WASM criterion).
    pub(crate) fn is_wasm(&self) -> bool {
        matches!(
            self.criterion,
            Criterion::Builtin { .. } | Criterion::Component { .. } | Criterion::Plugin { .. }
        )
    }

    /// The params a built-in guest receives: the parameters plus `type`.
    fn guest_params(&self) -> Value {
        let mut params = self.params.clone();
        params.insert("type".into(), Value::String(self.kind.clone()));
        Value::Object(params)
    }
}

/// The pass threshold of a criterion of `kind` when the task gives `given` (None: the
/// type's default: 0.7 for the judges, 0.9 otherwise).
fn default_threshold(kind: &str, given: Option<f64>) -> f64 {
    given.unwrap_or(match kind {
        "llm_judge" | "agent_judge" => judge::JUDGE_PASS_THRESHOLD,
        _ => DEFAULT_PASS_THRESHOLD,
    })
}

mod de;

#[cfg(test)]
mod tests;
