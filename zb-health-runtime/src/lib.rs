//! # zb-health
//!
//! Correct, fast and safe health endpoints for actix-web services, after
//! the ZB health spec: three tiers, `ready` (`/health/ready`), `active`
//! (`/health/active`) and `live` (`/healthz`), each a tag-filtered set of
//! probes answered with one canonical JSON body.
//!
//! Applications start with [`prelude`]: `use zb_health::prelude::*;`
//! brings what an application writes. Each public item has one path:
//!
//! * an application's item (the probe trait and its result, the registry
//!   and registration, the endpoint mapping, the gate, the error `main`
//!   returns, the two macros) is named through the [`prelude`]; its docs
//!   are in the module that defines it;
//! * a lower-level item through its module, e.g.
//!   [`server::ZbHealthServer`];
//! * the spec's items (names, value types, rules) through [`spec`], the
//!   `zb-health-spec` crate whose rules every check here calls; its four
//!   everyday types, `Tag`, `TagSet`, `HealthStatus` and `FailureStatus`,
//!   are in the prelude too.
//!
//! So the crate root holds only modules. A dependency crate is re-exported
//! only where an application must name the very version this crate was
//! built against: `database::sea_orm` (the connection the database probe
//! takes), `grpc::tonic` (the channel the gRPC probe takes) and
//! `grpc::tonic_health` (the server and status types of the
//! `grpc.health.v1` server). Hidden from the docs, and no API (the idiom
//! of serde's `__private`: free to change), are the items `manifest!`'s
//! generated code names: the module `__private` (with the callback
//! `__attribute_limits` through which it checks a `#[zb_health]`
//! attribute) and nine macros, `__zb_require_database`,
//! `__zb_require_grpc`, `__zb_require_grpc_server`,
//! `__zb_require_http_probe`, `__zb_require_cluster`, `__zb_require_disk`,
//! `__zb_require_redis`, `__zb_require_certificate` and
//! `__zb_require_certificate_handshake`, which name the
//! feature a manifest needs when it
//! is off (`#[macro_export]` puts them at the root).
//!
//! # How the parts fit
//!
//! Data flows one way: registration → table → executor → report → writer
//! → handler, with the lifecycle beside the executor.
//!
//! * [`probe`]: a [`Probe`](probe::Probe) is a check
//!   ([`BlockingProbe`](probe::BlockingProbe) one that calls
//!   blocking code, run on tokio's blocking pool). A
//!   [`ProbeRegistration`](registry::ProbeRegistration)
//!   says which tiers run it, its deadline, its failure status and its
//!   execution policy; `#[zb_health]` writes the same facts on a probe
//!   struct ([`ZbHealthProbe`](meta::ZbHealthProbe), [`meta`]).
//! * [`registry`]: [`HealthRegistry`](registry::HealthRegistry) is the one
//!   registry per process (AT-1),
//!   [`HealthRegistry::process`](registry::HealthRegistry::process). Adding a probe checks it against
//!   the rules of [`spec`], the same code the compile-time checks use.
//! * the executor (private): how a tier runs: concurrently, bounded, each probe under
//!   a deadline that cancels it and a guard that catches its panics, one
//!   shared execution per probe (single flight), a result cache or a
//!   background schedule, producing a [`report::HealthReport`].
//! * [`lifecycle`]: the startup gate, the liveness watchdog and the drain's
//!   state; [`server`] runs the actix (and gRPC) servers under the drain.
//!   A start it cannot make (a bad variable, a taken port) is a
//!   [`StartError`](prelude::StartError), which names the setting to change and prints as words
//!   when `main` returns it.
//! * [`writer`]: the report as a body, the canonical JSON by default, at a
//!   tier's disclosure level; raw error text is in no body at any level.
//! * [`http`]: [`ZbHealth`](http::ZbHealth) maps the three tiers, one path per probe under
//!   `ready` and `active`, the startup path (`/health/started`, for a
//!   kubelet `startupProbe`), the health groups and, when on, the history
//!   onto an actix `App`; every tier reads `?verbose` and `?exclude=`
//!   (kube-apiserver's query); [`http::OperatorControls`] are the
//!   management port's maintenance mode and step-down, behind the token.
//! * [`token`]: the bearer token that lets a request see a tier's
//!   authorized level (`HEALTH_TOKEN`), compared in constant time, never
//!   logged.
//! * [`observe`]: one log line per transition and the `zb_health_*`
//!   metrics (BE-HLTH-008); with the `prometheus` feature,
//!   `observe::prometheus` is the recorder and the `GET /metrics` route
//!   the installed server serves them with; with the `otel` feature,
//!   `observe::otel` exports the statuses, durations and transitions
//!   over OTLP.
//! * [`publish`]: each tier and probe transition to publishers (a
//!   webhook), off the probe path, grouped, silent while starting or
//!   draining.
//! * [`shared`]: a dependency every node shares fails open when most of
//!   the cluster sees it fail (BE-HLTH-003).
//! * [`history`]: each probe's recent results, transitions and flaps in
//!   fixed memory, each tier's last answer and the lifecycle's events,
//!   served by [`ZbHealth::history`](http::ZbHealth::history) at `/health/history` (and the page at
//!   `/health/ui`); reading it never runs a probe.
//! * [`gate`]: [`ActiveNodeGate`](gate::ActiveNodeGate) and
//!   [`RequireActiveNode`](gate::RequireActiveNode) keep
//!   active-only routes on the active node (ZB-4); [`cluster`],
//!   [`database`] and [`grpc`] are the built-in probes and, with the
//!   `grpc` feature, the `grpc.health.v1` server (AT-7), each behind its
//!   feature; [`probes`] holds the batteries, each behind its feature
//!   (`probes::disk`, feature `disk`; `probes::http`, feature
//!   `http-probe`; `probes::redis`, feature `redis`; `probes::certificate`,
//!   feature `certificate`, its handshake source `certificate-handshake`).
//!
//! # Wiring
//!
//! The one path the README teaches: a `health.yaml` read by
//! [`manifest!`](prelude::manifest),
//! whose generated `install` registers the manifest's probes into the
//! process registry and returns a [`server::ZbHealthServer`] that serves
//! everything the manifest declares: the tiers, the management port,
//! `grpc.health.v1` and the drain, every port on one `HOST`.
//!
//! Other paths, each for a reason:
//!
//! * your own `HttpServer`: mount [`server::ZbHealthServer::endpoints`] and
//!   run it under [`server::serve`](fn@server::serve);
//! * no manifest: [`map_zb_health`](http::map_zb_health) over
//!   [`HealthRegistry::process`](registry::HealthRegistry::process) with
//!   probes added in code
//!   ([`HealthRegistry::add`](registry::HealthRegistry::add));
//! * other paths or another writer: [`ZbHealth`](http::ZbHealth) (the builder
//!   `map_zb_health` uses);
//! * a unit test of a probe:
//!   [`HealthRegistry::new`](registry::HealthRegistry::new), a plain registry
//!   holding only what the test adds (AT-9);
//! * one tier on its own server or scope: [`http::ZbHealthEndpoints::tier`].

#![warn(missing_docs)]
// Feature badges on docs.rs, which builds with nightly and `--cfg docsrs`:
// `doc_cfg` is unstable, so stable builds never see it.
#![cfg_attr(docsrs, feature(doc_cfg))]

mod answer;
#[cfg(feature = "cluster")]
pub mod cluster;
// `database` alone builds no driver (see Cargo.toml): the cfg names the
// backend features, which imply it, because rustc quotes it when a user's
// `zb_health::database` is missing, and the fix is a backend.
#[cfg(any(feature = "sqlite", feature = "postgres", feature = "database"))]
pub mod database;
mod executor;
pub mod gate;
#[cfg(feature = "grpc")]
pub mod grpc;
pub mod guide;
pub mod history;
pub mod http;
pub mod install;
pub mod lifecycle;
pub mod meta;
pub mod observe;
mod paced;
pub mod probe;
pub mod probes;
pub mod publish;
mod registration;
pub mod registry;
pub mod report;
pub mod server;
mod setting;
pub mod shared;
mod start;
mod sync;
mod table;
pub mod token;
mod wallclock;
pub mod writer;

#[doc(hidden)]
pub use meta::__private;

/// The spec crate, `zb-health-spec`: its rules (the same functions the
/// macros and the `zb-health` CLI call), its names and its value types.
/// Its four everyday types, [`Tag`](spec::Tag), [`TagSet`](spec::TagSet),
/// [`HealthStatus`](spec::HealthStatus) and
/// [`FailureStatus`](spec::FailureStatus), are in the prelude too; every
/// other spec item is named here, `zb_health::spec::…`, so an application
/// needs no dependency on `zb-health-spec` of its own.
pub use zb_health_spec as spec;

/// What an application writes: `use zb_health::prelude::*;`.
///
/// The probe trait and its result, the registry and registration, the
/// lifecycle handles, the endpoint mapping and its health groups, the
/// gate, the error `main` returns, the spec's tag and status types, and
/// the two macros. This is the one path to them that the docs and
/// examples use; each is defined in its module (the spec types in
/// [`spec`]), where the lower-level items beside it stay.
pub mod prelude {
    pub use crate::gate::{ActiveNodeGate, RequireActiveNode};
    pub use crate::http::{HealthGroup, ZbHealth, map_zb_health};
    pub use crate::lifecycle::{Heartbeat, StartupGate};
    pub use crate::meta::ZbHealthProbe;
    pub use crate::probe::{BlockingProbe, Probe, ProbeError, ProbeOutcome, ProbeResult, from_fn};
    pub use crate::registry::{HealthRegistry, ProbeRegistration, RegistryError};
    pub use crate::spec::{FailureStatus, HealthStatus, Tag, TagSet};
    pub use crate::start::StartError;
    #[cfg(feature = "macros")]
    pub use zb_health_macros::{manifest, zb_health};
}
