//! The `grpc.health.v1.Health` server (AT-7), fed by the same registry
//! and the same single-flight results as the HTTP tiers.
//!
//! [`GrpcHealth`] maps gRPC service names to a tier or to one probe
//! ([`GrpcTarget`]); `""`, the whole server, is `ready` unless mapped
//! otherwise. A service is `SERVING` exactly when its HTTP answer would be
//! a 200: the tier's (or probe entry's) status is `Healthy` or `Degraded`.
//!
//! * **`Check`** evaluates afresh, as an HTTP request does:
//!   [`HealthRegistry::answer`] for a tier, the probe's own execution
//!   policy for a probe, so concurrent HTTP and gRPC requests share one
//!   flight and `cache`/`refresh` apply alike. An unknown service is
//!   `NOT_FOUND`. What it saw is published to watchers too, so a `Watch`
//!   never lags behind a `Check`.
//! * **`Watch`** reads published state. One background task per
//!   `GrpcHealth` evaluates every mapped service once per
//!   [`period`](GrpcHealthBuilder::period) (each tier once, however many
//!   services map to it) and publishes on a `tokio::sync::watch` channel
//!   per service; every stream reads that channel. So many watchers cost
//!   one schedule, the same as none (the schedule runs from the start, so
//!   a new stream gets a known status at once). A stream
//!   sends the current status once known, then each change; an unknown
//!   service gets `SERVICE_UNKNOWN` and stays open, as the protocol asks.
//! * **Drain**: [`Lifecycle::begin_drain`](crate::lifecycle::Lifecycle::begin_drain) turns every service
//!   `NOT_SERVING` at once, pushed to every watcher from the drain hook,
//!   except a service mapped to `live`: it follows `live`, which stays 200
//!   through the drain, so a gRPC liveness probe never restarts a draining
//!   pod that `/healthz` would keep.
//! * **Stop**: [`GrpcHealth::stop`] ends every `Watch` stream and the task
//!   (long-lived streams would otherwise hold a graceful tonic shutdown
//!   open); dropping the last clone does the same.
//!   [`GrpcHealth::shutdown_after_drain`] is a ready-made tonic shutdown
//!   signal.
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use std::time::Duration;
//! use zb_health::grpc::server::{GrpcHealth, GrpcTarget};
//! use zb_health::prelude::{HealthRegistry, Tag};
//!
//! let registry = HealthRegistry::process().clone();
//! let health = GrpcHealth::builder(registry)
//!     .service("plant.v1.Writes", GrpcTarget::Tier(Tag::Active))
//!     .service("plant.db", GrpcTarget::probe("database"))
//!     .build()?;
//! // tonic::transport::Server::builder()
//! //     .add_service(health.server())
//! //     .serve_with_shutdown(addr, health.shutdown_after_drain(Duration::from_secs(5)))
//! # Ok(()) }
//! ```

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use futures_util::future::join_all;
use futures_util::{Stream, StreamExt, stream};
use tokio::sync::watch;
use tonic::{Request, Response, Status};
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_server::{Health, HealthServer};
use tonic_health::pb::{HealthCheckRequest, HealthCheckResponse};
use zb_health_spec::grpc::{
    DEFAULT_WATCH_PERIOD, OVERALL_SERVICE, check_grpc_period, check_grpc_probe_target,
    check_grpc_service_name, check_grpc_unique_services,
};
use zb_health_spec::{SpecError, Violations};

use crate::registry::{Answer, HealthRegistry, Selection};
use crate::sync::lock;
use zb_health_spec::{HealthStatus, Tag};

/// What a gRPC service name answers from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GrpcTarget {
    /// A tier's whole answer ([`HealthRegistry::answer`]), lifecycle
    /// entries included.
    Tier(Tag),
    /// One probe's entry, run through its own execution policy.
    Probe(Cow<'static, str>),
}

impl GrpcTarget {
    /// A probe target.
    pub fn probe(name: impl Into<Cow<'static, str>>) -> Self {
        Self::Probe(name.into())
    }
}

/// The one rendering of an answer's status for gRPC: `SERVING` exactly
/// when its HTTP code is 200 (a probe that is no longer registered is
/// `Unhealthy`, so `NOT_SERVING`).
fn serving(status: HealthStatus) -> ServingStatus {
    if status.http_code() == 200 {
        ServingStatus::Serving
    } else {
        ServingStatus::NotServing
    }
}

/// Builds a [`GrpcHealth`]; from [`GrpcHealth::builder`].
#[derive(Debug)]
pub struct GrpcHealthBuilder {
    registry: HealthRegistry,
    services: Vec<(String, GrpcTarget)>,
    period: Duration,
}

impl GrpcHealthBuilder {
    /// Maps `name` to `target`. `""` is `ready` unless mapped here.
    pub fn service(mut self, name: impl Into<String>, target: GrpcTarget) -> Self {
        self.services.push((name.into(), target));
        self
    }

    /// How often the one background evaluation feeding every `Watch`
    /// stream runs (default [`DEFAULT_WATCH_PERIOD`], 1 s). A change is
    /// seen by watchers within one period (at once for a drain or after a
    /// `Check`).
    pub fn period(mut self, period: Duration) -> Self {
        self.period = period;
        self
    }

    /// Checks the mapping against the spec rules (names R9, unknown
    /// probes R4, a service mapped twice R3, a zero period R5), every
    /// violation at once. Probes are looked up in the registry now, so
    /// register them first.
    ///
    /// # Errors
    ///
    /// The violations, as [`SpecError`].
    pub fn build(self) -> Result<GrpcHealth, SpecError> {
        let mut sink = Violations::new();
        check_grpc_unique_services(
            self.services.iter().map(|(n, _)| (n.as_str(), ())),
            &mut sink,
        );
        let known = self.registry.names();
        for (name, target) in &self.services {
            check_grpc_service_name(name, (), &mut sink);
            if let GrpcTarget::Probe(probe) = target {
                check_grpc_probe_target(name, probe, known.iter().map(|n| &**n), (), &mut sink);
            }
        }
        check_grpc_period(self.period, (), &mut sink);
        sink.into_result()?;
        let mut services: BTreeMap<String, Service> = self
            .services
            .into_iter()
            .map(|(name, target)| (name, Service::new(target)))
            .collect();
        services
            .entry(OVERALL_SERVICE.to_owned())
            .or_insert_with(|| Service::new(GrpcTarget::Tier(Tag::Ready)));
        let shared = Arc::new(ServerState {
            registry: self.registry.clone(),
            services,
            period: self.period,
            next_seq: AtomicU64::new(1),
            evaluations: AtomicU64::new(0),
            stop: watch::channel(false).0,
            task: Mutex::new(None),
        });
        // Pushes `NOT_SERVING` to every watcher at the drain's first step,
        // without waiting for the schedule. Weak: the hook outlives us.
        let weak = Arc::downgrade(&shared);
        self.registry.lifecycle().on_drain(move || {
            if let Some(shared) = weak.upgrade() {
                shared.publish_drained();
            }
        });
        let health = GrpcHealth { shared };
        health.ensure_task();
        Ok(health)
    }
}

/// The `grpc.health.v1.Health` service over a [`HealthRegistry`]; see the
/// [module](self). Cheap to clone; clones share one schedule.
#[derive(Clone)]
pub struct GrpcHealth {
    shared: Arc<ServerState>,
}

impl std::fmt::Debug for GrpcHealth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let services = self.shared.services.iter();
        f.debug_struct("GrpcHealth")
            .field(
                "services",
                &services.map(|(n, s)| (n, &s.target)).collect::<Vec<_>>(),
            )
            .field("period", &self.shared.period)
            .finish_non_exhaustive()
    }
}

struct ServerState {
    registry: HealthRegistry,
    /// By name, so they are listed in order.
    services: BTreeMap<String, Service>,
    period: Duration,
    /// Orders evaluations by their start, so an older one finishing late
    /// never overwrites a newer one's result.
    next_seq: AtomicU64,
    /// Scheduled evaluations that ran the probes.
    evaluations: AtomicU64,
    /// `true` once stopped; dropped with us, which also ends the streams
    /// and the schedule (their waits for `true` end when it closes).
    stop: watch::Sender<bool>,
    /// The schedule, started on the first runtime that sees us.
    task: Mutex<Option<tokio::task::JoinHandle<()>>>,
}

struct Service {
    target: GrpcTarget,
    tx: watch::Sender<Published>,
}

impl Service {
    /// Nothing published yet.
    fn new(target: GrpcTarget) -> Self {
        let tx = watch::channel(Published::default()).0;
        Self { target, tx }
    }

    /// Whether the drain turns it `NOT_SERVING`: every service but one
    /// mapped to `live`, the tier the drain leaves alone.
    fn drains(&self) -> bool {
        self.target != GrpcTarget::Tier(Tag::Live)
    }
}

/// A service's published state.
#[derive(Debug, Clone, Copy, Default)]
struct Published {
    /// The evaluation that set it; `u64::MAX` once drained, so nothing
    /// overwrites the drain.
    seq: u64,
    /// `None` until the first evaluation.
    status: Option<ServingStatus>,
}

impl GrpcHealth {
    /// Starts the mapping for `registry`: `""` answers from `ready`.
    pub fn builder(registry: HealthRegistry) -> GrpcHealthBuilder {
        GrpcHealthBuilder {
            registry,
            services: Vec::new(),
            period: DEFAULT_WATCH_PERIOD,
        }
    }

    /// The tonic service, for `Server::builder().add_service(..)`; shares
    /// this one's state.
    pub fn server(&self) -> HealthServer<GrpcHealth> {
        HealthServer::new(self.clone())
    }

    /// The status watchers see now for `service`: `None` for an unknown
    /// service, `Some(None)` before its first evaluation. With the
    /// `test-util` feature only.
    #[cfg(any(test, feature = "test-util"))]
    pub fn published(&self, service: &str) -> Option<Option<ServingStatus>> {
        self.shared
            .services
            .get(service)
            .map(|s| s.tx.borrow().status)
    }

    /// How many scheduled evaluations have started (each runs every
    /// mapped tier once; see the [module](self)). Watchers add none: for
    /// tests that count probe executions against it. With the
    /// `test-util` feature only.
    #[cfg(any(test, feature = "test-util"))]
    pub fn scheduled_evaluations(&self) -> u64 {
        self.shared.evaluations.load(Ordering::SeqCst)
    }

    /// Ends every `Watch` stream and the schedule; `Check` keeps
    /// answering. Call it when the server is about to stop, so a graceful
    /// shutdown does not wait on streams that never end by themselves.
    pub fn stop(&self) {
        self.shared.stop.send_replace(true);
        if let Some(task) = lock(&self.shared.task).take() {
            task.abort();
        }
    }

    /// A tonic shutdown signal: resolves `delay` after the registry's
    /// drain begins (the time the orchestrator needs to see
    /// `NOT_SERVING`), having called [`stop`](Self::stop) so the graceful
    /// stop is not held open by `Watch` streams.
    pub fn shutdown_after_drain(
        &self,
        delay: Duration,
    ) -> impl Future<Output = ()> + Send + 'static {
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        self.shared.registry.lifecycle().on_drain(move || {
            let _ = tx.send(());
        });
        let health = self.clone();
        async move {
            // A dropped sender means the registry is gone: stop too.
            let _ = rx.await;
            tokio::time::sleep(delay).await;
            health.stop();
        }
    }

    /// Starts the schedule on the current runtime if it is not running;
    /// without a runtime, the first request starts it.
    fn ensure_task(&self) {
        if *self.shared.stop.borrow() {
            return;
        }
        let mut task = lock(&self.shared.task);
        if task.as_ref().is_some_and(|t| !t.is_finished()) {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let weak = Arc::downgrade(&self.shared);
        let stop = self.shared.stop.subscribe();
        *task = Some(runtime.spawn(schedule(weak, self.shared.period, stop)));
    }
}

/// The one schedule: every `period`, evaluate every service if anyone
/// watches. Holds only a weak reference between runs, so it never keeps
/// the server alive, and ends on `stop` or when the server is dropped.
async fn schedule(weak: Weak<ServerState>, period: Duration, mut stop: watch::Receiver<bool>) {
    let mut ticks = tokio::time::interval(period);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            biased;
            _ = ticks.tick() => {}
            _ = stop.wait_for(|s| *s) => return,
        }
        let Some(shared) = weak.upgrade() else { return };
        shared.evaluate_all().await;
    }
}

impl ServerState {
    fn seq(&self) -> u64 {
        self.next_seq.fetch_add(1, Ordering::Relaxed)
    }

    /// Whether the drain has turned `service` `NOT_SERVING`.
    fn drained(&self, service: &Service) -> bool {
        service.drains() && self.registry.lifecycle().is_draining()
    }

    /// Publishes `status` from evaluation `seq` unless a newer one (or the
    /// drain) already published; watchers are woken only on a change.
    /// Returns the status as published: `NOT_SERVING` once drained.
    fn publish(&self, service: &Service, seq: u64, status: ServingStatus) -> ServingStatus {
        let status = if self.drained(service) {
            ServingStatus::NotServing
        } else {
            status
        };
        service.tx.send_if_modified(|p| {
            if seq < p.seq {
                return false;
            }
            p.seq = seq;
            let changed = p.status != Some(status);
            p.status = Some(status);
            changed
        });
        status
    }

    fn publish_drained(&self) {
        for service in self.services.values().filter(|s| s.drains()) {
            self.publish(service, u64::MAX, ServingStatus::NotServing);
        }
    }

    /// One probe's answer through its execution policy (the shared
    /// flight), after its dependencies.
    async fn probe_answer(&self, name: &str) -> Answer {
        self.registry.answer(Selection::Probe(None, name)).await
    }

    /// A fresh evaluation of one service, published; for `Check`.
    async fn evaluate(&self, service: &Service) -> ServingStatus {
        let seq = self.seq();
        let status = match &service.target {
            _ if self.drained(service) => ServingStatus::NotServing,
            GrpcTarget::Tier(tier) => serving(self.registry.answer(*tier).await.status),
            GrpcTarget::Probe(name) => serving(self.probe_answer(name).await.status),
        };
        self.publish(service, seq, status)
    }

    /// One scheduled evaluation of every service: each tier answered once;
    /// a probe service reads its entry from a tier answered anyway, and
    /// runs alone only when none is. Everything runs concurrently.
    async fn evaluate_all(&self) {
        let seq = self.seq();
        // Draining: only the services that do not drain (`live`) are
        // evaluated; the others are `NOT_SERVING` already.
        let draining = self.registry.lifecycle().is_draining();
        if draining {
            self.publish_drained();
        }
        let evaluated: Vec<&Service> = self
            .services
            .values()
            .filter(|s| !(draining && s.drains()))
            .collect();
        if evaluated.is_empty() {
            return;
        }
        self.evaluations.fetch_add(1, Ordering::SeqCst);
        let tiers: BTreeSet<Tag> = evaluated
            .iter()
            .filter_map(|s| match s.target {
                GrpcTarget::Tier(t) => Some(t),
                GrpcTarget::Probe(_) => None,
            })
            .collect();
        let covered = |name: &str| {
            let tags = self.registry.probe_tags(name);
            tags.is_some_and(|tags| tiers.iter().any(|t| *t != Tag::Live && tags.contains(*t)))
        };
        let alone: BTreeSet<&str> = evaluated
            .iter()
            .filter_map(|s| match &s.target {
                GrpcTarget::Probe(name) if !covered(name) => Some(&**name),
                _ => None,
            })
            .collect();
        let answers = join_all(tiers.iter().map(|t| self.registry.answer(*t)));
        let singles = join_all(alone.iter().map(|n| self.probe_answer(n)));
        let (answers, singles) = futures_util::future::join(answers, singles).await;
        let answers: BTreeMap<Tag, Answer> = tiers.into_iter().zip(answers).collect();
        let singles: BTreeMap<&str, Answer> = alone.into_iter().zip(singles).collect();
        for service in evaluated {
            let status = match &service.target {
                GrpcTarget::Tier(t) => answers.get(t).map(|a| a.status),
                GrpcTarget::Probe(name) => singles.get(&**name).map(|a| a.status).or_else(|| {
                    // Not `live`: its entries are watchdogs, not probes.
                    answers
                        .values()
                        .filter(|r| r.tier != Tag::Live)
                        .find_map(|r| r.entry(name))
                        .map(|e| e.status)
                }),
            };
            let status = status.map_or(ServingStatus::NotServing, serving);
            self.publish(service, seq, status);
        }
    }
}

type WatchStream = Pin<Box<dyn Stream<Item = Result<HealthCheckResponse, Status>> + Send>>;

fn response(status: ServingStatus) -> HealthCheckResponse {
    HealthCheckResponse {
        status: status as i32,
    }
}

#[tonic::async_trait]
impl Health for GrpcHealth {
    async fn check(
        &self,
        request: Request<HealthCheckRequest>,
    ) -> Result<Response<HealthCheckResponse>, Status> {
        let name = request.get_ref().service.as_str();
        let Some(service) = self.shared.services.get(name) else {
            return Err(Status::not_found("service not registered"));
        };
        self.ensure_task();
        Ok(Response::new(response(self.shared.evaluate(service).await)))
    }

    type WatchStream = WatchStream;

    async fn watch(
        &self,
        request: Request<HealthCheckRequest>,
    ) -> Result<Response<Self::WatchStream>, Status> {
        let name = request.get_ref().service.as_str();
        // Every stream ends when we stop (or are dropped).
        let mut stop = self.shared.stop.subscribe();
        let stopped = async move {
            let _ = stop.wait_for(|s| *s).await;
        };
        let Some(service) = self.shared.services.get(name) else {
            // The protocol: SERVICE_UNKNOWN, and the call stays open. The
            // mapping is fixed, so it stays unknown until we stop.
            let unknown = stream::once(async { Ok(response(ServingStatus::ServiceUnknown)) });
            let open = unknown.chain(stream::pending()).take_until(stopped);
            return Ok(Response::new(Box::pin(open)));
        };
        self.ensure_task();
        let rx = service.tx.subscribe();
        let stream = stream::unfold((rx, None), |(mut rx, last)| async move {
            loop {
                let current = rx.borrow_and_update().status;
                if let Some(status) = current
                    && Some(status) != last
                {
                    return Some((Ok(response(status)), (rx, Some(status))));
                }
                // Sender gone: the server is going away.
                rx.changed().await.ok()?;
            }
        });
        Ok(Response::new(Box::pin(stream.take_until(stopped))))
    }
}
