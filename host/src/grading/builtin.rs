//! The built-in criteria: which embedded component grades which `type` (the components
//! themselves, and loading them, are [`crate::components::criteria`]'s), and the names of
//! the host-native types.

use crate::components::criteria::{BUILTIN_CRITERIA, BuiltinCriteria};

/// The host-native criterion types: they run processes or call models, which a WASI
/// component cannot.
pub(crate) const HOST_TYPES: &[&str] = &[
    "run_command",
    "program_stdout_equals",
    "pytest",
    "pylint_score",
    "import_check",
    "reference_comparison",
    "llm_judge",
    "agent_judge",
];

/// The component that grades `kind`, if a built-in one does.
pub(crate) fn for_type(kind: &str) -> Option<&'static BuiltinCriteria> {
    BUILTIN_CRITERIA.iter().find(|c| c.types.contains(&kind))
}

/// Every built-in WASM criterion type.
pub(crate) fn all_types() -> Vec<&'static str> {
    BUILTIN_CRITERIA
        .iter()
        .flat_map(|c| c.types.iter().copied())
        .collect()
}
