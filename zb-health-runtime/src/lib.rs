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
#[cfg(feature = "grpc")]
pub mod grpc;
mod executor;
mod gate;
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

pub use gate::{ActiveNodeGate, RequireActiveNode, RequireActiveNodeService, STANDBY_BODY};
pub use executor::{ERRORED_DESCRIPTION, PANICKED_DESCRIPTION};
#[doc(hidden)]
pub use meta::__private;
pub use meta::{ProbeMeta, ZbHealthProbe};
pub use http::{map_zb_health, tier_status_code, ZbHealth, ZbHealthEndpoints};
pub use probe::{from_fn, BoxProbeFuture, DynProbe, FnProbe, Probe, ProbeError, ProbeOutcome, ProbeResult};
pub use registry::{HealthRegistry, HealthRegistryBuilder, ProbeRegistration, RegistrationHandle, RegistryError};
pub use report::{EntryOutcome, HealthEntry, HealthReport};
pub use writer::{canonical_json, write_json, ResponseWriter};
pub use zb_health_spec::{
    EndpointPaths, FailureStatus, HealthStatus, Rule, Tag, TagSet, ZbHealthTags,
    DEFAULT_PROBE_TIMEOUT,
};
