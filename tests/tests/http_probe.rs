//! `kind: http`, the upstream HTTP probe, against real servers on
//! 127.0.0.1 (plain tokio sockets writing HTTP/1.1 by hand): one that
//! refuses, one that hangs, one that answers 500, one that trickles, 200
//! with and without the body text, a redirect that is not followed, and
//! the URL's password kept out of every error.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;
use zb_health::prelude::{HealthRegistry, HealthStatus, Probe, ProbeRegistration, Tag};
use zb_health::probes::http::{BODY_LIMIT, HttpProbe};
use zb_health::report::{EntryOutcome, HealthReport};

/// Every probe's deadline in these tests.
const DEADLINE: Duration = Duration::from_millis(400);

/// A server on 127.0.0.1 that runs `answer` on each connection, counting
/// the requests it read.
struct Upstream {
    addr: SocketAddr,
    requests: Arc<AtomicUsize>,
    task: JoinHandle<()>,
}

impl Upstream {
    async fn start<F, Fut>(answer: F) -> Self
    where
        F: Fn(TcpStream) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let requests = Arc::new(AtomicUsize::new(0));
        let count = Arc::clone(&requests);
        let task = tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                read_request(&mut socket).await;
                count.fetch_add(1, Ordering::SeqCst);
                tokio::spawn(answer(socket));
            }
        });
        Self {
            addr,
            requests,
            task,
        }
    }

    /// A server that answers every request with `response` at once.
    async fn answering(response: &'static str) -> Self {
        Self::start(move |mut socket| async move {
            socket.write_all(response.as_bytes()).await.unwrap();
            let _ = socket.shutdown().await;
        })
        .await
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }
}

impl Drop for Upstream {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Reads up to the end of the request head.
async fn read_request(socket: &mut TcpStream) {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        match socket.read(&mut byte).await {
            Ok(1) => head.push(byte[0]),
            _ => return,
        }
    }
}

/// The probe's status, description and outcome in a registry of its own.
async fn run(probe: HttpProbe) -> (HealthStatus, Option<String>, EntryOutcome) {
    let reg = HealthRegistry::new();
    reg.add(ProbeRegistration::new("upstream", probe).timeout(DEADLINE))
        .unwrap();
    let report: HealthReport = reg.check(Tag::Ready).await;
    let e = &report.entries[0];
    (
        e.status,
        e.description.as_deref().map(str::to_owned),
        e.outcome,
    )
}

fn healthy() -> (HealthStatus, Option<String>, EntryOutcome) {
    (
        HealthStatus::Healthy,
        Some("upstream answered".to_owned()),
        EntryOutcome::Completed,
    )
}

fn failed() -> (HealthStatus, Option<String>, EntryOutcome) {
    (
        HealthStatus::Unhealthy,
        Some("check failed".to_owned()),
        EntryOutcome::Errored,
    )
}

fn timed_out() -> (HealthStatus, Option<String>, EntryOutcome) {
    (
        HealthStatus::Unhealthy,
        Some("timed out after 400 ms".to_owned()),
        EntryOutcome::TimedOut,
    )
}

const OK_UP: &str = "HTTP/1.1 200 OK\r\nContent-Length: 10\r\nConnection: close\r\n\r\nstatus: UP";

#[tokio::test]
async fn a_200_is_healthy_with_and_without_the_body_text() {
    let up = Upstream::answering(OK_UP).await;
    let probe = || HttpProbe::new(&up.url("/health")).unwrap();
    assert_eq!(run(probe()).await, healthy());
    assert_eq!(run(probe().body_contains("UP")).await, healthy());
    assert_eq!(run(probe().body_contains("DOWN")).await, failed());
    let error = probe().body_contains("DOWN").check().await.unwrap_err();
    assert!(error.to_string().contains("without `DOWN`"), "{error}");
    // Each run opened its own connection.
    assert_eq!(up.requests.load(Ordering::SeqCst), 4);
}

#[tokio::test]
async fn the_body_text_is_looked_for_in_the_first_body_limit_bytes_only() {
    let up = Upstream::start(|mut socket| async move {
        let body = format!("{}UP", " ".repeat(BODY_LIMIT));
        let head = format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n", body.len());
        socket.write_all(head.as_bytes()).await.unwrap();
        let _ = socket.write_all(body.as_bytes()).await;
    })
    .await;
    let probe = HttpProbe::new(&up.url("/")).unwrap().body_contains("UP");
    let error = probe.check().await.unwrap_err().to_string();
    assert!(
        error.contains(&format!("first {BODY_LIMIT} bytes")),
        "{error}"
    );
}

#[tokio::test]
async fn a_500_is_unhealthy_naming_the_code() {
    let up = Upstream::answering(
        "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
    )
    .await;
    let probe = || HttpProbe::new(&up.url("/health")).unwrap();
    assert_eq!(run(probe()).await, failed());
    let error = probe().check().await.unwrap_err().to_string();
    assert!(
        error.contains(&format!("GET {}: answered 500", up.url("/health"))),
        "{error}"
    );
}

#[tokio::test]
async fn a_redirect_is_not_followed_and_is_judged_by_the_range() {
    let up = Upstream::answering(
        "HTTP/1.1 302 Found\r\nLocation: /elsewhere\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
    )
    .await;
    let probe = || HttpProbe::new(&up.url("/health")).unwrap();
    let error = probe().check().await.unwrap_err().to_string();
    assert!(error.contains("answered 302"), "{error}");
    assert_eq!(up.requests.load(Ordering::SeqCst), 1, "not followed");
    assert_eq!(run(probe()).await, failed());
    assert_eq!(run(probe().status(200, 399).unwrap()).await, healthy());
    assert_eq!(up.requests.load(Ordering::SeqCst), 3, "never followed");
}

#[tokio::test]
async fn a_refusing_port_fails_as_an_error_naming_the_url_without_its_password() {
    let addr = {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        listener.local_addr().unwrap()
    };
    let url = format!("http://app:s3cret@{addr}/health?deep=1");
    assert_eq!(run(HttpProbe::new(&url).unwrap()).await, failed());
    let error = HttpProbe::new(&url)
        .unwrap()
        .check()
        .await
        .unwrap_err()
        .to_string();
    assert!(
        error.starts_with(&format!(
            "GET http://app:***@{addr}/health?deep=1: cannot connect"
        )),
        "{error}"
    );
    assert!(error.to_lowercase().contains("refused"), "{error}");
    assert!(!error.contains("s3cret"), "{error}");
}

#[tokio::test]
async fn a_server_that_accepts_and_never_answers_fails_at_the_deadline() {
    let up = Upstream::start(|socket| async move {
        // Hold the connection open, silent, until the client drops it.
        let mut socket = socket;
        let mut sink = [0u8; 64];
        while matches!(socket.read(&mut sink).await, Ok(n) if n > 0) {}
    })
    .await;
    assert_eq!(
        run(HttpProbe::new(&up.url("/")).unwrap()).await,
        timed_out()
    );
}

#[tokio::test]
async fn a_trickling_server_does_not_hold_the_probe_past_its_deadline() {
    // The head at once, then the body a byte per 100 ms: the whole answer
    // would take seconds, far past the 400 ms deadline.
    let up = Upstream::start(|mut socket| async move {
        let body = "x".repeat(100) + "UP";
        let head = format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n", body.len());
        if socket.write_all(head.as_bytes()).await.is_err() {
            return;
        }
        for b in body.bytes() {
            tokio::time::sleep(Duration::from_millis(100)).await;
            if socket.write_all(&[b]).await.is_err() {
                return;
            }
        }
    })
    .await;
    let probe = || HttpProbe::new(&up.url("/")).unwrap().body_contains("UP");
    assert_eq!(run(probe()).await, timed_out());
    // The head trickled too: the status never arrives in time.
    let slow_head = Upstream::start(|mut socket| async move {
        for b in OK_UP.bytes() {
            tokio::time::sleep(Duration::from_millis(100)).await;
            if socket.write_all(&[b]).await.is_err() {
                return;
            }
        }
    })
    .await;
    let probe = HttpProbe::new(&slow_head.url("/")).unwrap();
    assert_eq!(run(probe).await, timed_out());
}

#[test]
fn urls_it_cannot_call_are_refused_when_the_probe_is_made() {
    for (url, why) in [
        (
            "https://u:s3cret@h/x",
            "`https://u:***@h/x` is an `https` URL",
        ),
        ("not a url", "`not a url` is not a URL"),
        ("http://h:port/", "has a port that is not a number"),
    ] {
        let error = HttpProbe::new(url).unwrap_err().to_string();
        assert!(error.contains(why), "{url}: {error}");
        assert!(!error.contains("s3cret"), "{error}");
    }
    let probe = HttpProbe::new("http://h/").unwrap();
    assert!(probe.clone().status(300, 200).is_err());
    assert!(probe.status(200, 600).is_err());
}

// Port 1 on loopback: nothing listens there, so the connection is refused.
zb_health::prelude::manifest!(
    Upstreams,
    yaml = "service: s\nprobes:\n  - { name: inventory, kind: http, url: \"http://app:s3cret@127.0.0.1:1/health\", status: 200-399, body_contains: UP, timeout: 400ms }\n"
);

#[actix_web::test]
async fn a_manifest_line_alone_registers_the_probe_with_no_deps_field() {
    let registry = HealthRegistry::new();
    let _installed = Upstreams::install_into(&registry, UpstreamsDeps {}).unwrap();
    let meta = Upstreams::PROBES[0];
    assert_eq!((meta.name, meta.timeout()), ("inventory", DEADLINE));
    assert_eq!(meta.settings.tags, zb_health::prelude::TagSet::READY);
    let report = registry.check(Tag::Ready).await;
    let e = &report.entries[0];
    assert_eq!(
        (
            e.status,
            e.description.as_deref().map(str::to_owned),
            e.outcome
        ),
        failed()
    );
}
