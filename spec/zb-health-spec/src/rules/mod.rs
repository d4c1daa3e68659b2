//! Every static rule of the health spec ([`Rule`], R1–R27), and the
//! functions that check them.
//!
//! The index, in the order of the codes (as `spec/rules.md` lists them),
//! with the functions that report each rule, the file of this folder that
//! holds them and the requirement [`Rule::cites`]:
//!
//! | Rule | Functions | File | Cites |
//! |---|---|---|---|
//! | R1 `live-tag` | [`check_probe_tags`] | `tags.rs` | ZB-1.3 |
//! | R2 `role-scope-needs-roles` | [`check_role_preference`] | `cluster.rs` | ZB-2.3d |
//! | R3 `duplicate-name` | [`check_unique_names`], [`check_unique_names_of`] | `names.rs` | AT-1 |
//! | R4 `unknown-word` | none: reported where the unknown thing is parsed | | |
//! | R5 `duration` | [`check_timeout`], [`check_duration_text`], [`check_watchdog_deadline`]; [`check_execution_policy`]; [`check_drain`] | `timing.rs`; `policy.rs`; `drain.rs` | BE-HLTH-006 |
//! | R6 `endpoint-path` | [`check_paths`]; [`check_history_paths`] | `paths.rs`; `history.rs` | ZB-5 |
//! | R7 `contradiction` | [`check_shared`]; [`check_authorized_disclosure`], [`resolve_authorized`]; the other contradictions where two sources meet | `tags.rs`; `disclosure.rs` | |
//! | R8 `manifest-file` | none: the manifest reader | | |
//! | R9 `probe-name` | [`check_name`], [`check_name_of`] | `names.rs` | ZB-3 |
//! | R10 `active-not-optional` | [`check_active_not_optional`] | `tags.rs` | ZB-2.3b |
//! | R11 `missing-key` | [`missing_key`] | `keys.rs` | ZB-5 |
//! | R12 `cluster-size` | [`check_cluster_size`] | `cluster.rs` | AT-5 |
//! | R13 `no-tags` | [`check_probe_tags`] | `tags.rs` | ZB-1.1 |
//! | R14 `duplicate-key` | none: the attribute parser and the YAML reader | | |
//! | R15 `value-type` | none: the attribute parser and the manifest reader | | |
//! | R16 `refresh-policy` | [`check_execution_policy`], [`check_execution_policy_at`] | `policy.rs` | BE-HLTH-006 |
//! | R17 `live-answer` | [`check_execution_policy`], [`check_execution_policy_at`] | `policy.rs` | BE-HLTH-006 |
//! | R18 `drain-fits-grace` | [`check_drain`] | `drain.rs` | BE-HLTH-005 |
//! | R19 `max-age-fits-detection` | [`check_max_age`] | `detection.rs` | BE-HLTH-006 |
//! | R20 `threshold-fits-detection` | [`check_threshold`] | `detection.rs` | BE-HLTH-006 |
//! | R21 `unknown-dependency` | [`check_dependencies`] | `dependencies.rs` | |
//! | R22 `dependency-cycle` | [`check_dependencies`] | `dependencies.rs` | |
//! | R23 `group-unknown-probe` | [`check_group_probes`] | `groups.rs` | ZB-5 |
//! | R24 `group-path` | [`check_group_paths`] | `groups.rs` | ZB-5 |
//! | R25 `group-on-live` | [`check_group_tiers`] | `groups.rs` | ZB-1.3 |
//! | R26 `history-needs-a-port` | [`check_history_port`] | `history.rs` | |
//! | R27 `restart-after` | [`check_restart_after`] | `restart.rs` | |
//!
//! The `grpc.health.v1` mapping's checks ([`crate::grpc`]) report R3, R4,
//! R5 and R9 with the same codes.
//!
//! Codes are stable: a new rule gets the next number, never a reused one.
//!
//! Each function takes the user's own location type `L` (a YAML span, a
//! `proc_macro2::Span`, or `()` for the runtime builder) and pushes into a
//! [`Violations`] sink, so one call reports *every* problem, not the first.
//!
//! The files import one way: `rule.rs` ([`Rule`]) and `sink.rs`
//! ([`crate::Violation`], [`Violations`], [`crate::SpecError`]) are the ground every rule
//! file stands on, and `paths.rs` lends its path helpers to `groups.rs` and
//! `history.rs`; no other rule file imports another, and none imports this
//! module, which only declares them and re-exports their items as
//! `crate::rules::X`; the vocabulary ([`Rule`], [`crate::Violation`],
//! [`Violations`], [`crate::SpecError`], [`crate::NameOf`] and the
//! reserved entry names) is public at the crate root only. The unit
//! tests are in `tests.rs`.

mod cluster;
mod dependencies;
mod detection;
mod disclosure;
mod drain;
mod groups;
mod history;
mod keys;
pub(crate) mod names;
mod paths;
mod policy;
mod restart;
pub(crate) mod rule;
pub(crate) mod sink;
mod tags;
mod timing;

#[cfg(test)]
mod tests;

pub use cluster::{check_cluster_size, check_role_preference};
pub use dependencies::{DEPENDENCY_CYCLE_HELP, Dependent, check_dependencies};
pub use detection::{THRESHOLD_HELP, THRESHOLD_ZERO_HELP, check_max_age, check_threshold};
pub use disclosure::{check_authorized_disclosure, resolve_authorized};
pub use drain::check_drain;
pub use groups::{check_group_paths, check_group_probes, check_group_tiers};
pub use history::{check_history_paths, check_history_port};
pub use keys::missing_key;
pub use names::{
    LIFECYCLE_ENTRIES, RESTART_ENTRY, check_name, check_name_of, check_unique_names,
    check_unique_names_of, is_lifecycle_entry,
};
// The vocabulary every rule speaks is the crate root's, and only there
// (one path per public item): these names are the crate's own here.
pub use paths::check_paths;
pub use policy::{check_execution_policy, check_execution_policy_at};
pub use restart::{
    RESTART_DETECTION_HELP, RESTART_SHARED_HELP, RESTART_TAGS_HELP, check_restart_after,
};
pub(crate) use rule::Rule;
pub(crate) use sink::Violations;
pub use tags::{check_active_not_optional, check_probe_tags, check_shared};
pub use timing::{check_duration_text, check_timeout, check_watchdog_deadline};
