//! Shared helpers of the integration tests: registries with fixed answers,
//! a real server on 127.0.0.1:0, async wrappers of the shared HTTP/1.1
//! client (`zb_health_testkit`) and the schema.

#![allow(dead_code)]

use std::net::SocketAddr;

use actix_web::dev::ServerHandle;
use actix_web::{App, HttpServer, web};
use zb_health::http::ZbHealthEndpoints;
use zb_health::prelude::{
    HealthRegistry, HealthStatus, ProbeRegistration, ProbeResult, TagSet, from_fn,
};

/// A registry whose ready tier answers `ready` and active tier `active`.
pub fn registry(ready: HealthStatus, active: HealthStatus) -> HealthRegistry {
    let reg = HealthRegistry::new();
    reg.add(fixed("database", ready)).unwrap();
    reg.add(
        ProbeRegistration::new(
            "active-node",
            from_fn(move || async move {
                Ok(ProbeResult::new(active)
                    .with_description("oldest Up member")
                    .with_data("selfAddress", "127.0.0.1:7000")
                    .with_data("activeNode", "127.0.0.1:7000"))
            }),
        )
        .tags(TagSet::ACTIVE),
    )
    .unwrap();
    reg
}

/// A ready probe answering `status` with a fixed description, and the
/// number of times it ran.
#[allow(dead_code)] // Not every test crate counts runs.
pub fn counted(
    name: &'static str,
    status: HealthStatus,
) -> (
    ProbeRegistration,
    std::sync::Arc<std::sync::atomic::AtomicUsize>,
) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let runs = std::sync::Arc::new(AtomicUsize::new(0));
    let counter = runs.clone();
    let probe = from_fn(move || {
        counter.fetch_add(1, Ordering::SeqCst);
        async move { Ok(ProbeResult::new(status).with_description("fixed note")) }
    });
    (ProbeRegistration::new(name, probe), runs)
}

/// The entry names of a canonical body, in order.
#[allow(dead_code)] // Not every test crate reads entry names.
pub fn entry_names(body: &serde_json::Value) -> Vec<String> {
    body["entries"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect()
}

/// A ready-tier probe that always answers `status` with no description.
pub fn fixed(name: &'static str, status: HealthStatus) -> ProbeRegistration {
    ProbeRegistration::new(
        name,
        from_fn(move || async move { Ok(ProbeResult::new(status)) }),
    )
}

/// A ready-tier probe `name` that is `Healthy` while the flag is true
/// (it starts true) and `Unhealthy` after, for a test to flip.
pub fn switchable(
    name: &'static str,
) -> (
    ProbeRegistration,
    std::sync::Arc<std::sync::atomic::AtomicBool>,
) {
    use std::sync::atomic::{AtomicBool, Ordering};
    let healthy = std::sync::Arc::new(AtomicBool::new(true));
    let flag = healthy.clone();
    let probe = ProbeRegistration::new(
        name,
        from_fn(move || {
            let ok = flag.load(Ordering::SeqCst);
            async move {
                Ok(if ok {
                    ProbeResult::healthy()
                } else {
                    ProbeResult::unhealthy("switched off")
                })
            }
        }),
    );
    (probe, healthy)
}

/// A running server and its address; stopped on drop.
pub struct Server {
    pub addr: SocketAddr,
    handle: ServerHandle,
}

impl Drop for Server {
    fn drop(&mut self) {
        drop(self.handle.stop(false));
    }
}

/// Serves an app made by `configure` on 127.0.0.1 with an OS-chosen port
/// and one worker; stopped when the returned [`Server`] drops.
pub fn serve_with<F>(configure: F) -> Server
where
    F: Fn(&mut web::ServiceConfig) + Send + Clone + 'static,
{
    serve_on_workers(1, configure)
}

/// Like [`serve_with`] with `workers` actix workers, each its own thread
/// and single-threaded runtime.
pub fn serve_on_workers<F>(workers: usize, configure: F) -> Server
where
    F: Fn(&mut web::ServiceConfig) + Send + Clone + 'static,
{
    let server = HttpServer::new(move || App::new().configure(configure.clone()))
        .workers(workers)
        .disable_signals()
        .bind(("127.0.0.1", 0))
        .unwrap();
    let addr = server.addrs()[0];
    let server = server.run();
    let handle = server.handle();
    tokio::spawn(server);
    Server { addr, handle }
}

/// Serves `endpoints` on 127.0.0.1 with an OS-chosen port.
pub fn serve(endpoints: ZbHealthEndpoints) -> Server {
    serve_with(move |c| {
        c.service(endpoints.clone());
    })
}

/// `server` on free ports of 127.0.0.1 with its management port on: the
/// application's and the management server's addresses, and the running
/// task (abort it to stop).
#[allow(dead_code)] // Not every test crate serves both ports.
pub fn serve_both_ports(
    server: zb_health::server::ZbHealthServer,
) -> (
    SocketAddr,
    SocketAddr,
    actix_web::rt::task::JoinHandle<std::io::Result<()>>,
) {
    let bound = server
        .port(0)
        .management_port(Some(0))
        .bind()
        .expect("free ports bind");
    let addresses = bound.addresses().clone();
    let running = actix_web::rt::spawn(bound.run());
    (addresses.application[0], addresses.management[0], running)
}

/// A response as read off the wire: the shared client's
/// (`zb_health_testkit::Response`), as in the examples' process tests.
#[allow(unused_imports)]
pub use zb_health_testkit::Response as Wire;

/// One HTTP/1.1 request over a fresh TCP connection, read until the
/// server closes it: no client library between the test and the bytes.
pub async fn request(addr: SocketAddr, method: &str, path: &str) -> Wire {
    try_request(addr, method, path).await.unwrap()
}

/// Polls `GET path` until it answers `status` and returns that answer;
/// panics after 30 s. Tests wait for conditions, never for a fixed time.
pub async fn until_status(addr: SocketAddr, path: &str, status: u16) -> Wire {
    tokio::time::timeout(std::time::Duration::from_secs(30), async {
        loop {
            let wire = request(addr, "GET", path).await;
            if wire.status == status {
                return wire;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
    })
    .await
    .unwrap_or_else(|_| panic!("{path} never answered {status}"))
}

/// [`request`] that reports a refused, reset or empty exchange as an
/// error instead of panicking: for a server that is going away.
pub async fn try_request(addr: SocketAddr, method: &str, path: &str) -> std::io::Result<Wire> {
    zb_health_testkit::request_async(addr, method, path, "").await
}

/// Asserts `body` satisfies the canonical schema, listing every error.
#[allow(unused_imports)]
pub use zb_health_testkit::{assert_canonical_body as assert_canonical, schema};

/// A `tracing` subscriber that keeps each span's and event's fields as
/// text (an event's starts with its target), down to `DEBUG`.
pub struct LogText(pub std::sync::Arc<std::sync::Mutex<Vec<String>>>);

struct FieldText(String);

impl tracing::field::Visit for FieldText {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        self.0.push_str(&format!(" {}={value:?}", field.name()));
    }
}

impl tracing::Subscriber for LogText {
    fn enabled(&self, metadata: &tracing::Metadata<'_>) -> bool {
        // Down to debug: what a service would log; the dependencies' trace
        // noise only slows the test.
        *metadata.level() <= tracing::Level::DEBUG
    }
    fn new_span(&self, span: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        let mut text = FieldText(span.metadata().name().to_owned());
        span.record(&mut text);
        self.0.lock().unwrap().push(text.0);
        tracing::span::Id::from_u64(1)
    }
    fn record(&self, _: &tracing::span::Id, values: &tracing::span::Record<'_>) {
        let mut text = FieldText(String::new());
        values.record(&mut text);
        self.0.lock().unwrap().push(text.0);
    }
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, event: &tracing::Event<'_>) {
        let mut text = FieldText(event.metadata().target().to_owned());
        event.record(&mut text);
        self.0.lock().unwrap().push(text.0);
    }
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}
