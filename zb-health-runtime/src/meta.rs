//! Static probe metadata, written by `#[zb_health]` and read by the
//! generated manifest registration.

use std::time::Duration;

use zb_health_spec::settings::ProbeSettings;

use crate::probe::{BlockingProbe, Probe, from_blocking_fn};
use crate::registry::ProbeRegistration;

/// What `#[zb_health(...)]` declares about a probe type: its name and its
/// settings, the facts the manifest must not contradict (rule R7).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProbeMeta {
    /// The registered name.
    pub name: &'static str,
    /// The tiers, deadline, failure status and execution policy, in the
    /// spec's one model of a probe's settings.
    pub settings: ProbeSettings,
}

impl ProbeMeta {
    /// Its deadline: the stated one, else the default below Kubernetes'
    /// 1 s `timeoutSeconds` (800 ms). A registry without an orchestrator
    /// timeout runs it with this; one with a timeout derives the default
    /// from it ([`ProbeSettings::resolved_timeout`]).
    pub fn timeout(&self) -> Duration {
        self.settings.resolved_timeout(None)
    }

    /// A registration of `probe` carrying this metadata; how generated
    /// code registers built-in probes, and handy for programmatic ones.
    pub fn registration(self, probe: impl Probe) -> ProbeRegistration {
        ProbeRegistration::new(self.name, probe).settings(self.settings)
    }

    /// A registration of the blocking `probe` carrying this metadata: its
    /// `check` runs on tokio's blocking pool through [`from_blocking_fn`]
    /// (one call in flight, the deadline bounding the wait for it). How
    /// `#[zb_health(blocking = true)]` registers.
    pub fn blocking_registration(self, probe: impl BlockingProbe) -> ProbeRegistration {
        self.registration(from_blocking_fn(move || probe.check()))
    }
}

/// A probe type annotated with `#[zb_health(...)]`. Implemented by the
/// attribute; a manifest's `kind: custom` entries require it.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a #[zb_health] probe",
    label = "named by a `kind: custom` entry of the health manifest",
    note = "annotate the struct: `#[zb_health(name = \"...\", tags = [ready])]`, and implement `Probe` for it (both with `use zb_health::prelude::*;`)"
)]
// No `Probe` supertrait: a `blocking = true` struct implements
// `BlockingProbe` instead, and the generated `registration` names the one
// the attribute chose, so a missing impl is reported against that trait.
pub trait ZbHealthProbe: Sized {
    /// The attribute's metadata.
    const META: ProbeMeta;

    /// A probe that needs no state, `#[zb_health]` on an `async fn`: the
    /// function that makes its registration from nothing, which is how a
    /// manifest's `fn:` entry registers it. `None` for a probe struct,
    /// registered from a value; `manifest!` refuses a `fn:` entry that
    /// names one, and a `type:` entry that names an async fn.
    const STATELESS: Option<fn() -> ProbeRegistration> = None;

    /// A registration carrying the attribute's metadata, running the probe
    /// as the attribute says: [`ProbeMeta::registration`] for a [`Probe`],
    /// [`ProbeMeta::blocking_registration`] for a [`BlockingProbe`].
    fn registration(self) -> ProbeRegistration;
}

/// A fact the health manifest states about an item it cannot see (a custom
/// probe's attribute, a probe named by a group), as a type that holds or
/// not. `manifest!`'s generated checks require `Fact<{ the fact }>` to
/// implement a trait that only `Fact<true>` implements and whose
/// `#[diagnostic::on_unimplemented]` carries the manifest's message, so a
/// broken fact is one located compile error in our words; rustc's label
/// then reads "the trait `CacheProbeFitsOrchestrator` is not implemented
/// for `Fact<false>`". Public so that the label names it plainly.
pub struct Fact<const HOLDS: bool>;

/// Support for generated code; not a public API.
#[doc(hidden)]
pub mod __private {
    pub use std::time::Duration;

    /// The callback through which `manifest!` checks the limits it sets
    /// at a `#[zb_health]` attribute.
    #[cfg(feature = "macros")]
    pub use zb_health_macros::__attribute_limits;

    /// The `const fn` comparisons of the generated per-fact checks: the
    /// same functions the runtime rules call.
    pub use zb_health_spec::facts;

    /// The manifest's `DRAIN`, recorded as fitted into `grace_period`
    /// without checking: rule R18 proved the fit at compile time.
    pub const fn fitted_drain(
        drain: crate::lifecycle::Drain,
        grace_period: Duration,
    ) -> crate::lifecycle::Drain {
        drain.fitted_at_compile_time(grace_period)
    }

    /// A built-in cluster probe's majority guard: the manifest's `stated`
    /// one with the run time's `CLUSTER_EXPECTED_SIZE`, which the
    /// install has already accepted (an unusable value, refused there,
    /// counts as unset here).
    #[cfg(feature = "cluster")]
    pub fn runtime_guard(
        stated: Option<zb_health_spec::MajorityGuard>,
    ) -> Option<zb_health_spec::MajorityGuard> {
        crate::cluster::guard_with_size(
            stated,
            crate::cluster::expected_size_from_env().ok().flatten(),
        )
    }

    /// The registration of a manifest's `fn:` entry, whose
    /// [`ZbHealthProbe::STATELESS`](super::ZbHealthProbe::STATELESS) the macro already checked is `Some`.
    pub fn stateless(
        registration: Option<fn() -> crate::registry::ProbeRegistration>,
    ) -> crate::registry::ProbeRegistration {
        registration.expect("the manifest's `fn:` named an async fn probe, checked at compile time")(
        )
    }

    /// The HTTP probe of a manifest entry whose `url` and `status` the
    /// macro already checked ([`crate::spec::upstream`]).
    #[cfg(feature = "http-probe")]
    pub fn http_probe(
        url: &str,
        low: u16,
        high: u16,
        body_contains: Option<&str>,
    ) -> crate::probes::http::HttpProbe {
        let probe = crate::probes::http::HttpProbe::new(url)
            .expect("the manifest's url passed its rule at compile time")
            .status(low, high)
            .expect("the manifest's status passed its rule at compile time");
        match body_contains {
            Some(text) => probe.body_contains(text),
            None => probe,
        }
    }

    /// The Redis probe of a manifest entry whose `url` the macro already
    /// checked ([`crate::spec::redis`]).
    #[cfg(feature = "redis")]
    pub fn redis_probe(url: &str) -> crate::probes::redis::RedisProbe {
        crate::probes::redis::RedisProbe::new(url)
            .expect("the manifest's url passed its rule at compile time")
    }

    /// A certificate probe of the TLS server at `address`, sending
    /// `server_name`, both already checked by the macro.
    #[cfg(feature = "certificate-handshake")]
    pub fn certificate_address(
        address: &str,
        server_name: Option<&str>,
    ) -> crate::probes::certificate::CertificateProbe {
        let probe = crate::probes::certificate::CertificateProbe::address(address)
            .expect("the manifest's address passed its rule at compile time");
        match server_name {
            Some(name) => probe
                .server_name(name)
                .expect("the manifest's server_name passed its rule at compile time"),
            None => probe,
        }
    }

    /// A role-scoped rule from roles the macro already checked (R2).
    #[cfg(feature = "cluster")]
    pub fn checked_roles(roles: &[&str]) -> crate::cluster::ClusterActiveNode {
        crate::cluster::ClusterActiveNode::with_roles(roles.iter().copied())
            .expect("the manifest's roles passed rule R2 at compile time")
    }
}

/// Feature guards for generated code: a manifest that uses a built-in kind
/// whose feature is off gets an error that says which feature to enable.
macro_rules! feature_guard {
    ($name:ident, $feature:literal, $kinds:literal) => {
        feature_guard!(
            $name,
            $feature,
            $kinds,
            "enable it: `zb-health = { version = \"…\", features = [\"", $feature, "\"] }`"
        );
    };
    // `$help`: the pieces of the help line, joined by `concat!`.
    ($name:ident, $feature:literal, $kinds:literal, $($help:literal),+) => {
        #[cfg(feature = $feature)]
        #[doc(hidden)]
        #[macro_export]
        macro_rules! $name {
            () => {};
        }

        #[cfg(not(feature = $feature))]
        #[doc(hidden)]
        #[macro_export]
        macro_rules! $name {
            () => {
                ::core::compile_error!(concat!(
                    "the health manifest uses ", $kinds, ", which needs the `", $feature,
                    "` feature of zb-health\n  = help: ", $($help),+
                ));
            };
        }
    };
}

// `database` alone builds no driver: the help names the backend features.
feature_guard!(
    __zb_require_database,
    "database",
    "`kind: database`",
    "enable the backend it connects to, which enables `database`: `zb-health = { version = \"…\", features = [\"postgres\"] }` (or `\"sqlite\"`)"
);
feature_guard!(__zb_require_grpc, "grpc", "`kind: grpc`");
feature_guard!(__zb_require_http_probe, "http-probe", "`kind: http`");
feature_guard!(
    __zb_require_grpc_server,
    "grpc",
    "a `grpc` section (the grpc.health.v1 server)"
);
feature_guard!(__zb_require_disk, "disk", "`kind: disk`");
feature_guard!(__zb_require_redis, "redis", "`kind: redis`");
feature_guard!(
    __zb_require_certificate,
    "certificate",
    "`kind: certificate`"
);
feature_guard!(
    __zb_require_certificate_handshake,
    "certificate-handshake",
    "`kind: certificate` with `address:`"
);
feature_guard!(
    __zb_require_cluster,
    "cluster",
    "a cluster kind (`cluster-membership`, `cluster-transport` or `active-node`)"
);

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::prelude::{ProbeResult, from_fn};
    use zb_health_spec::settings::ExecutionPolicy;

    fn meta(
        cache: Option<Duration>,
        refresh: Option<Duration>,
        max_staleness: Option<Duration>,
    ) -> ProbeMeta {
        ProbeMeta {
            name: "p",
            settings: ProbeSettings {
                timeout: Some(Duration::from_secs(1)),
                policy: ExecutionPolicy {
                    cache,
                    refresh,
                    max_staleness,
                    ..ExecutionPolicy::DEFAULT
                },
                ..ProbeSettings::DEFAULT
            },
        }
    }

    #[test]
    fn the_registration_applies_the_stated_execution_policy() {
        let probe = || from_fn(|| async { Ok(ProbeResult::healthy()) });
        let (r, s) = (Some(Duration::from_secs(5)), Some(Duration::from_secs(12)));
        let registered = meta(None, r, s).registration(probe());
        assert_eq!(
            registered.settings.policy,
            ExecutionPolicy {
                refresh: r,
                max_staleness: s,
                ..ExecutionPolicy::DEFAULT
            }
        );
        let c = Some(Duration::from_secs(1));
        assert_eq!(
            meta(c, None, None).registration(probe()).settings.policy,
            ExecutionPolicy {
                cache: c,
                ..ExecutionPolicy::DEFAULT
            }
        );
        assert_eq!(
            meta(None, None, None).registration(probe()).settings.policy,
            ExecutionPolicy::DEFAULT
        );
    }
}
