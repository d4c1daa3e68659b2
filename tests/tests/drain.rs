//! The shutdown drain (BE-HLTH-005, AT-6) and the startup gate
//! (BE-HLTH-004) in a real child process (`src/bin/drain_service.rs`)
//! stopped by a real SIGTERM, observed over real sockets.
//!
//! The child reports events on stdout and takes commands on stdin, so each
//! assertion is about order (this happened, then that), waited for with a
//! deadline, never about how long something took.

#![cfg(unix)]

mod support;

use std::io::{BufRead, BufReader, Write};
use std::net::SocketAddr;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::time::Duration;

use serde_json::Value;
use support::{Wire, assert_canonical, request, try_request};
use tokio::sync::mpsc;
use tokio::time::timeout;

/// Generous: only a broken drain gets near it.
const DEADLINE: Duration = Duration::from_secs(30);

/// The child, killed if the test fails before it exits.
struct Service {
    child: Child,
    stdin: ChildStdin,
    events: mpsc::UnboundedReceiver<String>,
    addr: SocketAddr,
}

impl Drop for Service {
    fn drop(&mut self) {
        // Only this test's own child, by its handle.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Service {
    async fn start(envs: &[(&str, &str)]) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_drain-service"))
            .envs(envs.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("spawn drain-service");
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, events) = mpsc::unbounded_channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut service = Self {
            child,
            stdin,
            events,
            addr: "127.0.0.1:0".parse().unwrap(),
        };
        let line = service.next_event().await;
        service.addr = line
            .strip_prefix("listening ")
            .unwrap_or_else(|| panic!("first event is the address, got {line:?}"))
            .parse()
            .unwrap();
        service
    }

    async fn next_event(&mut self) -> String {
        timeout(DEADLINE, self.events.recv())
            .await
            .expect("an event before the deadline")
            .expect("the child's stdout is open")
    }

    /// The next event, `<what> <addr>`: a second server's address.
    async fn address_event(&mut self, what: &str) -> SocketAddr {
        let line = self.next_event().await;
        line.strip_prefix(what)
            .and_then(|rest| rest.strip_prefix(' '))
            .and_then(|addr| addr.parse().ok())
            .unwrap_or_else(|| panic!("the next event is the {what} address, got {line:?}"))
    }

    async fn expect_event(&mut self, want: &str) {
        let got = self.next_event().await;
        assert_eq!(got, want, "events arrive in order");
    }

    fn command(&mut self, line: &str) {
        writeln!(self.stdin, "{line}").unwrap();
        self.stdin.flush().unwrap();
    }

    fn signal(&self, name: &str) {
        let status = Command::new("kill")
            .args([&format!("-{name}"), &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success(), "kill -{name}");
    }

    async fn get(&self, path: &str) -> Wire {
        request(self.addr, "GET", path).await
    }

    /// Polls `path` until it answers `status`; returns that answer.
    async fn until_status(&self, path: &str, status: u16) -> Wire {
        support::until_status(self.addr, path, status).await
    }

    /// Polls until a new request is no longer served: the graceful stop
    /// has closed the listener.
    async fn until_refused(&self) {
        timeout(DEADLINE, async {
            while try_request(self.addr, "GET", "/hello").await.is_ok() {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        })
        .await
        .expect("the server stops accepting");
    }

    async fn exit_status(&mut self) -> ExitStatus {
        let deadline = tokio::time::Instant::now() + DEADLINE;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(tokio::time::Instant::now() < deadline, "the child exits");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}

/// The entry names of a tier's body, in order, with status and description.
fn entries(wire: &Wire) -> Vec<(String, String, Value)> {
    let body = wire.json();
    assert_canonical(&body);
    body["entries"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| {
            (
                k.clone(),
                v["status"].as_str().unwrap().to_owned(),
                v["description"].clone(),
            )
        })
        .collect()
}

fn first_entry(wire: &Wire) -> (String, String, Value) {
    entries(wire).remove(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_drains_ready_first_serves_on_then_finishes_in_flight_work_and_exits_0() {
    // A long delay, cut short by a second SIGTERM: the drain window stays
    // open for as long as the test looks at it.
    let mut service = Service::start(&[("DRAIN_DELAY_MS", "600000")]).await;

    // Starting: ready and active 503 with the startup entry first, live 200.
    for path in ["/health/ready", "/health/active"] {
        let wire = service.get(path).await;
        assert_eq!(wire.status, 503, "{path} while starting");
        assert_eq!(
            first_entry(&wire),
            ("startup".into(), "Unhealthy".into(), "starting".into())
        );
    }
    assert_eq!(service.get("/healthz").await.status, 200);

    // Started.
    service.command("ready");
    let ready = service.until_status("/health/ready", 200).await;
    assert_eq!(
        entries(&ready)
            .iter()
            .map(|e| e.0.as_str())
            .collect::<Vec<_>>(),
        ["database"],
        "no lifecycle entry once started"
    );
    assert_eq!(service.get("/health/active").await.status, 200);

    // A slow request in flight before the signal.
    let addr = service.addr;
    let slow = tokio::spawn(async move { try_request(addr, "GET", "/slow").await });
    service.expect_event("slow started").await;

    // (1) SIGTERM: ready and active turn 503 with the shutdown entry first,
    // the drain hook has run, live stays 200.
    service.signal("TERM");
    let ready = service.until_status("/health/ready", 503).await;
    assert_eq!(
        first_entry(&ready),
        ("shutdown".into(), "Unhealthy".into(), "draining".into())
    );
    service.expect_event("drain hook ran").await;
    let active = service.get("/health/active").await;
    assert_eq!(active.status, 503);
    assert_eq!(first_entry(&active).0, "shutdown");
    assert_eq!(service.get("/healthz").await.status, 200);

    // (2) The drain window: new requests are still served.
    let hello = service.get("/hello").await;
    assert_eq!((hello.status, hello.body.as_slice()), (200, &b"hello"[..]));
    assert!(!slow.is_finished(), "the slow request is still in flight");

    // (3) The delay ends (second signal); the listener closes while the
    // slow request is still running, and the request still completes.
    service.signal("TERM");
    service.until_refused().await;
    assert!(!slow.is_finished(), "still in flight after the stop began");
    service.command("release");
    let slow = timeout(DEADLINE, slow).await.unwrap().unwrap().unwrap();
    assert_eq!(
        (slow.status, slow.body.as_slice()),
        (200, &b"slow done"[..])
    );

    // (4) The run call returns Ok and the process exits 0.
    service.expect_event("exited").await;
    let status = service.exit_status().await;
    assert_eq!(status.code(), Some(0), "{status}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_drain_delay_ends_by_itself_and_the_stop_is_graceful() {
    let mut service = Service::start(&[("DRAIN_DELAY_MS", "200"), ("START_READY", "1")]).await;
    service.until_status("/health/ready", 200).await;
    let addr = service.addr;
    let slow = tokio::spawn(async move { try_request(addr, "GET", "/slow").await });
    service.expect_event("slow started").await;

    service.signal("TERM");
    service.expect_event("drain hook ran").await;
    // No second signal: the delay runs out and the stop begins on its own.
    service.until_refused().await;
    assert!(!slow.is_finished(), "in flight when the stop began");
    service.command("release");
    let slow = timeout(DEADLINE, slow).await.unwrap().unwrap().unwrap();
    assert_eq!(slow.status, 200);
    service.expect_event("exited").await;
    assert_eq!(service.exit_status().await.code(), Some(0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigint_drains_like_sigterm() {
    let mut service = Service::start(&[("DRAIN_DELAY_MS", "600000"), ("START_READY", "1")]).await;
    service.until_status("/health/ready", 200).await;
    service.signal("INT");
    service.expect_event("drain hook ran").await;
    let ready = service.get("/health/ready").await;
    assert_eq!(ready.status, 503);
    assert_eq!(first_entry(&ready).0, "shutdown");
    assert_eq!(service.get("/healthz").await.status, 200);
    service.signal("INT");
    service.expect_event("exited").await;
    assert_eq!(service.exit_status().await.code(), Some(0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_a_management_server_both_ports_drain_and_health_outlives_the_application() {
    let mut service = Service::start(&[
        ("DRAIN_DELAY_MS", "600000"),
        ("START_READY", "1"),
        ("MANAGEMENT", "1"),
    ])
    .await;
    let management = service.address_event("management").await;
    service.until_status("/health/ready", 200).await;
    let get = |path: &'static str| async move {
        timeout(DEADLINE, request(management, "GET", path))
            .await
            .expect("the management port answers")
    };
    assert_eq!(get("/health/ready").await.status, 200);
    let addr = service.addr;
    let slow = tokio::spawn(async move { try_request(addr, "GET", "/slow").await });
    service.expect_event("slow started").await;

    // One registry: the drain shows on both ports at once.
    service.signal("TERM");
    service.expect_event("drain hook ran").await;
    for (ready, live) in [
        (
            service.get("/health/ready").await,
            service.get("/healthz").await,
        ),
        (get("/health/ready").await, get("/healthz").await),
    ] {
        assert_eq!(ready.status, 503);
        assert_eq!(first_entry(&ready).0, "shutdown");
        assert_eq!(live.status, 200);
    }

    // The application stops first: while its graceful stop waits for the
    // slow request, the management port still answers.
    service.signal("TERM");
    service.until_refused().await;
    assert!(!slow.is_finished());
    assert_eq!(get("/healthz").await.status, 200);
    service.command("release");
    let slow = timeout(DEADLINE, slow).await.unwrap().unwrap().unwrap();
    assert_eq!(slow.status, 200);
    service.expect_event("exited").await;
    assert_eq!(service.exit_status().await.code(), Some(0));
    assert!(try_request(management, "GET", "/healthz").await.is_err());
}

/// `grpc.health.v1` `Check(service)` on `addr`, off the runtime (the
/// testkit client blocks).
async fn grpc(addr: SocketAddr, service: &'static str) -> zb_health_testkit::GrpcAnswer {
    tokio::task::spawn_blocking(move || zb_health_testkit::grpc_check(addr.port(), service))
        .await
        .unwrap()
}

/// BE-HLTH-005, AT-7, under the manifest's own `server`: through the
/// drain a gRPC service mapped to `live` stays SERVING while `""` (ready)
/// turns NOT_SERVING, and the gRPC server answers for as long as HTTP
/// does: still while the HTTP graceful stop waits for a slow request,
/// after the drain delay has ended.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn under_the_server_grpc_live_stays_serving_and_grpc_answers_until_http_stops() {
    let mut service = Service::start(&[
        ("SERVER", "1"),
        // Fits the manifest's 120 s grace period with its 30 s stop (R18).
        ("DRAIN_DELAY_MS", "200"),
        ("START_READY", "1"),
    ])
    .await;
    let grpc_addr = service.address_event("grpc").await;
    use zb_health_testkit::ServingStatus::{NotServing, Serving};
    service.until_status("/health/ready", 200).await;
    assert_eq!(grpc(grpc_addr, "").await, Ok(Serving));
    assert_eq!(grpc(grpc_addr, "drain.live").await, Ok(Serving));
    let addr = service.addr;
    let slow = tokio::spawn(async move { try_request(addr, "GET", "/slow").await });
    service.expect_event("slow started").await;

    service.signal("TERM");
    service.expect_event("drain hook ran").await;
    assert_eq!(grpc(grpc_addr, "").await, Ok(NotServing));
    assert_eq!(
        grpc(grpc_addr, "drain.live").await,
        Ok(Serving),
        "live stays SERVING, as /healthz stays 200"
    );
    assert_eq!(service.get("/healthz").await.status, 200);

    // The delay is over and the HTTP listener closed; the graceful stop
    // waits for the slow request, and gRPC still answers.
    service.until_refused().await;
    assert!(!slow.is_finished(), "still in flight");
    assert_eq!(grpc(grpc_addr, "drain.live").await, Ok(Serving));
    assert_eq!(grpc(grpc_addr, "").await, Ok(NotServing));

    service.command("release");
    let slow = timeout(DEADLINE, slow).await.unwrap().unwrap().unwrap();
    assert_eq!(slow.status, 200);
    service.expect_event("exited").await;
    assert_eq!(service.exit_status().await.code(), Some(0));
}
