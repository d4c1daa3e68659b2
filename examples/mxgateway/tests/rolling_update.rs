//! A rolling update behind a Service, with clients that keep their
//! connections alive (BE-HLTH-005): no request is lost.
//!
//! The Service is modelled as kube-proxy runs one: its endpoints are the
//! pods whose readiness answers 200, as a watcher last saw them. Eight
//! clients each keep one HTTP/1.1 keep-alive connection, opened to a ready
//! endpoint, and reconnect only when an answer says `Connection: close` or
//! the server closed the connection between two requests. Pods are real
//! `mxgateway` processes, replaced one by one with a real SIGTERM.
//!
//! Without `Connection: close` during the drain, a kept-alive client never
//! leaves a draining pod: the server stops under it, and the request in
//! flight at that moment is lost.

#![cfg(unix)]

use std::collections::BTreeMap;
use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use zb_health_testkit::{Launch, PATIENCE, ServiceProcess, eventually, request_within};

/// Short, so the test is quick; long enough for the watcher (50 ms
/// polls) to take a draining pod out before it stops serving.
const DRAIN_DELAY_MS: &str = "2000";
const CLIENTS: usize = 8;
const PODS: usize = 3;

/// The application route every client calls.
const ROUTE: &str = "/admin/role";

/// What every thread shares: the pods the watcher polls, the Service's
/// endpoints, and the counts.
#[derive(Default)]
struct Service {
    /// Every running pod's application address (the watcher's list).
    pods: Mutex<Vec<SocketAddr>>,
    /// The ready ones, as last seen: what a new connection may go to.
    endpoints: Mutex<Vec<SocketAddr>>,
    /// Requests answered 2xx, per pod.
    served: Mutex<BTreeMap<SocketAddr, u64>>,
    /// Requests that failed: an I/O error or an early close mid-request,
    /// or a non-2xx answer.
    lost: AtomicU64,
    lost_detail: Mutex<Vec<String>>,
    /// Answers that said `Connection: close`.
    closes: AtomicU64,
    next: AtomicUsize,
    stop: AtomicBool,
}

impl Service {
    fn served_total(&self) -> u64 {
        self.served.lock().unwrap().values().sum()
    }

    /// A ready endpoint, round robin, if any.
    fn pick(&self) -> Option<SocketAddr> {
        let endpoints = self.endpoints.lock().unwrap();
        if endpoints.is_empty() {
            return None;
        }
        let i = self.next.fetch_add(1, Ordering::Relaxed) % endpoints.len();
        Some(endpoints[i])
    }

    fn lose(&self, what: String) {
        self.lost.fetch_add(1, Ordering::SeqCst);
        self.lost_detail.lock().unwrap().push(what);
    }
}

/// kube-proxy's view: every 50 ms, the pods whose `/health/ready` is 200.
fn watcher(service: Arc<Service>) -> JoinHandle<()> {
    std::thread::spawn(move || {
        while !service.stop.load(Ordering::SeqCst) {
            let pods = service.pods.lock().unwrap().clone();
            let ready: Vec<SocketAddr> = pods
                .into_iter()
                .filter(|addr| {
                    request_within(Duration::from_secs(2), *addr, "GET", "/health/ready", "")
                        .is_ok_and(|r| r.status == 200)
                })
                .collect();
            *service.endpoints.lock().unwrap() = ready;
            std::thread::sleep(Duration::from_millis(50));
        }
    })
}

/// Whether the server closed `stream` while it sat idle between requests
/// (a client's pool sees this and reconnects without sending).
fn closed_while_idle(stream: &TcpStream) -> bool {
    let mut byte = [0u8; 1];
    stream.set_nonblocking(true).expect("nonblocking");
    let closed = match stream.peek(&mut byte) {
        Ok(0) => true,
        Ok(_) => false, // unsolicited bytes: not ours to read; keep it
        Err(e) => e.kind() != ErrorKind::WouldBlock,
    };
    stream.set_nonblocking(false).expect("blocking");
    closed
}

/// One keep-alive request on `stream`: the status and whether the answer
/// said `Connection: close`.
fn exchange(stream: &mut TcpStream, addr: SocketAddr) -> std::io::Result<(u16, bool)> {
    let request = format!("GET {ROUTE} HTTP/1.1\r\nHost: {addr}\r\n\r\n");
    stream.write_all(request.as_bytes())?;
    let mut raw = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let n = stream.read(&mut buf)?;
        if n == 0 {
            return Err(std::io::Error::new(
                ErrorKind::UnexpectedEof,
                "closed before the whole answer",
            ));
        }
        raw.extend_from_slice(&buf[..n]);
        let Some(end) = raw.windows(4).position(|w| w == b"\r\n\r\n") else {
            continue;
        };
        let head = String::from_utf8_lossy(&raw[..end]).to_ascii_lowercase();
        let length: usize = head
            .lines()
            .find_map(|l| l.strip_prefix("content-length:"))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0);
        if raw.len() < end + 4 + length {
            continue;
        }
        let status = head
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        let close = head
            .lines()
            .filter_map(|l| l.strip_prefix("connection:"))
            .any(|v| v.trim() == "close");
        return Ok((status, close));
    }
}

/// A client with one kept-alive connection at a time.
fn client(service: Arc<Service>) -> JoinHandle<()> {
    std::thread::spawn(move || {
        let mut connection: Option<(TcpStream, SocketAddr)> = None;
        while !service.stop.load(Ordering::SeqCst) {
            if connection
                .as_ref()
                .is_some_and(|(stream, _)| closed_while_idle(stream))
            {
                connection = None;
            }
            if connection.is_none() {
                // Connecting is not a request: a refused connect (an
                // endpoint that just went) is retried, as a client does.
                connection = service.pick().and_then(|addr| {
                    let stream = TcpStream::connect(addr).ok()?;
                    stream.set_read_timeout(Some(PATIENCE)).ok()?;
                    Some((stream, addr))
                });
                if connection.is_none() {
                    std::thread::sleep(Duration::from_millis(5));
                    continue;
                }
            }
            let (stream, addr) = connection.as_mut().expect("connected");
            let addr = *addr;
            match exchange(stream, addr) {
                Ok((status, close)) if (200..300).contains(&status) => {
                    *service.served.lock().unwrap().entry(addr).or_default() += 1;
                    if close {
                        service.closes.fetch_add(1, Ordering::SeqCst);
                        connection = None;
                    }
                }
                Ok((status, _)) => {
                    service.lose(format!("{addr}: answered {status}"));
                    connection = None;
                }
                Err(e) => {
                    service.lose(format!("{addr}: {e}"));
                    connection = None;
                }
            }
            // Keeps the load modest on a shared machine.
            std::thread::sleep(Duration::from_millis(2));
        }
    })
}

fn start_pod(service: &Service) -> ServiceProcess {
    let mut pod = Launch::new(env!("CARGO_BIN_EXE_mxgateway"))
        .env("DRAIN_DELAY_MS", DRAIN_DELAY_MS)
        .start();
    pod.wait_listening();
    service.pods.lock().unwrap().push(pod.app);
    pod
}

fn until_endpoint(service: &Service, addr: SocketAddr) {
    eventually(&format!("{addr} in the endpoints"), PATIENCE, || {
        service
            .endpoints
            .lock()
            .unwrap()
            .contains(&addr)
            .then_some(())
    });
}

/// Waits until the clients have had `n` more requests answered.
fn until_served(service: &Service, n: u64) {
    let from = service.served_total();
    eventually(&format!("{n} more requests served"), PATIENCE, || {
        (service.served_total() >= from + n).then_some(())
    });
}

#[test]
fn a_rolling_update_with_kept_alive_clients_loses_no_request() {
    let service = Arc::new(Service::default());
    let watch = watcher(service.clone());
    let mut pods: Vec<ServiceProcess> = (0..PODS).map(|_| start_pod(&service)).collect();
    for pod in &pods {
        until_endpoint(&service, pod.app);
    }
    let clients: Vec<JoinHandle<()>> = (0..CLIENTS).map(|_| client(service.clone())).collect();
    until_served(&service, 200);

    // Replace the pods one by one, as a Deployment's rolling update does
    // with maxSurge 1, maxUnavailable 0.
    let mut old_pods: Vec<SocketAddr> = Vec::new();
    for _ in 0..PODS {
        let new = start_pod(&service);
        until_endpoint(&service, new.app);
        let mut old = pods.remove(0);
        old.sigterm();
        let status = old.wait_exit(PATIENCE);
        assert!(status.success(), "exit status {status}");
        service.pods.lock().unwrap().retain(|a| *a != old.app);
        old_pods.push(old.app);
        pods.push(new);
        until_served(&service, 200);
    }

    service.stop.store(true, Ordering::SeqCst);
    for c in clients {
        c.join().expect("a client thread");
    }
    watch.join().expect("the watcher");

    let served = service.served.lock().unwrap().clone();
    let lost = service.lost.load(Ordering::SeqCst);
    assert_eq!(
        lost,
        0,
        "lost requests: {:?}; served per pod: {served:?}",
        service.lost_detail.lock().unwrap()
    );
    // Spread: every old pod served, and the clients it sent on with
    // `Connection: close` reached the new ones.
    let served_by = |addr: &SocketAddr| served.get(addr).copied().unwrap_or(0);
    for addr in &old_pods {
        assert!(served_by(addr) > 0, "{addr} served none: {served:?}");
    }
    let new_serving = pods.iter().filter(|p| served_by(&p.app) > 0).count();
    assert!(new_serving >= PODS - 1, "{served:?}");
    assert!(service.served_total() >= 800, "{served:?}");
    assert!(service.closes.load(Ordering::SeqCst) >= 1);
}
