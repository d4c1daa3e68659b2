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
//! vocabulary ([`vocab::Keyword`]).
//!
//! The root holds the vocabulary every caller speaks: statuses, tags,
//! disclosure levels, endpoint paths, and [`Rule`] with its [`Violation`]
//! and [`SpecError`]. Everything else is reached through its module:
//! the checks in [`rules`], durations in [`duration`], the word lists in
//! [`vocab`], the hints in [`suggest`], and the manifest model in
//! `manifest`.
//!
//! This crate has no `proc_macro` types and no dependencies, so any of those
//! callers can use it. The `manifest` feature adds the `health.yaml` model,
//! parser and validator (`manifest`), at the cost of `serde` and
//! `serde-saphyr`.

#![warn(missing_docs)]
// Feature badges on docs.rs, which builds with nightly and `--cfg docsrs`:
// `doc_cfg` is unstable, so stable builds never see it.
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod certificate;
mod cluster;
pub mod detection;
pub mod disk;
pub mod drain;
pub mod duration;
pub mod facts;
pub mod grpc;
pub mod history;
#[cfg(feature = "manifest")]
pub mod manifest;
pub mod operator;
mod paths;
pub mod query;
pub mod redis;
pub mod rules;
pub mod settings;
mod status;
pub mod suggest;
mod tag;
pub mod upstream;
pub mod vocab;
pub mod webhook;

pub use cluster::{MajorityGuard, MembershipPolicy};
pub use paths::{Endpoint, EndpointPaths};
pub use rules::names::{NameOf, SHUTDOWN_ENTRY, STARTUP_ENTRY};
pub use rules::rule::Rule;
pub use rules::sink::{SpecError, Violation, Violations};
pub use status::{FailureStatus, HealthStatus};
pub use tag::{Tag, TagSet, UnknownTag, ZbHealthTags};
pub use vocab::body::{Disclosure, ResponseFormat};
