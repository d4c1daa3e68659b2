//! # zb-health
//!
//! Correct, fast and safe health endpoints for actix-web services, after
//! the ZB health spec: three tiers, `ready` (`/health/ready`), `active`
//! (`/health/active`) and `live` (`/healthz`), each a tag-filtered set of
//! probes answered with one canonical JSON body.
//!
//! How the parts fit:
//!
//! * [`Probe`] is a check; [`ProbeRegistration`] says which tiers run it,
//!   its deadline and its failure status.
//! * [`HealthRegistry`] is the one registry per process (AT-1). Adding a
//!   probe checks it against the spec rules of [`spec`], the same code the
//!   compile-time checks use.
//! * [`HealthRegistry::check`] runs a tier: concurrently, bounded, each
//!   probe under a deadline that cancels it and a guard that catches its
//!   panics, producing a [`HealthReport`].
//! * A [`ResponseWriter`] turns the report into a body; [`write_json`] is
//!   the canonical one.
//! * [`ZbHealth`] maps the three tiers onto an actix `App` in one call.

#[cfg(feature = "cluster")]
pub mod cluster;
#[cfg(feature = "database")]
pub mod database;
mod executor;
mod gate;
#[cfg(feature = "grpc")]
pub mod grpc;
mod http;
mod meta;
mod probe;
mod registry;
mod report;
mod writer;

#[cfg(feature = "macros")]
pub use zb_health_macros::{manifest, zb_health};

/// The spec rules shared with the macros and the CLI.
pub use zb_health_spec as spec;

pub use executor::{ERRORED_DESCRIPTION, PANICKED_DESCRIPTION};
pub use gate::{ActiveNodeGate, RequireActiveNode, RequireActiveNodeService, STANDBY_BODY};
pub use http::{ZbHealth, ZbHealthEndpoints, map_zb_health, tier_status_code};
#[doc(hidden)]
pub use meta::__private;
pub use meta::{ProbeMeta, ZbHealthProbe};
pub use probe::{
    BoxProbeFuture, DynProbe, FnProbe, Probe, ProbeError, ProbeOutcome, ProbeResult, from_fn,
};
pub use registry::{
    HealthRegistry, HealthRegistryBuilder, ProbeRegistration, RegistrationHandle, RegistryError,
};
pub use report::{EntryOutcome, HealthEntry, HealthReport};
pub use writer::{ResponseWriter, canonical_json, write_json};
pub use zb_health_spec::{
    DEFAULT_PROBE_TIMEOUT, EndpointPaths, FailureStatus, HealthStatus, Rule, Tag, TagSet,
    ZbHealthTags,
};
