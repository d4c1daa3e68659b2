//! The `grpc.health.v1` server (AT-7) over a real tonic client and server
//! on 127.0.0.1: `Check` and `Watch` follow a probe, many watchers cost no
//! extra probe executions, the drain turns every service `NOT_SERVING`
//! but one mapped to `live`,
//! unknown services are `NOT_FOUND` (Check) or `SERVICE_UNKNOWN` (Watch).
//!
//! The tests run on tokio's current-thread runtime: the test reads its
//! counters between polls, never in the middle of an evaluation, which is
//! what lets the execution counts be compared exactly.

mod support;

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::sync::{Semaphore, oneshot};
use tokio_stream::StreamExt;
use tokio_stream::wrappers::TcpListenerStream;
use tonic::Code;
use tonic::transport::Channel;
use zb_health::grpc::server::{GrpcHealth, GrpcTarget};
use zb_health::grpc::tonic_health::pb::health_check_response::ServingStatus;
use zb_health::grpc::tonic_health::pb::health_client::HealthClient;
use zb_health::grpc::tonic_health::pb::{HealthCheckRequest, HealthCheckResponse};
use zb_health::prelude::{
    HealthRegistry, ProbeRegistration, ProbeResult, Tag, TagSet, from_fn, map_zb_health,
};
use zb_health::spec::Rule;

/// How long any awaited condition may take before the test fails.
const DEADLINE: Duration = Duration::from_secs(10);

/// A probe that fails while `failing` is set and counts its executions.
#[derive(Clone, Default)]
struct Switch {
    failing: Arc<AtomicBool>,
    runs: Arc<AtomicUsize>,
}

impl Switch {
    fn registration(&self, name: &'static str, tags: TagSet) -> ProbeRegistration {
        let (failing, runs) = (self.failing.clone(), self.runs.clone());
        ProbeRegistration::new(
            name,
            from_fn(move || {
                runs.fetch_add(1, Ordering::SeqCst);
                let failing = failing.load(Ordering::SeqCst);
                async move {
                    if failing {
                        Err("db.internal:5432 refused".into())
                    } else {
                        Ok(ProbeResult::healthy())
                    }
                }
            }),
        )
        .tags(tags)
    }

    fn set_failing(&self, failing: bool) {
        self.failing.store(failing, Ordering::SeqCst);
    }

    fn runs(&self) -> u64 {
        self.runs.load(Ordering::SeqCst) as u64
    }
}

/// `health` served by tonic on 127.0.0.1 with an OS-chosen port.
struct Server {
    addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
}

impl Server {
    async fn start(health: &GrpcHealth) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (stop, stopped) = oneshot::channel::<()>();
        let service = health.server();
        tokio::spawn(async move {
            tonic::transport::Server::builder()
                .add_service(service)
                .serve_with_incoming_shutdown(TcpListenerStream::new(listener), async {
                    let _ = stopped.await;
                })
                .await
                .unwrap();
        });
        Self {
            addr,
            stop: Some(stop),
        }
    }

    async fn client(&self) -> HealthClient<Channel> {
        let channel = Channel::from_shared(format!("http://{}", self.addr))
            .unwrap()
            .connect()
            .await
            .unwrap();
        HealthClient::new(channel)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

fn request(service: &str) -> HealthCheckRequest {
    HealthCheckRequest {
        service: service.to_owned(),
    }
}

async fn check(client: &mut HealthClient<Channel>, service: &str) -> Result<ServingStatus, Code> {
    client
        .check(request(service))
        .await
        .map(|r| r.into_inner().status())
        .map_err(|s| s.code())
}

type Watch = tonic::Streaming<HealthCheckResponse>;

async fn watch(client: &mut HealthClient<Channel>, service: &str) -> Watch {
    client.watch(request(service)).await.unwrap().into_inner()
}

/// The next message of a stream, within the deadline.
async fn next(stream: &mut Watch) -> ServingStatus {
    tokio::time::timeout(DEADLINE, stream.next())
        .await
        .expect("a Watch message within the deadline")
        .expect("the stream is open")
        .expect("a message, not an error")
        .status()
}

/// Waits (with the deadline) until `cond` holds, yielding to the runtime.
async fn until(what: &str, mut cond: impl FnMut() -> bool) {
    tokio::time::timeout(DEADLINE, async {
        while !cond() {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .unwrap_or_else(|_| panic!("timed out waiting for {what}"));
}

fn health(registry: &HealthRegistry, period: Duration) -> GrpcHealth {
    GrpcHealth::builder(registry.clone())
        .service("plant.v1.Writes", GrpcTarget::Tier(Tag::Active))
        .service("plant.db", GrpcTarget::probe("database"))
        .period(period)
        .build()
        .unwrap()
}

#[tokio::test]
async fn check_and_watch_follow_a_probe_that_flips() {
    let registry = HealthRegistry::new();
    let db = Switch::default();
    registry
        .add(db.registration("database", TagSet::READY))
        .unwrap();
    let health = health(&registry, Duration::from_millis(20));
    let server = Server::start(&health).await;
    let mut client = server.client().await;

    let mut overall = watch(&mut client, "").await;
    let mut single = watch(&mut client, "plant.db").await;
    assert_eq!(next(&mut overall).await, ServingStatus::Serving);
    assert_eq!(next(&mut single).await, ServingStatus::Serving);
    assert_eq!(check(&mut client, "").await, Ok(ServingStatus::Serving));
    assert_eq!(
        check(&mut client, "plant.db").await,
        Ok(ServingStatus::Serving)
    );

    db.set_failing(true);
    // Check runs afresh, as an HTTP request does: no wait for the schedule.
    assert_eq!(check(&mut client, "").await, Ok(ServingStatus::NotServing));
    assert_eq!(
        check(&mut client, "plant.db").await,
        Ok(ServingStatus::NotServing)
    );
    assert_eq!(next(&mut overall).await, ServingStatus::NotServing);
    assert_eq!(next(&mut single).await, ServingStatus::NotServing);

    db.set_failing(false);
    // No Check this time: the schedule alone carries the recovery.
    assert_eq!(next(&mut overall).await, ServingStatus::Serving);
    assert_eq!(next(&mut single).await, ServingStatus::Serving);
    assert_eq!(check(&mut client, "").await, Ok(ServingStatus::Serving));
    // The active tier has no probes here: Healthy, whatever ready does.
    assert_eq!(
        check(&mut client, "plant.v1.Writes").await,
        Ok(ServingStatus::Serving)
    );
}

#[tokio::test]
async fn the_schedule_a_check_and_an_http_request_share_one_execution() {
    let registry = HealthRegistry::new();
    let runs = Arc::new(AtomicUsize::new(0));
    // Holds every execution until the test has seen all three callers
    // waiting on it.
    let gate = Arc::new(Semaphore::new(0));
    let (r, g) = (runs.clone(), gate.clone());
    registry
        .add(
            ProbeRegistration::new(
                "database",
                from_fn(move || {
                    r.fetch_add(1, Ordering::SeqCst);
                    let g = g.clone();
                    async move {
                        let _permit = g.acquire().await;
                        Ok(ProbeResult::healthy())
                    }
                }),
            )
            .timeout(DEADLINE),
        )
        .unwrap();
    // The schedule's first tick starts the flight at once.
    let health = health(&registry, Duration::from_secs(3600));
    let grpc = Server::start(&health).await;
    let http = support::serve(map_zb_health(registry.clone()));
    let mut client = grpc.client().await;
    let checked = tokio::spawn(async move { check(&mut client, "plant.db").await });
    let get = tokio::spawn(support::request(http.addr, "GET", "/health/ready"));
    until(
        "the schedule, the Check and the GET to wait on one flight",
        || waiting(&registry, "database") == 3,
    )
    .await;
    gate.add_permits(1);
    assert_eq!(checked.await.unwrap(), Ok(ServingStatus::Serving));
    assert_eq!(get.await.unwrap().status, 200);
    assert_eq!(
        runs.load(Ordering::SeqCst),
        1,
        "one execution for all three"
    );
}

/// Runs `watchers` Watch streams on `""` while the schedule ticks, and
/// returns (scheduled evaluations, probe executions) once at least `ticks`
/// evaluations have run.
async fn executions_with(watchers: usize, ticks: u64) -> (u64, u64) {
    let registry = HealthRegistry::new();
    let db = Switch::default();
    registry
        .add(db.registration("database", TagSet::READY))
        .unwrap();
    // The probe service reads its entry from the ready answer: no second
    // execution for it within a tick.
    let health = health(&registry, Duration::from_millis(10));
    let server = Server::start(&health).await;
    let mut streams = Vec::new();
    for i in 0..watchers {
        let mut client = server.client().await;
        let service = if i % 2 == 0 { "" } else { "plant.db" };
        let mut stream = watch(&mut client, service).await;
        assert_eq!(next(&mut stream).await, ServingStatus::Serving);
        streams.push((client, stream));
    }
    let start = health.scheduled_evaluations();
    until("the schedule to tick", || {
        health.scheduled_evaluations() >= start + ticks
    })
    .await;
    // Every stream is still open and current.
    for (_, stream) in &mut streams {
        assert!(
            tokio::time::timeout(Duration::ZERO, stream.next())
                .await
                .is_err(),
            "no message without a change"
        );
    }
    (health.scheduled_evaluations(), db.runs())
}

#[tokio::test]
async fn a_hundred_watchers_cost_no_more_probe_executions_than_one() {
    let (ticks_1, runs_1) = executions_with(1, 20).await;
    let (ticks_100, runs_100) = executions_with(100, 20).await;
    // Exactly one execution per schedule tick, however many watch: the
    // `ready` tier once, the `plant.db` service from its entry.
    assert_eq!(runs_1, ticks_1, "1 watcher");
    assert_eq!(runs_100, ticks_100, "100 watchers");
}

#[tokio::test]
async fn a_drain_turns_every_service_not_serving_at_once() {
    let registry = HealthRegistry::new();
    let db = Switch::default();
    registry
        .add(db.registration("database", TagSet::READY))
        .unwrap();
    // A schedule too slow to matter: the drain hook pushes the change.
    let health = health(&registry, Duration::from_secs(3600));
    let server = Server::start(&health).await;
    let mut client = server.client().await;
    let mut streams = Vec::new();
    for service in ["", "plant.v1.Writes", "plant.db"] {
        let mut stream = watch(&mut client, service).await;
        assert_eq!(next(&mut stream).await, ServingStatus::Serving, "{service}");
        streams.push(stream);
    }

    assert!(registry.lifecycle().begin_drain());
    for (stream, service) in streams.iter_mut().zip(["", "plant.v1.Writes", "plant.db"]) {
        assert_eq!(next(stream).await, ServingStatus::NotServing, "{service}");
        assert_eq!(
            check(&mut client, service).await,
            Ok(ServingStatus::NotServing),
            "{service}"
        );
    }
    // The probe itself is fine; only the drain says NOT_SERVING.
    assert!(!db.failing.load(Ordering::SeqCst));

    // `stop` ends the streams, so a graceful tonic shutdown is not held.
    health.stop();
    for stream in &mut streams {
        let end = tokio::time::timeout(DEADLINE, stream.next()).await.unwrap();
        assert!(end.is_none(), "the stream ends after stop: {end:?}");
    }
}

/// BE-HLTH-005, AT-7: a service mapped to `live` follows `live` through
/// the drain, as `/healthz` answers 200, so a gRPC liveness probe
/// (`zb-health k8s` makes one from that name) never restarts a draining pod.
#[tokio::test]
async fn a_service_mapped_to_live_stays_serving_through_the_drain() {
    let registry = HealthRegistry::new();
    let db = Switch::default();
    registry
        .add(db.registration("database", TagSet::READY))
        .unwrap();
    let health = GrpcHealth::builder(registry.clone())
        .service("plant.live", GrpcTarget::Tier(Tag::Live))
        .period(Duration::from_millis(20))
        .build()
        .unwrap();
    let server = Server::start(&health).await;
    let mut client = server.client().await;
    let mut live = watch(&mut client, "plant.live").await;
    let mut overall = watch(&mut client, "").await;
    assert_eq!(next(&mut live).await, ServingStatus::Serving);
    assert_eq!(next(&mut overall).await, ServingStatus::Serving);

    assert!(registry.lifecycle().begin_drain());
    assert_eq!(next(&mut overall).await, ServingStatus::NotServing);
    assert_eq!(check(&mut client, "").await, Ok(ServingStatus::NotServing));
    // Scheduled evaluations run on through the drain, for `live` alone.
    let seen = health.scheduled_evaluations();
    until("two evaluations during the drain", || {
        health.scheduled_evaluations() >= seen + 2
    })
    .await;
    assert_eq!(
        check(&mut client, "plant.live").await,
        Ok(ServingStatus::Serving)
    );
    assert_eq!(
        health.published("plant.live"),
        Some(Some(ServingStatus::Serving))
    );
    assert!(
        tokio::time::timeout(Duration::ZERO, live.next())
            .await
            .is_err(),
        "no NOT_SERVING on the live service"
    );
    // As over HTTP: `/healthz` 200 while `ready` is 503.
    assert_eq!(
        registry.answer(Tag::Live).await.status,
        zb_health::prelude::HealthStatus::Healthy
    );
    health.stop();
}

#[tokio::test]
async fn unknown_services_are_not_found_and_watch_says_service_unknown() {
    let registry = HealthRegistry::new();
    let health = GrpcHealth::builder(registry).build().unwrap();
    let server = Server::start(&health).await;
    let mut client = server.client().await;
    assert_eq!(check(&mut client, "").await, Ok(ServingStatus::Serving));
    assert_eq!(check(&mut client, "plant.nope").await, Err(Code::NotFound));
    let mut stream = watch(&mut client, "plant.nope").await;
    assert_eq!(next(&mut stream).await, ServingStatus::ServiceUnknown);
    // The call stays open, as the protocol asks.
    assert!(
        tokio::time::timeout(Duration::from_millis(50), stream.next())
            .await
            .is_err()
    );
    health.stop();
    let end = tokio::time::timeout(DEADLINE, stream.next()).await.unwrap();
    assert!(end.is_none());
}

#[tokio::test]
async fn the_builder_checks_the_mapping_against_the_rules() {
    let registry = HealthRegistry::new();
    let db = Switch::default();
    registry
        .add(db.registration("database", TagSet::READY))
        .unwrap();
    let err = GrpcHealth::builder(registry)
        .service("plant..db", GrpcTarget::probe("database"))
        .service("plant.db", GrpcTarget::probe("databse"))
        .service("plant.db", GrpcTarget::Tier(Tag::Ready))
        .period(Duration::ZERO)
        .build()
        .unwrap_err();
    assert_eq!(
        err.rules(),
        [
            Rule::DuplicateName,
            Rule::ProbeName,
            Rule::Unknown,
            Rule::Duration
        ]
    );
    assert!(err.to_string().contains("did you mean `database`"), "{err}");
}

#[tokio::test]
async fn the_schedule_ends_when_the_server_is_dropped() {
    let registry = HealthRegistry::new();
    let db = Switch::default();
    registry
        .add(db.registration("database", TagSet::READY))
        .unwrap();
    let health = health(&registry, Duration::from_millis(5));
    until("a first evaluation", || health.scheduled_evaluations() >= 1).await;
    drop(health);
    // Stopped: the run count settles. Observe it across many periods.
    let settled = db.runs();
    let mut extra = 0;
    for _ in 0..20 {
        tokio::time::sleep(Duration::from_millis(5)).await;
        extra = db.runs() - settled;
    }
    assert_eq!(extra, 0, "no execution after the drop");
}

/// A custom probe whose name only its attribute states, so `manifest!`
/// checks the gRPC probe target in generated code.
#[zb_health::prelude::zb_health(name = "ledger", tags = [active], timeout = "200ms")]
struct LedgerProbe;

impl zb_health::prelude::Probe for LedgerProbe {
    async fn check(&self) -> zb_health::prelude::ProbeOutcome {
        Err("ledger.internal refused".into())
    }
}

zb_health::prelude::manifest!(
    GrpcManifest,
    yaml = r#"
service: plant
grpc:
  period: 50ms
  services:
    "": live
    plant.v1.Writes: active
    plant.ledger: { probe: ledger }
probes:
  - { kind: custom, type: LedgerProbe }
"#
);

#[tokio::test]
async fn the_manifest_maps_services_and_period() {
    assert_eq!(GrpcManifest::GRPC_PERIOD, Duration::from_millis(50));
    let registry = HealthRegistry::new();
    GrpcManifest::install_into(
        &registry,
        GrpcManifestDeps {
            ledger_probe: LedgerProbe,
        },
    )
    .unwrap();
    let health = GrpcManifest::grpc(&registry).unwrap();
    let server = Server::start(&health).await;
    let mut client = server.client().await;
    // `""` is mapped to `live` here (no watchdogs: serving), the others
    // answer from the failing ledger probe.
    assert_eq!(check(&mut client, "").await, Ok(ServingStatus::Serving));
    assert_eq!(
        check(&mut client, "plant.v1.Writes").await,
        Ok(ServingStatus::NotServing)
    );
    assert_eq!(
        check(&mut client, "plant.ledger").await,
        Ok(ServingStatus::NotServing)
    );
    assert_eq!(check(&mut client, "ledger").await, Err(Code::NotFound));
    // Building it before `install` finds no such probe: R4 at run time.
    let err = GrpcManifest::grpc(&HealthRegistry::new()).unwrap_err();
    assert_eq!(err.rules(), [Rule::Unknown]);
}

/// Requests waiting on `name`'s execution in flight (0 with none).
fn waiting(registry: &HealthRegistry, name: &str) -> usize {
    registry
        .in_flight()
        .iter()
        .find(|f| &*f.name == name)
        .map_or(0, |f| f.waiting)
}

zb_health::prelude::manifest!(
    K8sGrpcProbes = "../../zb-health-cli/tests/fixtures/k8s/grpc-probes.yaml"
);

/// The `grpc` probes `zb-health k8s --grpc-probes` prints for the fixture
/// (its snapshot, which zb-health-cli/tests/k8s.rs holds equal to the
/// output): each probe key with the service name it asks.
fn printed_grpc_probes() -> Vec<(String, String)> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../zb-health-cli/tests/snapshots/k8s/grpc-probes.yaml");
    let yaml = std::fs::read_to_string(&path).expect("the snapshot is readable");
    let (mut key, mut in_grpc, mut found) = (String::new(), false, Vec::new());
    for line in yaml.lines().map(str::trim) {
        if let Some(k) = line.strip_suffix("Probe:") {
            (key, in_grpc) = (format!("{k}Probe"), false);
        } else if line == "grpc:" {
            in_grpc = true;
        } else if let (true, Some(service)) = (in_grpc, line.strip_prefix("service: ")) {
            found.push((key.clone(), service.trim_matches('"').to_owned()));
        }
    }
    found
}

/// What `zb-health k8s --grpc-probes` tells the kubelet to ask is what the
/// manifest's own `grpc.health.v1` server answers: every printed name is
/// known, and `SERVING` once the pod has started. While it starts, the
/// readiness name is `NOT_SERVING` and the liveness one `SERVING`.
#[tokio::test]
async fn the_names_zb_health_k8s_grpc_probes_prints_answer_serving() {
    let probes = printed_grpc_probes();
    let keys: Vec<&str> = probes.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(keys, ["livenessProbe", "readinessProbe"], "{probes:?}");
    let registry = HealthRegistry::new();
    let installed = K8sGrpcProbes::install_into(&registry, K8sGrpcProbesDeps {}).unwrap();
    let mut warm_up = Some(installed.startup.warm_up);
    let health = K8sGrpcProbes::grpc(&registry).unwrap();
    let server = Server::start(&health).await;
    let mut client = server.client().await;
    let expect = |key: &str, started: bool| match key {
        "readinessProbe" if !started => ServingStatus::NotServing,
        _ => ServingStatus::Serving,
    };
    for started in [false, true] {
        if let Some(gate) = warm_up.take_if(|_| started) {
            gate.ready();
        }
        for (key, service) in &probes {
            let want = expect(key, started);
            let deadline = tokio::time::Instant::now() + DEADLINE;
            loop {
                let got = check(&mut client, service).await;
                if got == Ok(want) {
                    break;
                }
                assert!(
                    tokio::time::Instant::now() < deadline,
                    "{key} asks `{service}`: {got:?}, want {want:?} (started: {started})"
                );
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        }
    }
}
