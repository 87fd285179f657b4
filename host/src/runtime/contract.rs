//! The one place where the host decides which versions of its WIT contracts it accepts.
//!
//! A component is checked before it is instantiated: it must export the contract's
//! interfaces at a version this host speaks, and import nothing but WASI and the
//! contract's own type interfaces, at the versions the contract's version uses (`events@0.1.0` with
//! `@0.1.0`, `events@0.2.0` with `@0.2.0`). A released `wit/<pkg>@<ver>/` folder is never edited
//! (`wit/README.md`); the next version goes beside it, and the host accepts both.
//!
//! The host speaks `harness@0.1.0`, `harness@0.2.0`, `grader@0.1.0` and `grader@0.2.0`
//! (`harness.rs` converts both harness versions to its one model; the grader bindings are in
//! `grader.rs` for 0.1.0 and `grader_v2.rs` for 0.2.0, converted at the boundary). To accept
//! a new version, add its arm to [`Version::accepted`] and its bindings beside the others.

use super::{ComponentError, LoadedComponent};

/// A contract: a WIT package, the interfaces a component must export, and its world.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Contract {
    /// `coder-eval:harness`.
    pub(crate) package: &'static str,
    /// The interfaces a component of the world exports.
    pub(crate) interfaces: &'static [&'static str],
    /// The world's name, for messages.
    pub(crate) world: &'static str,
}

/// The harness contract: `launch` and `reducer`.
pub(crate) const HARNESS: Contract = Contract {
    package: "coder-eval:harness",
    interfaces: &["launch", "reducer"],
    world: "harness",
};

/// The grader contract: `criterion`.
pub(crate) const GRADER: Contract = Contract {
    package: "coder-eval:grader",
    interfaces: &["criterion"],
    world: "grader",
};

/// A version of a contract that this host speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Version {
    /// `@0.1.0` of `coder-eval:harness` and `coder-eval:grader` (and `events@0.1.0`).
    V0_1_0,
    /// `@0.2.0`: `coder-eval:harness` (with `events@0.2.0`), `coder-eval:grader`
    /// (events@0.2.0; the `live-grader` world adds `live`).
    V0_2_0,
}

impl Version {
    /// Every version, the newest last.
    const ALL: [Version; 2] = [Version::V0_1_0, Version::V0_2_0];

    /// The version of `contract` spelled `found` in a component's exports, if this host
    /// speaks it. Accepting a new version is a new arm here.
    fn accepted(contract: &Contract, found: &str) -> Option<Version> {
        match (contract.package, found) {
            ("coder-eval:harness" | "coder-eval:grader", "0.1.0") => Some(Version::V0_1_0),
            ("coder-eval:grader", "0.2.0") => Some(Version::V0_2_0),
            ("coder-eval:harness", "0.2.0") => Some(Version::V0_2_0),
            _ => None,
        }
    }

    /// As WIT spells it: `0.1.0`.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Version::V0_1_0 => "0.1.0",
            Version::V0_2_0 => "0.2.0",
        }
    }

    /// The `coder-eval:events` version this version's worlds use (`use
    /// coder-eval:events/types@…` in its WIT).
    pub(crate) fn events(self) -> &'static str {
        match self {
            Version::V0_1_0 => "0.1.0",
            Version::V0_2_0 => "0.2.0",
        }
    }

    /// The versions of `contract` this host speaks, for messages: `0.1.0`, or
    /// `0.1.0, 0.2.0`.
    fn supported(contract: &Contract) -> String {
        Version::ALL
            .iter()
            .filter(|v| Version::accepted(contract, v.as_str()).is_some())
            .map(|v| v.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Checks that `loaded` exports the interfaces of `contract` at a version this host
/// speaks (the same one for all of them), and imports nothing but WASI and the contract's
/// own type interfaces. A component built against another version is refused before it
/// is instantiated, naming the WIT folder to rebuild against. Returns the version.
pub(crate) fn check(
    loaded: &LoadedComponent,
    contract: &Contract,
) -> Result<Version, ComponentError> {
    let ty = loaded.component.component_type();
    let exports: Vec<String> = ty
        .exports(loaded.component.engine())
        .map(|(n, _)| n.to_string())
        .collect();
    let package = contract.package;
    let prefix = format!("{package}/");
    let mut version = None;
    for name in exports.iter().filter(|n| n.starts_with(&prefix)) {
        let found = name.rsplit_once('@').map_or("(none)", |(_, v)| v);
        match Version::accepted(contract, found) {
            Some(v) if version.is_none_or(|seen| seen == v) => version = Some(v),
            _ => {
                return Err(ComponentError::UnsupportedVersion {
                    component: loaded.name.to_string(),
                    package: package.to_string(),
                    package_dir: package.rsplit(':').next().unwrap_or(package).to_string(),
                    found: found.to_string(),
                    supported: Version::supported(contract),
                });
            }
        }
    }
    // No export of the package at all: the world check below names what it exports.
    let version = version.unwrap_or(Version::V0_1_0);
    for interface in contract.interfaces {
        let wanted = format!("{package}/{interface}@{}", version.as_str());
        if !exports.contains(&wanted) {
            return Err(ComponentError::WrongWorld {
                component: loaded.name.to_string(),
                world: format!("{package}/{}@{}", contract.world, version.as_str()),
                exports: if exports.is_empty() {
                    "none".into()
                } else {
                    exports.join(", ")
                },
            });
        }
    }
    // The type interfaces a version's world uses, at that version: a component built
    // against an events (or types) version this host does not pair with it is refused
    // here, naming that version, and not by a type mismatch at instantiation.
    let typed = [
        ("coder-eval:events", version.events()),
        (package, version.as_str()),
    ];
    for (import, _) in ty.imports(loaded.component.engine()) {
        if import.starts_with("wasi:") {
            continue;
        }
        let types = typed.iter().find_map(|&(pkg, wanted)| {
            let found = import.strip_prefix(pkg)?.strip_prefix("/types@")?;
            Some((pkg, found, wanted))
        });
        if let Some((pkg, found, wanted)) = types {
            if found != wanted {
                return Err(ComponentError::UnsupportedVersion {
                    component: loaded.name.to_string(),
                    package: pkg.to_string(),
                    package_dir: pkg.rsplit(':').next().unwrap_or(pkg).to_string(),
                    found: found.to_string(),
                    supported: wanted.to_string(),
                });
            }
            continue;
        }
        return Err(ComponentError::ForbiddenImport {
            component: loaded.name.to_string(),
            import: import.to_string(),
        });
    }
    Ok(version)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_accepted_versions() {
        assert_eq!(Version::accepted(&HARNESS, "0.1.0"), Some(Version::V0_1_0));
        assert_eq!(Version::accepted(&GRADER, "0.1.0"), Some(Version::V0_1_0));
        assert_eq!(Version::accepted(&GRADER, "0.2.0"), Some(Version::V0_2_0));
        assert_eq!(Version::accepted(&HARNESS, "0.2.0"), Some(Version::V0_2_0));
        assert_eq!(Version::accepted(&HARNESS, "9.0.0"), None);
        assert_eq!(Version::supported(&GRADER), "0.1.0, 0.2.0");
        assert_eq!(Version::accepted(&HARNESS, "(none)"), None);
        assert_eq!(Version::supported(&HARNESS), "0.1.0, 0.2.0");
    }

    /// The module doc's "The host speaks ..." sentence names exactly the `package@version`
    /// pairs that [`Version::accepted`] accepts, so the doc cannot lag a new arm.
    #[test]
    fn the_module_doc_names_every_accepted_version() {
        let source = include_str!("contract.rs");
        let doc: String = source
            .lines()
            .filter_map(|line| line.strip_prefix("//!"))
            .collect::<Vec<_>>()
            .join(" ");
        let start = doc
            .find("The host speaks")
            .expect("the doc says what the host speaks");
        let sentence = &doc[start..];
        let sentence = &sentence[..sentence.find('(').expect("the sentence ends at its '('")];
        let mut named: Vec<String> = sentence
            .split('`')
            .skip(1)
            .step_by(2)
            .map(str::to_string)
            .collect();
        named.sort();
        let mut accepted = Vec::new();
        for contract in [HARNESS, GRADER] {
            let short = contract.package.trim_start_matches("coder-eval:");
            for version in Version::ALL {
                if Version::accepted(&contract, version.as_str()).is_some() {
                    accepted.push(format!("{short}@{}", version.as_str()));
                }
            }
        }
        accepted.sort();
        assert_eq!(named, accepted, "{sentence}");
    }
}
