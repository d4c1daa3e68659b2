//! The gRPC dependency probe (ZB-2.4) against a real tonic server on
//! 127.0.0.1 serving `grpc.health.v1`: serving, stopped, `NOT_SERVING`,
//! restarted on the same port, never listening; and what reaches the HTTP
//! body (BE-HLTH-007).

mod support;

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use support::{request, serve};
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tokio_stream::StreamExt;
use tokio_stream::wrappers::TcpListenerStream;
use tonic_health::ServingStatus;
use tonic_health::server::HealthReporter;
use zb_health::grpc::GrpcDependencyProbe;
use zb_health::grpc::tonic::transport::Endpoint;
use zb_health::grpc::tonic_health::pb::HealthCheckRequest;
use zb_health::grpc::tonic_health::pb::health_check_response::ServingStatus::Serving;
use zb_health::grpc::tonic_health::pb::health_client::HealthClient;
use zb_health::prelude::{
    HealthRegistry, HealthStatus, Probe, ProbeRegistration, Tag, map_zb_health,
};
use zb_health::report::{EntryOutcome, HealthReport};

// The probe's fixed descriptions: the body's contract, so a change of
// wording fails here.
const REACHABLE_DESCRIPTION: &str = "gRPC dependency reachable";
const SERVING_DESCRIPTION: &str = "gRPC dependency serving";
const NOT_SERVING_DESCRIPTION: &str = "gRPC dependency not serving";
/// A failed check's fixed description (BE-HLTH-007).
const ERRORED_DESCRIPTION: &str = "check failed";

/// Every probe's deadline in these tests.
const TIMEOUT: Duration = Duration::from_secs(1);

/// A tonic server serving only `grpc.health.v1.Health`.
struct Upstream {
    addr: SocketAddr,
    reporter: HealthReporter,
    /// Connections the server accepted, to prove channel reuse.
    accepted: Arc<AtomicUsize>,
    stop: oneshot::Sender<()>,
    task: JoinHandle<()>,
}

impl Upstream {
    /// Serves on 127.0.0.1 with an OS-chosen port.
    async fn start() -> Self {
        Self::on(TcpListener::bind("127.0.0.1:0").await.unwrap())
    }

    /// Serves on `addr` again, retrying briefly while the old socket lets go.
    async fn restart_on(addr: SocketAddr) -> Self {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            match TcpListener::bind(addr).await {
                Ok(listener) => return Self::on(listener),
                Err(e) if Instant::now() < deadline => {
                    eprintln!("rebinding {addr}: {e}; retrying");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                Err(e) => panic!("could not rebind {addr}: {e}"),
            }
        }
    }

    fn on(listener: TcpListener) -> Self {
        let addr = listener.local_addr().unwrap();
        let (reporter, service) = tonic_health::server::health_reporter();
        let accepted = Arc::new(AtomicUsize::new(0));
        let counter = accepted.clone();
        let incoming = TcpListenerStream::new(listener).map(move |conn| {
            counter.fetch_add(1, Ordering::SeqCst);
            conn
        });
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            tonic::transport::Server::builder()
                .add_service(service)
                .serve_with_incoming_shutdown(incoming, async {
                    let _ = stopped.await;
                })
                .await
                .unwrap();
        });
        Self {
            addr,
            reporter,
            accepted,
            stop,
            task,
        }
    }

    /// The endpoint a client uses to reach this server.
    fn endpoint(&self) -> Endpoint {
        endpoint(self.addr)
    }

    /// Shuts the server down gracefully: the listener is closed and every
    /// connection, including the probe's, is gone when this returns.
    async fn stop(self) {
        let _ = self.stop.send(());
        tokio::time::timeout(Duration::from_secs(5), self.task)
            .await
            .expect("the server did not shut down within 5 s")
            .unwrap();
    }
}

fn endpoint(addr: SocketAddr) -> Endpoint {
    Endpoint::from_shared(format!("http://{addr}")).unwrap()
}

/// A registry holding `probes`, each under [`TIMEOUT`].
fn registry(probes: Vec<(&'static str, GrpcDependencyProbe)>) -> HealthRegistry {
    let reg = HealthRegistry::new();
    for (name, probe) in probes {
        reg.add(ProbeRegistration::new(name, probe).timeout(TIMEOUT))
            .unwrap();
    }
    reg
}

/// The default "connect" probe and the grpc.health.v1 delegate, both
/// aimed at `addr`.
fn connect_and_health(addr: SocketAddr) -> HealthRegistry {
    registry(vec![
        ("upstream", GrpcDependencyProbe::new(endpoint(addr))),
        (
            "upstream-health",
            GrpcDependencyProbe::grpc_health(endpoint(addr), ""),
        ),
    ])
}

/// `(status, description, outcome)` of the entry named `name`.
fn entry(report: &HealthReport, name: &str) -> (HealthStatus, Option<String>, EntryOutcome) {
    let e = report.entries.iter().find(|e| &*e.name == name).unwrap();
    (
        e.status,
        e.description.as_deref().map(str::to_owned),
        e.outcome,
    )
}

fn healthy(description: &str) -> (HealthStatus, Option<String>, EntryOutcome) {
    (
        HealthStatus::Healthy,
        Some(description.to_owned()),
        EntryOutcome::Completed,
    )
}

fn failed() -> (HealthStatus, Option<String>, EntryOutcome) {
    (
        HealthStatus::Unhealthy,
        Some(ERRORED_DESCRIPTION.to_owned()),
        EntryOutcome::Errored,
    )
}

#[tokio::test]
async fn a_serving_server_is_healthy_by_connect_and_by_grpc_health() {
    let upstream = Upstream::start().await;
    let reg = connect_and_health(upstream.addr);
    let report = reg.check(Tag::Ready).await;
    assert_eq!(report.status, HealthStatus::Healthy, "{report:?}");
    assert_eq!(entry(&report, "upstream"), healthy(REACHABLE_DESCRIPTION));
    assert_eq!(
        entry(&report, "upstream-health"),
        healthy(SERVING_DESCRIPTION)
    );
    upstream.stop().await;
}

#[tokio::test]
/// A refused connection is reported as the probe's own error (`Errored`),
/// not by the executor's deadline (`TimedOut`): the failure is known at
/// once, so the answer does not wait for the deadline. The time taken is
/// printed, never asserted.
async fn a_stopped_server_fails_as_an_error_not_at_the_deadline() {
    let upstream = Upstream::start().await;
    let addr = upstream.addr;
    let reg = connect_and_health(addr);
    // Healthy first, so the delegate's channel holds a live connection
    // that the shutdown then takes away.
    assert_eq!(reg.check(Tag::Ready).await.status, HealthStatus::Healthy);
    upstream.stop().await;

    let started = Instant::now();
    let report = reg.check(Tag::Ready).await;
    let elapsed = started.elapsed();
    eprintln!("stopped server -> Unhealthy in {elapsed:?} (probe timeout {TIMEOUT:?})");
    assert_eq!(report.status, HealthStatus::Unhealthy, "{report:?}");
    assert_eq!(entry(&report, "upstream"), failed());
    assert_eq!(entry(&report, "upstream-health"), failed());
}

#[tokio::test]
async fn not_serving_fails_the_health_delegates_but_not_the_connect_check() {
    let upstream = Upstream::start().await;
    upstream
        .reporter
        .set_service_status("", ServingStatus::NotServing)
        .await;
    // A caller-supplied delegate over the shared channel, the spec's
    // Func<GrpcChannel, CancellationToken, Task<bool>>.
    let custom = GrpcDependencyProbe::with_check(upstream.endpoint(), |channel| async move {
        let reply = HealthClient::new(channel)
            .check(HealthCheckRequest {
                service: String::new(),
            })
            .await?;
        Ok(reply.into_inner().status == Serving as i32)
    });
    let reg = registry(vec![
        ("upstream", GrpcDependencyProbe::new(upstream.endpoint())),
        (
            "upstream-health",
            GrpcDependencyProbe::grpc_health(upstream.endpoint(), ""),
        ),
        ("upstream-custom", custom),
        // A service the server does not know is an RPC error (NOT_FOUND).
        (
            "upstream-unknown",
            GrpcDependencyProbe::grpc_health(upstream.endpoint(), "no.such.Service"),
        ),
    ]);
    let report = reg.check(Tag::Ready).await;
    let not_serving = (
        HealthStatus::Unhealthy,
        Some(NOT_SERVING_DESCRIPTION.to_owned()),
        EntryOutcome::Completed,
    );
    assert_eq!(report.status, HealthStatus::Unhealthy);
    assert_eq!(entry(&report, "upstream"), healthy(REACHABLE_DESCRIPTION));
    assert_eq!(entry(&report, "upstream-health"), not_serving);
    assert_eq!(entry(&report, "upstream-custom"), not_serving);
    assert_eq!(entry(&report, "upstream-unknown"), failed());

    // Back to SERVING: the same probes recover.
    upstream
        .reporter
        .set_service_status("", ServingStatus::Serving)
        .await;
    let report = reg.check(Tag::Ready).await;
    assert_eq!(
        entry(&report, "upstream-health"),
        healthy(SERVING_DESCRIPTION)
    );
    assert_eq!(
        entry(&report, "upstream-custom"),
        healthy(SERVING_DESCRIPTION)
    );
    upstream.stop().await;
}

#[tokio::test]
async fn a_server_restarted_on_the_same_port_is_healthy_again_with_the_same_probes() {
    let upstream = Upstream::start().await;
    let addr = upstream.addr;
    let reg = connect_and_health(addr);
    assert_eq!(reg.check(Tag::Ready).await.status, HealthStatus::Healthy);
    upstream.stop().await;
    assert_eq!(reg.check(Tag::Ready).await.status, HealthStatus::Unhealthy);
    // A second failing run, so recovery is not an artefact of one failure.
    assert_eq!(reg.check(Tag::Ready).await.status, HealthStatus::Unhealthy);

    let upstream = Upstream::restart_on(addr).await;
    let restarted = Instant::now();
    let mut report = reg.check(Tag::Ready).await;
    while report.status != HealthStatus::Healthy && restarted.elapsed() < Duration::from_secs(5) {
        tokio::time::sleep(Duration::from_millis(50)).await;
        report = reg.check(Tag::Ready).await;
    }
    eprintln!("restarted server -> Healthy in {:?}", restarted.elapsed());
    assert_eq!(entry(&report, "upstream"), healthy(REACHABLE_DESCRIPTION));
    assert_eq!(
        entry(&report, "upstream-health"),
        healthy(SERVING_DESCRIPTION)
    );
    upstream.stop().await;
}

#[tokio::test]
async fn one_lazy_channel_is_reused_across_runs_and_survives_cancellation() {
    let upstream = Upstream::start().await;
    let hang_once = Arc::new(AtomicBool::new(true));
    let hang = hang_once.clone();
    // The first run completes an RPC, then opens a Watch stream and waits
    // on it past the deadline, so it is cancelled mid-call.
    let probe = GrpcDependencyProbe::with_check(upstream.endpoint(), move |channel| {
        let hang = hang.swap(false, Ordering::SeqCst);
        async move {
            let mut client = HealthClient::new(channel);
            let reply = client
                .check(HealthCheckRequest {
                    service: String::new(),
                })
                .await?;
            if hang {
                let mut watch = client
                    .watch(HealthCheckRequest {
                        service: String::new(),
                    })
                    .await?
                    .into_inner();
                while watch.message().await?.is_some() {}
            }
            Ok(reply.into_inner().status == Serving as i32)
        }
    });
    let reg = HealthRegistry::new();
    reg.add(ProbeRegistration::new("upstream", probe).timeout(Duration::from_millis(300)))
        .unwrap();

    let cancelled = reg.check(Tag::Ready).await;
    assert_eq!(cancelled.entries[0].outcome, EntryOutcome::TimedOut);
    assert!(!hang_once.load(Ordering::SeqCst));
    for _ in 0..5 {
        let report = reg.check(Tag::Ready).await;
        assert_eq!(entry(&report, "upstream"), healthy(SERVING_DESCRIPTION));
    }
    assert_eq!(
        upstream.accepted.load(Ordering::SeqCst),
        1,
        "the channel was not reused"
    );
    upstream.stop().await;
}

#[tokio::test]
async fn the_connect_check_opens_a_fresh_connection_each_run() {
    // What makes it detect a dead server: no cached "ready" state.
    let upstream = Upstream::start().await;
    let reg = registry(vec![(
        "upstream",
        GrpcDependencyProbe::new(upstream.endpoint()),
    )]);
    for _ in 0..3 {
        assert_eq!(reg.check(Tag::Ready).await.status, HealthStatus::Healthy);
    }
    // The client's connect completes on the kernel's handshake; the server
    // may count the last accept a moment later.
    let deadline = Instant::now() + Duration::from_secs(2);
    while upstream.accepted.load(Ordering::SeqCst) < 3 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(upstream.accepted.load(Ordering::SeqCst), 3);
    upstream.stop().await;
}

#[tokio::test]
async fn a_hung_server_passes_connect_but_fails_grpc_health_by_its_deadline() {
    // Listening but never accepting: the kernel still completes TCP
    // handshakes, which is all "connect" can see; the RPC never answers.
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let reg = HealthRegistry::new();
    let deadline = Duration::from_millis(300);
    for (name, probe) in [
        ("upstream", GrpcDependencyProbe::new(endpoint(addr))),
        (
            "upstream-health",
            GrpcDependencyProbe::grpc_health(endpoint(addr), ""),
        ),
    ] {
        reg.add(ProbeRegistration::new(name, probe).timeout(deadline))
            .unwrap();
    }
    let started = Instant::now();
    let report = reg.check(Tag::Ready).await;
    let elapsed = started.elapsed();
    assert_eq!(entry(&report, "upstream"), healthy(REACHABLE_DESCRIPTION));
    let (status, description, outcome) = entry(&report, "upstream-health");
    assert_eq!(
        (status, outcome),
        (HealthStatus::Unhealthy, EntryOutcome::TimedOut)
    );
    assert_eq!(description.as_deref(), Some("timed out after 300 ms"));
    eprintln!("hung server -> TimedOut in {elapsed:?} (deadline {deadline:?})");
    drop(listener);
}

#[actix_web::test]
async fn an_address_that_never_listens_fails_as_an_error_and_leaks_nothing_into_the_body() {
    let addr = {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        listener.local_addr().unwrap()
    };
    let reg = connect_and_health(addr);
    let started = Instant::now();
    let report = reg.check(Tag::Ready).await;
    let elapsed = started.elapsed();
    eprintln!("never-listening address -> Unhealthy in {elapsed:?}");
    assert_eq!(
        entry(&report, "upstream"),
        failed(),
        "a refusal is an error, not a hang"
    );
    assert_eq!(entry(&report, "upstream-health"), failed());

    // The real cause goes to the log: the error says why.
    let error = GrpcDependencyProbe::new(endpoint(addr))
        .check()
        .await
        .unwrap_err()
        .to_string();
    assert!(error.to_lowercase().contains("refused"), "{error}");

    let server = serve(map_zb_health(reg));
    let ready = request(server.addr, "GET", "/health/ready").await;
    assert_eq!(ready.status, 503);
    let body = String::from_utf8(ready.body.clone()).unwrap();
    let json = ready.json();
    for name in ["upstream", "upstream-health"] {
        assert_eq!(
            json["entries"][name]["description"], ERRORED_DESCRIPTION,
            "{body}"
        );
    }
    let port = format!(":{}", addr.port());
    for leak in [
        "127.0.0.1",
        port.as_str(),
        "transport",
        "refused",
        "tcp connect",
        "os error",
        "http://",
    ] {
        assert!(
            !body.to_lowercase().contains(leak),
            "{leak:?} leaked into {body}"
        );
    }
}
