//! The zb-health spec as plain Rust.
//!
//! Every rule of the health spec that can be checked without running a probe
//! lives here exactly once: tag legality (ZB-1.3), unique names, timeout bounds
//! (BE-HLTH-006), endpoint paths, and the rest of the index in [`Rule`]. Only
//! the parse errors of a `#[zb_health]` attribute (R4, R14, R15) are found
//! by the macro's own parser, with these codes. The
//! `#[zb_health]` and `manifest!` macros turn a violation into a compile
//! error and the runtime builder into an `Err` ([`SpecError`]), so the two can
//! never disagree about what is legal. The words the rules speak of are one
//! vocabulary ([`Keyword`]).
//!
//! This crate has no `proc_macro` types and no dependencies, so any of those
//! callers can use it. The `manifest` feature adds the `health.yaml` model,
//! parser and validator ([`manifest`]), at the cost of `serde` and
//! `serde-saphyr`.

#![warn(missing_docs)]
// Feature badges on docs.rs, which builds with nightly and `--cfg docsrs`:
// `doc_cfg` is unstable, so stable builds never see it.
#![cfg_attr(docsrs, feature(doc_cfg))]

mod cluster;
pub mod detection;
pub mod drain;
mod duration;
pub mod facts;
pub mod grpc;
pub mod history;
#[cfg(feature = "manifest")]
pub mod manifest;
mod paths;
mod rules;
mod status;
mod suggest;
mod tag;
mod vocab;

pub use cluster::{MajorityGuard, MembershipPolicy};
pub use duration::{
    DEFAULT_PROBE_TIMEOUT, DurationError, KUBERNETES_DEFAULT_TIMEOUT, MAX_PROBE_TIMEOUT,
    parse_duration,
};
#[cfg(feature = "manifest")]
pub use manifest::{
    ActiveScope, GroupDecl, HistoryDecl, LifecycleDecl, Located, Location, Manifest, ProbeDecl,
    ProbeKind, ResponsesDecl, WatchdogDecl, parse_manifest,
};
pub use paths::{Endpoint, EndpointPaths};
pub use rules::{
    DEPENDENCY_CYCLE_HELP, Dependent, NameOf, Rule, SHUTDOWN_ENTRY, STARTUP_ENTRY, SpecError,
    THRESHOLD_HELP, THRESHOLD_ZERO_HELP, Violation, Violations, check_active_not_optional,
    check_authorized_disclosure, check_cluster_size, check_dependencies, check_drain,
    check_duration_text, check_execution_policy, check_execution_policy_at, check_group_paths,
    check_group_probes, check_group_tiers, check_history_paths, check_history_port, check_max_age,
    check_name, check_name_of, check_paths, check_probe_tags, check_role_preference, check_shared,
    check_threshold, check_timeout, check_unique_names, check_unique_names_of,
    check_watchdog_deadline, missing_key, resolve_authorized,
};
pub use status::{FailureStatus, HealthStatus};
pub use suggest::{all_of, did_you_mean, hint, one_of};
pub use tag::{Tag, TagSet, UnknownTag, ZbHealthTags};
pub use vocab::{
    CLUSTER_ADDRESS_KEYS, Disclosure, Keyword, Kind, PROBE_SETTING_KEYS, Preset, ResponseFormat,
    Scope,
};
