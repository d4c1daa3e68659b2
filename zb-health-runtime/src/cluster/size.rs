//! The cluster's expected size from the run time: the
//! majority guard without baking a deployment's replica count into the
//! build.
//!
//! [`EXPECTED_SIZE_VAR`] (`CLUSTER_EXPECTED_SIZE`), when set, is the
//! number of nodes the cluster is meant to have (e.g. the StatefulSet's
//! `replicas`, which `zb-health k8s` writes into the pod's environment). It
//! overrides every `expected_size` of the manifest, and turns the guard on
//! for the cluster probes of a manifest that states none: a node that
//! reaches fewer than a majority of it never answers active. A value that
//! is not a whole number of at least one node (rule R12, the manifest's
//! own check) is refused at start, naming the variable.

use zb_health_spec::{MajorityGuard, Violations, rules::check_cluster_size};

use crate::setting::SettingError;

/// The environment variable that sets the cluster's expected size at run
/// time, overriding the manifest's `expected_size`.
pub const EXPECTED_SIZE_VAR: &str = "CLUSTER_EXPECTED_SIZE";

/// [`EXPECTED_SIZE_VAR`] read from the process environment: `None` when
/// unset or blank.
///
/// # Errors
///
/// The value is not a whole number of at least one node.
pub fn expected_size_from_env() -> Result<Option<u32>, SettingError> {
    expected_size_from_lookup(crate::setting::process_env)
}

/// [`expected_size_from_env`] over any lookup, e.g. a test's table.
///
/// # Errors
///
/// The value is not a whole number of at least one node.
pub fn expected_size_from_lookup(
    lookup: impl Fn(&str) -> Option<String>,
) -> Result<Option<u32>, SettingError> {
    let Some(value) = crate::setting::non_blank(&lookup, EXPECTED_SIZE_VAR) else {
        return Ok(None);
    };
    let refuse = |reason: String| SettingError {
        variable: EXPECTED_SIZE_VAR,
        value: value.clone(),
        reason,
    };
    let n: i128 = value.trim().parse().map_err(|e| {
        refuse(format!(
            "{e}; expected the number of nodes the cluster is meant to have, e.g. `3`"
        ))
    })?;
    // The manifest's rule (R12), so the two cannot disagree.
    let mut sink = Violations::new();
    let size = check_cluster_size("the expected size", n, (), &mut sink);
    match (size, sink.into_result()) {
        (Some(size), Ok(())) => Ok(Some(size)),
        (_, Err(found)) => Err(refuse(found.first().map_or_else(
            || "not a cluster size".to_owned(),
            |v| format!("{}; {}", v.message, v.help),
        ))),
        (None, Ok(())) => Err(refuse("not a cluster size".into())),
    }
}

/// The guard in force: the manifest's (or the code's) `guard` with its
/// size replaced by `size` when the run time gives one. A guard the run
/// time creates requires a majority (split-brain safety is the default
/// once the size is known); one the manifest states keeps its
/// `require_majority`.
pub fn guard_with_size(guard: Option<MajorityGuard>, size: Option<u32>) -> Option<MajorityGuard> {
    match (guard, size) {
        (Some(g), Some(size)) => Some(MajorityGuard {
            expected_size: size,
            ..g
        }),
        (None, Some(size)) => Some(MajorityGuard::new(size)),
        (guard, None) => guard,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(value: &str) -> Result<Option<u32>, SettingError> {
        let value = value.to_owned();
        expected_size_from_lookup(move |name| (name == EXPECTED_SIZE_VAR).then(|| value.clone()))
    }

    #[test]
    fn a_size_is_read_and_a_bad_one_is_refused_naming_the_variable() {
        assert_eq!(read("5").unwrap(), Some(5));
        assert_eq!(read(" 3 ").unwrap(), Some(3));
        assert_eq!(read("").unwrap(), None);
        assert_eq!(expected_size_from_lookup(|_| None).unwrap(), None);
        for bad in ["0", "-1", "three", "4294967296", "2.5"] {
            let e = read(bad).unwrap_err();
            assert_eq!(e.variable, "CLUSTER_EXPECTED_SIZE");
            let text = e.to_string();
            assert!(
                text.starts_with("CLUSTER_EXPECTED_SIZE=") && text.contains(bad),
                "{text}"
            );
        }
        assert!(read("0").unwrap_err().reason.contains("at least one node"));
    }

    #[test]
    fn the_run_time_size_overrides_the_manifests_and_turns_the_guard_on() {
        let stated = MajorityGuard::new(3);
        assert_eq!(guard_with_size(Some(stated), None), Some(stated));
        assert_eq!(
            guard_with_size(Some(stated), Some(5)),
            Some(MajorityGuard::new(5))
        );
        assert_eq!(
            guard_with_size(Some(stated.allow_minority()), Some(5)),
            Some(MajorityGuard::new(5).allow_minority())
        );
        assert_eq!(guard_with_size(None, Some(5)), Some(MajorityGuard::new(5)));
        assert_eq!(guard_with_size(None, None), None);
    }
}
