//! Grader components (`coder-eval:grader/grader@0.1.0`) and the contract check shared
//! with harness components.

use super::{ComponentError, LoadedComponent, engine};

/// Checks that `loaded` exports `interfaces` of `package@version` and imports nothing but
/// WASI and the contract's own type interfaces. A component built against another version
/// of the package is refused before it is instantiated.
pub fn check_contract(
    loaded: &LoadedComponent,
    package: &str,
    version: &str,
    interfaces: &[&str],
    world: &str,
) -> Result<(), ComponentError> {
    let ty = loaded.component.component_type();
    let exports: Vec<String> = ty.exports(engine()).map(|(n, _)| n.to_string()).collect();
    let prefix = format!("{package}/");
    for name in exports.iter().filter(|n| n.starts_with(&prefix)) {
        let found = name.rsplit_once('@').map_or("(none)", |(_, v)| v);
        if found != version {
            return Err(ComponentError::UnsupportedVersion {
                component: loaded.name.to_string(),
                package: package.to_string(),
                package_dir: package.rsplit(':').next().unwrap_or(package).to_string(),
                found: found.to_string(),
                supported: version.to_string(),
            });
        }
    }
    for interface in interfaces {
        let wanted = format!("{package}/{interface}@{version}");
        if !exports.contains(&wanted) {
            return Err(ComponentError::WrongWorld {
                component: loaded.name.to_string(),
                world: format!("{package}/{world}@{version}"),
                exports: if exports.is_empty() {
                    "none".into()
                } else {
                    exports.join(", ")
                },
            });
        }
    }
    let own_types = format!("{package}/types@");
    for (import, _) in ty.imports(engine()) {
        let granted = import.starts_with("wasi:")
            || import.starts_with("coder-eval:events/types@")
            || import.starts_with(&own_types);
        if !granted {
            return Err(ComponentError::ForbiddenImport {
                component: loaded.name.to_string(),
                import: import.to_string(),
            });
        }
    }
    Ok(())
}
