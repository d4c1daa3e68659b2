//! Proc macros of zb-health. Depend on `zb-health` instead, which
//! re-exports them (as tokio does with tokio-macros); generated code names
//! the runtime by the absolute path `::zb_health`, or by `crate = "..."`.
//!
//! Stages, after serde_derive: `attr` parses the attribute into typed
//! settings; `manifest` reads the file (`input`), and generates the items
//! (`codegen`, with `builtin`, `lifecycle` and `grpc`) and the checks of
//! what only other items know (`facts`, `custom`); the spec rules are the
//! shared `zb-health-spec` crate's functions, which the runtime calls
//! too. Every stage reports into
//! one `errors::Ctxt`, checked once at the end, so one mistake never hides
//! another. `tokens` writes each spec value as a runtime expression once.
//! The macros never panic: every failure is a `compile_error!` at the
//! offending token.

#![warn(missing_docs)]

mod attr;
mod builtin;
mod errors;
mod grpc;
mod lifecycle;
mod limits;
mod manifest;
mod site;
mod tokens;

#[cfg(test)]
mod tests;

use proc_macro::TokenStream;

/// Declares a probe struct's metadata and checks it against the spec:
///
/// ```text
/// use zb_health::prelude::*;
///
/// #[zb_health(name = "cache", tags = [ready], timeout = "750ms", failure_status = degraded)]
/// struct CacheProbe { /* ... */ }
/// impl Probe for CacheProbe { /* ... */ }
/// ```
///
/// On an `async fn` with no arguments returning `ProbeOutcome`, it is one
/// probe with no state: the fn stays as written, and a braced struct of
/// the same name (`struct ping {}`, in the type namespace, where it does
/// not clash with the fn) is its probe type, which a manifest's
/// `fn: crate::ping` names (no deps field) and `ping {}.registration()`
/// registers in code. A fn that is not `async`, takes arguments or generic
/// parameters, returns nothing or is `blocking` is a compile error at the
/// token to change.
///
/// Keys: `name` (required), `tags` (default `[ready]`), `timeout` (default
/// `1s`, or below the registry's orchestrator timeout when one is set),
/// `failure_status` (`unhealthy` by default, or `degraded`), the execution
/// policy `cache`, `refresh` and `max_staleness` (durations, none by
/// default; rules R16 and R17, and R19 against the manifest's detection
/// time), the hysteresis `failure_threshold` and `success_threshold`
/// (counts) and `failing_for` (a duration; R20), `shared = true` (a
/// ready-tier dependency every node shares, which fails open; R7),
/// `blocking = true` (the struct implements `BlockingProbe` instead of
/// `Probe`), and `crate = "path"` for a renamed runtime dependency. A
/// `live` tag, an empty name, a malformed duration, an impossible
/// execution policy or an unknown key is a compile error.
#[proc_macro_attribute]
pub fn zb_health(args: TokenStream, item: TokenStream) -> TokenStream {
    attr::expand(args.into(), item.into()).into()
}

/// Not API: the limits a manifest sets on a `#[zb_health]` attribute,
/// checked at the attribute. `manifest!` calls it through the hidden
/// callback macro the attribute defines next to its struct.
#[doc(hidden)]
#[proc_macro]
pub fn __attribute_limits(input: TokenStream) -> TokenStream {
    attr::limits(input.into()).into()
}

/// Reads a `health.yaml` manifest at compile time and generates the
/// service's typed health registration, under a name the caller chooses
/// (as sqlx's `query_as!(Record, ...)` does):
///
/// ```text
/// use zb_health::prelude::*;
///
/// manifest!(pub Health = "health.yaml");            // relative to this file
/// manifest!(pub Health, yaml = r#"service: x"#);    // inline
/// manifest!(Health = "health.yaml", crate = "zbh"); // renamed runtime crate
/// ```
///
/// `VIS NAME` generates these items with that visibility:
///
/// * `NAME`, a unit struct with `SERVICE`, `ORCHESTRATOR_TIMEOUT`,
///   `DETECTION_TIME`, `DRAIN`, `TERMINATION_GRACE_PERIOD`,
///   `MANAGEMENT_PORT`, `PROBES`, `paths()`, `registrations(deps)`,
///   `install(deps)` and `install_into(&registry, deps)` (with a `grpc`
///   section also `GRPC_PERIOD` and `grpc(&registry)`; with one
///   `active-node` probe also `active_node_rule()` and
///   `active_node_gate(view)`). `install` hands the manifest's facts to
///   the runtime's `zb_health::install::Settings::install`, which
///   sets the process registry's detection time, and its orchestrator
///   timeout and failure log interval where the manifest states them,
///   registers the watchdogs and every probe, declares the startup gates,
///   and returns what becomes a `NAMEInstalled`; `install_into` does the
///   same on a registry of your own, for tests.
/// * `NAMEInstalled`: `server`, a `zb_health::server::ZbHealthServer`
///   serving that registry (the tiers, the management port,
///   `grpc.health.v1` and the drain, as the manifest declares them), and
///   the handles `startup` (`NAMEStartup`, one `StartupGate` per
///   declared gate) and `watchdogs` (`NAMEWatchdogs`, one `Heartbeat` per
///   declared watchdog).
/// * `NAMEDeps` (`HealthDeps` for `Health`), a struct with one field per
///   dependency the manifest names, so forgetting one is a compile error
///   naming it.
///
/// A `kind: custom` entry with `fn:` instead of `type:` names a
/// `#[zb_health]` async fn: it gets no field, since it needs no state.
///
/// Field names depend only on what the user wrote, never on position: the
/// probe's `name` with `-` and `.` turned into `_` (keywords become raw
/// identifiers, `r#match`; names no identifier can spell get `p_`,
/// `p_self`); for a `kind: custom` entry without `name:`, the type's name
/// in snake case (`CacheProbe` → `cache_probe`, `HTTPProbe` →
/// `http_probe`), because that probe's name lives on its `#[zb_health]`
/// attribute, which a macro cannot read: write `name:` in the entry to
/// name the field after the probe. Cluster kinds share one
/// `cluster_view` field. Two probes that would get one field are a
/// compile error naming both.
///
/// Every spec violation in the file is a compile error naming its line and
/// column; so is each contradiction between a custom entry and its
/// attribute, each reported on its own, all at once. Editing the file
/// rebuilds the crate.
#[proc_macro]
pub fn manifest(input: TokenStream) -> TokenStream {
    let caller = proc_macro::Span::call_site().local_file();
    manifest::expand(input.into(), caller).into()
}
