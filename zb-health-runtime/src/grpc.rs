//! The gRPC dependency probe (ZB-2.4), over tonic.
//!
//! [`GrpcDependencyProbe`] answers "can this service reach the downstream
//! gRPC server it needs?". It is the spec's `GrpcDependencyHealthCheck`:
//! by default it *connects*; with a delegate it runs any async check over a
//! shared [`Channel`], and [`GrpcDependencyProbe::grpc_health`] is the
//! ready-made delegate for the standard `grpc.health.v1.Health/Check`.
//! Register it on the `ready` tier (the default of
//! [`ProbeRegistration::new`](crate::registry::ProbeRegistration::new)).
//!
//! ```no_run
//! use std::time::Duration;
//! use zb_health::grpc::{tonic::transport::Endpoint, GrpcDependencyProbe};
//! use zb_health::prelude::{HealthRegistry, ProbeRegistration};
//!
//! let endpoint = Endpoint::from_static("http://inventory.internal:50051");
//! let registry = HealthRegistry::new();
//! registry
//!     .add(
//!         ProbeRegistration::new("inventory", GrpcDependencyProbe::grpc_health(endpoint, ""))
//!             .timeout(Duration::from_millis(500)),
//!     )
//!     .unwrap();
//! ```
//!
//! Descriptions are fixed strings (BE-HLTH-007): the endpoint's address and
//! tonic's error text are returned as `Err` and so reach the log only; the
//! body shows the executor's "check failed".

use std::fmt;
use std::future::Future;
use std::sync::{Arc, Mutex};

use futures_util::future::BoxFuture;
use tonic::transport::{Channel, Endpoint};

use crate::probe::{Probe, ProbeError, ProbeOutcome, ProbeResult};
use crate::sync::lock;

// This process's own health over grpc.health.v1 (AT-7); the rest of this
// module checks a dependency's.
pub mod server;

/// The tonic this crate was built against, so applications and generated
/// code name the very `Endpoint` and `Channel` types the probe accepts.
pub use tonic;

/// The `grpc.health.v1` implementation [`GrpcDependencyProbe::grpc_health`]
/// speaks and [`server::GrpcHealth`] serves, re-exported because an
/// application names its types at this very version: the
/// `HealthServer` that [`GrpcHealth::server`](server::GrpcHealth::server)
/// returns, and a `HealthClient` or `ServingStatus` that talks to it.
pub use tonic_health;

/// The description of a passing default ("connect") check.
pub(crate) const REACHABLE_DESCRIPTION: &str = "gRPC dependency reachable";
/// The description when a delegate answered `Ok(true)`.
pub(crate) const SERVING_DESCRIPTION: &str = "gRPC dependency serving";
/// The description when a delegate answered `Ok(false)`, e.g. the
/// dependency's health service reports `NOT_SERVING`.
pub(crate) const NOT_SERVING_DESCRIPTION: &str = "gRPC dependency not serving";

type Delegate = Arc<dyn Fn(Channel) -> BoxFuture<'static, Result<bool, ProbeError>> + Send + Sync>;

enum Check {
    /// Open a fresh connection each run.
    Connect,
    /// Run the caller's check over the shared lazy channel.
    Delegate(Delegate),
}

/// Checks a downstream gRPC dependency (ZB-2.4, the spec's
/// `GrpcDependencyHealthCheck`).
///
/// Two modes, chosen by the constructor:
///
/// * **connect** ([`new`](Self::new)), the spec's default: every run opens a
///   *fresh* connection to the endpoint (TCP plus the HTTP/2 preface, and
///   TLS if the endpoint is configured for it) and closes it again. A fresh
///   connection is deliberate: a lazily connected tonic `Channel` reports
///   "ready" without any connection, and an established one cannot tell
///   that its peer has gone until a request is sent, so neither proves
///   reachability *now*.
/// * **delegate** ([`with_check`](Self::with_check),
///   [`grpc_health`](Self::grpc_health)): the caller's async check runs over
///   one lazily connected [`Channel`], created on the first run and reused
///   by every later one, so a healthy run costs one RPC, not a handshake.
///   tonic reconnects that channel on demand, and a run that fails swaps it
///   for a fresh one, so a dependency that restarts (even on the same
///   address) is seen again without rebuilding the probe. A run cancelled
///   by its deadline leaves the channel usable.
///
/// The executor's deadline bounds every run;
/// [`connect_timeout`](Self::connect_timeout) or the endpoint's own
/// settings may bound the connection attempt more tightly.
pub struct GrpcDependencyProbe {
    endpoint: Endpoint,
    /// The delegate's channel and its generation; created inside the
    /// runtime on first use, because building a tonic channel spawns its
    /// worker task. Never locked across an `.await`.
    channel: Mutex<Option<(u64, Channel)>>,
    check: Check,
}

impl GrpcDependencyProbe {
    /// A probe with the default check, "connect": healthy when a new
    /// connection to `endpoint` succeeds.
    ///
    /// Use it when the dependency exposes no health service. It proves the
    /// server accepts connections, not that it can do useful work: a hung
    /// process whose socket still listens passes, because the kernel
    /// completes the handshake; [`grpc_health`](Self::grpc_health) catches
    /// that.
    pub fn new(endpoint: Endpoint) -> Self {
        Self::checking(endpoint, Check::Connect)
    }

    /// A probe running `check` over the dependency's shared, lazily
    /// connected [`Channel`], like the spec's
    /// `Func<GrpcChannel, CancellationToken, Task<bool>>`.
    ///
    /// `Ok(true)` is Healthy, `Ok(false)` Unhealthy with a fixed
    /// description, and `Err` a failure whose text is logged, not served.
    /// Cancellation is by drop when the deadline passes, so `check` needs no
    /// token; it should be a read-only call (BE-HLTH-006).
    pub fn with_check<F, Fut>(endpoint: Endpoint, check: F) -> Self
    where
        F: Fn(Channel) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<bool, ProbeError>> + Send + 'static,
    {
        let delegate: Delegate = Arc::new(move |channel| Box::pin(check(channel)));
        Self::checking(endpoint, Check::Delegate(delegate))
    }

    fn checking(endpoint: Endpoint, check: Check) -> Self {
        Self {
            endpoint,
            channel: Mutex::new(None),
            check,
        }
    }

    /// A probe asking the dependency's standard `grpc.health.v1.Health`
    /// service about `service` (`""` is the whole server): `SERVING` is
    /// Healthy; `NOT_SERVING`, `UNKNOWN` and the like are Unhealthy; an RPC
    /// error (unreachable, `NOT_FOUND` for an unknown service, no health
    /// service at all) is a failure, logged.
    ///
    /// Prefer it over [`new`](Self::new) whenever the dependency serves
    /// `grpc.health.v1`: it reflects the dependency's own readiness, not
    /// just an open port.
    pub fn grpc_health(endpoint: Endpoint, service: impl Into<String>) -> Self {
        use tonic_health::pb::HealthCheckRequest;
        use tonic_health::pb::health_check_response::ServingStatus;
        use tonic_health::pb::health_client::HealthClient;

        let service: Arc<str> = service.into().into();
        Self::with_check(endpoint, move |channel| {
            let service = service.to_string();
            async move {
                let response = HealthClient::new(channel)
                    .check(HealthCheckRequest { service })
                    .await
                    .map_err(|status| -> ProbeError { Box::new(status) })?;
                Ok(response.into_inner().status == ServingStatus::Serving as i32)
            }
        })
    }

    /// Bounds each TCP connection attempt by `timeout` (the "connect"
    /// check's, and the delegate channel's connects and reconnects), for a
    /// budget tighter than the probe's deadline: a blackholed address
    /// otherwise takes the whole deadline. Same as setting
    /// [`Endpoint::connect_timeout`] before building the probe.
    pub fn connect_timeout(mut self, timeout: std::time::Duration) -> Self {
        self.endpoint = self.endpoint.connect_timeout(timeout);
        self
    }

    /// The shared channel of the delegate modes and its generation,
    /// created on first use.
    fn channel(&self) -> (u64, Channel) {
        let mut slot = lock(&self.channel);
        let (generation, channel) = slot.get_or_insert_with(|| (0, self.endpoint.connect_lazy()));
        (*generation, channel.clone())
    }

    /// Drops the channel of `generation` after a failed run, so the next run
    /// starts a new one. tonic would reconnect the old one by itself; this
    /// covers the case it cannot: its worker task died with the runtime it
    /// was spawned on (e.g. a restarted actix worker), which would otherwise
    /// fail every later run.
    fn discard_channel(&self, generation: u64) {
        let mut slot = lock(&self.channel);
        if let Some((current, _)) = slot.as_ref()
            && *current == generation
        {
            *slot = Some((generation.wrapping_add(1), self.endpoint.connect_lazy()));
        }
    }
}

impl Probe for GrpcDependencyProbe {
    async fn check(&self) -> ProbeOutcome {
        match &self.check {
            Check::Connect => {
                // Dropped at once: the connection only had to be made.
                let _channel = self
                    .endpoint
                    .connect()
                    .await
                    .map_err(|e| -> ProbeError { Box::new(Failed("connect", Box::new(e))) })?;
                Ok(ProbeResult::healthy().with_description(REACHABLE_DESCRIPTION))
            }
            Check::Delegate(check) => {
                let (generation, channel) = self.channel();
                let serving = check(channel).await.map_err(|e| -> ProbeError {
                    self.discard_channel(generation);
                    Box::new(Failed("check", e))
                })?;
                Ok(if serving {
                    ProbeResult::healthy().with_description(SERVING_DESCRIPTION)
                } else {
                    ProbeResult::unhealthy(NOT_SERVING_DESCRIPTION)
                })
            }
        }
    }
}

/// `endpoint.into()` where a `GrpcDependencyProbe` is expected, e.g. the
/// field a manifest's `kind: grpc` entry adds to `HealthDeps`.
impl From<Endpoint> for GrpcDependencyProbe {
    fn from(endpoint: Endpoint) -> Self {
        Self::new(endpoint)
    }
}

impl fmt::Debug for GrpcDependencyProbe {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mode = match self.check {
            Check::Connect => "connect",
            Check::Delegate(_) => "delegate",
        };
        f.debug_struct("GrpcDependencyProbe")
            .field("uri", self.endpoint.uri())
            .field("check", &mode)
            .finish_non_exhaustive()
    }
}

/// A failed run, for the log: tonic's `transport error` alone says nothing,
/// so `Display` walks the whole source chain ("connection refused" etc.).
struct Failed(&'static str, ProbeError);

impl fmt::Display for Failed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "gRPC dependency {} failed: {}", self.0, self.1)?;
        let mut source = self.1.source();
        while let Some(cause) = source {
            write!(f, ": {cause}")?;
            source = cause.source();
        }
        Ok(())
    }
}

impl fmt::Debug for Failed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl std::error::Error for Failed {}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Outer(std::io::Error);
    impl fmt::Display for Outer {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("transport error")
        }
    }
    impl std::error::Error for Outer {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&self.0)
        }
    }

    #[test]
    fn the_logged_error_carries_the_whole_cause_chain() {
        let inner =
            std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "connection refused");
        let e = Failed("connect", Box::new(Outer(inner)));
        assert_eq!(
            e.to_string(),
            "gRPC dependency connect failed: transport error: connection refused"
        );
    }

    #[test]
    fn a_probe_can_be_built_outside_a_runtime() {
        // Generated code builds registries before the runtime starts; the
        // channel (which spawns a task) must not be created here.
        let endpoint = Endpoint::from_static("http://127.0.0.1:1");
        let p = GrpcDependencyProbe::grpc_health(endpoint.clone(), "");
        assert!(p.channel.lock().unwrap().is_none());
        let p = GrpcDependencyProbe::new(endpoint)
            .connect_timeout(std::time::Duration::from_millis(10));
        assert!(format!("{p:?}").contains("connect"));
    }
}
