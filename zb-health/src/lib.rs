//! # zb-health
//!
//! Correct, fast and safe health endpoints for actix-web services, after
//! the ZB health spec: three tiers, `ready` (`/health/ready`), `active`
//! (`/health/active`) and `live` (`/healthz`), each a tag-filtered set of
//! probes answered with one canonical JSON body.
//!
//! Applications start with [`prelude`]: `use zb_health::prelude::*;`.
//!
//! # How the parts fit
//!
//! * [`Probe`] is a check ([`BlockingProbe`] one that calls blocking
//!   code, run on tokio's blocking pool); [`ProbeRegistration`] says which
//!   tiers run it, its deadline and its failure status. `#[zb_health]`
//!   writes the same facts on a probe struct ([`ZbHealthProbe`]).
//! * [`HealthRegistry`] is the one registry per process (AT-1):
//!   [`HealthRegistry::process`]. Adding a probe checks it against the spec
//!   rules of [`spec`], the same code the compile-time checks use.
//! * [`HealthRegistry::check`] runs a tier: concurrently, bounded, each
//!   probe under a deadline that cancels it and a guard that catches its
//!   panics, producing a [`HealthReport`]. [`policy`] is how a probe's
//!   result is obtained: one shared execution per probe (single-flight),
//!   a result cache, or a background schedule.
//! * A [`ResponseWriter`] turns the report into a body; [`write_json`] is
//!   the canonical one. The built-in writer's [`BodyStyle`] chooses, per
//!   tier, the [`ResponseFormat`] (ZB or `pass`/`fail`, BE-HLTH-001), the
//!   [`Disclosure`] level (`full`, `names`, `status`, BE-HLTH-007) and, on
//!   `ready`, `clusterReady` (AT-8); raw error text is in no body at any
//!   level.
//! * [`observe`]: what a run leaves besides the report (BE-HLTH-008):
//!   one log line per transition (failing, still failing at most once per
//!   interval, recovered) and the `zb_health_*` metrics through the
//!   `metrics` facade.
//! * [`ZbHealth`] maps the three tiers onto an actix `App`;
//!   [`ZbHealthEndpoints::tier`] serves one tier alone.
//! * [`ActiveNodeGate`] and [`RequireActiveNode`] keep active-only routes
//!   on the active node (ZB-4).
//! * With the `grpc` feature, `grpc::server::GrpcHealth` serves
//!   `grpc.health.v1` from the same registry and single-flight results
//!   (AT-7): `Check` fresh, `Watch` from one schedule.
//! * [`lifecycle`]: the startup gate ([`HealthRegistry::startup_gate`]),
//!   the liveness watchdog ([`HealthRegistry::watchdog`]) and the shutdown
//!   drain ([`lifecycle::serve`](fn@lifecycle::serve)).
//!
//! # Wiring
//!
//! The one path the README teaches: a `health.yaml` read by
//! [`manifest!`], whose generated `install` registers the manifest's probes
//! into the process registry and returns the [`ZbHealthEndpoints`] to
//! mount with `App::service`.
//!
//! Other paths, each for a reason:
//!
//! * no manifest: [`map_zb_health`] over [`HealthRegistry::process`] with
//!   probes added in code ([`HealthRegistry::add`]);
//! * other paths or another writer: [`ZbHealth`] (the builder
//!   `map_zb_health` uses);
//! * a unit test of a probe: [`HealthRegistry::new`], a plain registry
//!   holding only what the test adds (AT-9);
//! * one tier on its own server or scope: [`ZbHealthEndpoints::tier`].
//!
//! # Modules for lower-level items
//!
//! [`probe`] holds the object-safe probe machinery ([`probe::DynProbe`],
//! [`probe::FnProbe`]); [`report`] the fixed failure descriptions;
//! [`gate`] the middleware's service type; [`spec`] the rules and the tag
//! name constants (`spec::ZbHealthTags`).

#![warn(missing_docs)]
// Feature badges on docs.rs, which builds with nightly and `--cfg docsrs`:
// `doc_cfg` is unstable, so stable builds never see it.
#![cfg_attr(docsrs, feature(doc_cfg))]

#[cfg(feature = "cluster")]
pub mod cluster;
#[cfg(feature = "database")]
pub mod database;
mod executor;
pub mod gate;
#[cfg(feature = "grpc")]
pub mod grpc;
mod http;
pub mod lifecycle;
mod meta;
pub mod observe;
pub mod policy;
pub mod probe;
mod registry;
pub mod report;
mod writer;

#[cfg(feature = "macros")]
pub use zb_health_macros::{manifest, zb_health};

/// The spec rules, the same functions the macros call (and that the
/// planned `zb-health` CLI of issue 10 will call).
pub use zb_health_spec as spec;

pub use gate::{ActiveNodeGate, RequireActiveNode, STANDBY_BODY};
pub use http::{ZbHealth, ZbHealthEndpoints, ZbHealthTier, map_zb_health, tier_status_code};
pub use lifecycle::{Heartbeat, StartupGate};
#[doc(hidden)]
pub use meta::__private;
pub use meta::{ProbeMeta, ZbHealthProbe};
pub use probe::{BlockingProbe, Probe, ProbeError, ProbeOutcome, ProbeResult, from_fn};
pub use registry::{
    HealthRegistry, HealthRegistryBuilder, ProbeRegistration, RegistrationHandle, RegistryError,
};
pub use report::{EntryOutcome, HealthEntry, HealthReport};
pub use writer::{
    BodyStyle, ResponseWriter, canonical_json, cluster_ready, write_json, write_pass_fail,
};
pub use zb_health_spec::{
    DEFAULT_PROBE_TIMEOUT, Disclosure, EndpointPaths, FailureStatus, HealthStatus, ResponseFormat,
    Rule, SpecError, Tag, TagSet,
};

/// What an application writes: `use zb_health::prelude::*;`.
///
/// The probe trait and its result, the registry and registration, the
/// endpoint mapping, the gate, and the two macros. Lower-level items stay
/// in their modules.
pub mod prelude {
    pub use crate::{
        ActiveNodeGate, BlockingProbe, FailureStatus, HealthRegistry, HealthStatus, Probe,
        ProbeOutcome, ProbeRegistration, ProbeResult, RequireActiveNode, Tag, TagSet, ZbHealth,
        ZbHealthProbe, map_zb_health,
    };
    #[cfg(feature = "macros")]
    pub use crate::{manifest, zb_health};
}
