//! An in-test OTLP/gRPC receiver: a real tonic server on 127.0.0.1 with
//! the OTLP metrics and logs services of `opentelemetry-proto`, which
//! keeps every request it decodes and counts the connections it accepts.

#![allow(dead_code)]

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use opentelemetry_proto::tonic::collector::logs::v1::logs_service_server::{
    LogsService, LogsServiceServer,
};
use opentelemetry_proto::tonic::collector::logs::v1::{
    ExportLogsServiceRequest, ExportLogsServiceResponse,
};
use opentelemetry_proto::tonic::collector::metrics::v1::metrics_service_server::{
    MetricsService, MetricsServiceServer,
};
use opentelemetry_proto::tonic::collector::metrics::v1::{
    ExportMetricsServiceRequest, ExportMetricsServiceResponse,
};
use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue, any_value};
use opentelemetry_proto::tonic::logs::v1::LogRecord;
use opentelemetry_proto::tonic::metrics::v1::{Metric, metric, number_data_point};
use tokio_stream::StreamExt;
use tokio_stream::wrappers::TcpListenerStream;
use zb_health::lifecycle::Drain;
use zb_health::observe::otel::OtelSettings;
use zb_health::prelude::{HealthRegistry, map_zb_health};
use zb_health::server::ZbHealthServer;

/// What the receiver got.
#[derive(Default)]
pub struct Received {
    pub metrics: Mutex<Vec<ExportMetricsServiceRequest>>,
    pub logs: Mutex<Vec<ExportLogsServiceRequest>>,
    /// TCP connections accepted, whatever came over them.
    pub connections: AtomicUsize,
}

#[derive(Clone)]
struct Collector(Arc<Received>);

#[tonic::async_trait]
impl MetricsService for Collector {
    async fn export(
        &self,
        request: tonic::Request<ExportMetricsServiceRequest>,
    ) -> Result<tonic::Response<ExportMetricsServiceResponse>, tonic::Status> {
        self.0.metrics.lock().unwrap().push(request.into_inner());
        Ok(tonic::Response::new(ExportMetricsServiceResponse::default()))
    }
}

#[tonic::async_trait]
impl LogsService for Collector {
    async fn export(
        &self,
        request: tonic::Request<ExportLogsServiceRequest>,
    ) -> Result<tonic::Response<ExportLogsServiceResponse>, tonic::Status> {
        self.0.logs.lock().unwrap().push(request.into_inner());
        Ok(tonic::Response::new(ExportLogsServiceResponse::default()))
    }
}

/// Starts a receiver on `addr` (`127.0.0.1:0` for a free port) on a
/// thread of its own, for the rest of the process: its address and what
/// it gets. `None` when `addr` cannot be bound.
pub fn receiver_on(addr: &str) -> Option<(SocketAddr, Arc<Received>)> {
    let listener = std::net::TcpListener::bind(addr).ok()?;
    listener.set_nonblocking(true).unwrap();
    let bound = listener.local_addr().unwrap();
    let received = Arc::new(Received::default());
    let collector = Collector(received.clone());
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            let counted = collector.0.clone();
            let incoming = TcpListenerStream::new(listener).map(move |stream| {
                counted.connections.fetch_add(1, Ordering::SeqCst);
                stream
            });
            tonic::transport::Server::builder()
                .add_service(MetricsServiceServer::new(collector.clone()))
                .add_service(LogsServiceServer::new(collector))
                .serve_with_incoming(incoming)
                .await
                .unwrap();
        });
    });
    Some((bound, received))
}

/// A receiver on a free port.
pub fn receiver() -> (SocketAddr, Arc<Received>) {
    receiver_on("127.0.0.1:0").expect("a free port on 127.0.0.1")
}

/// The string value of the attribute `key`, if there is one.
pub fn attribute<'a>(attributes: &'a [KeyValue], key: &str) -> Option<&'a any_value::Value> {
    attributes
        .iter()
        .find(|kv| kv.key == key)
        .and_then(|kv| kv.value.as_ref())
        .and_then(|v: &AnyValue| v.value.as_ref())
}

/// The attribute `key` as a string, if it is one.
pub fn text<'a>(attributes: &'a [KeyValue], key: &str) -> Option<&'a str> {
    match attribute(attributes, key) {
        Some(any_value::Value::StringValue(s)) => Some(s),
        _ => None,
    }
}

impl Received {
    /// Every metric named `name` received so far, with the `service.name`
    /// of its resource.
    pub fn metrics_named(&self, name: &str) -> Vec<(Option<String>, Metric)> {
        let requests = self.metrics.lock().unwrap();
        let mut found = Vec::new();
        for rm in requests.iter().flat_map(|r| &r.resource_metrics) {
            let service = rm
                .resource
                .as_ref()
                .and_then(|r| text(&r.attributes, "service.name"))
                .map(str::to_owned);
            for m in rm.scope_metrics.iter().flat_map(|s| &s.metrics) {
                if m.name == name {
                    found.push((service.clone(), m.clone()));
                }
            }
        }
        found
    }

    /// The last value of the gauge `name` whose attribute `key` is `value`.
    pub fn gauge(&self, name: &str, key: &str, value: &str) -> Option<f64> {
        self.metrics_named(name)
            .into_iter()
            .filter_map(|(_, m)| match m.data {
                Some(metric::Data::Gauge(g)) => Some(g.data_points),
                _ => None,
            })
            .flatten()
            .filter(|p| text(&p.attributes, key) == Some(value))
            .filter_map(|p| match p.value {
                Some(number_data_point::Value::AsDouble(v)) => Some(v),
                Some(number_data_point::Value::AsInt(v)) => Some(v as f64),
                None => None,
            })
            .next_back()
    }

    /// Every log record received so far.
    pub fn log_records(&self) -> Vec<LogRecord> {
        let requests = self.logs.lock().unwrap();
        requests
            .iter()
            .flat_map(|r| &r.resource_logs)
            .flat_map(|r| &r.scope_logs)
            .flat_map(|s| s.log_records.clone())
            .collect()
    }

    /// Whether anything at all was received or connected.
    pub fn is_empty(&self) -> bool {
        self.metrics.lock().unwrap().is_empty()
            && self.logs.lock().unwrap().is_empty()
            && self.connections.load(Ordering::SeqCst) == 0
    }
}

/// The names of this process's threads (Linux keeps the first 15 bytes).
pub fn thread_names() -> Vec<String> {
    std::fs::read_dir("/proc/self/task")
        .map(|tasks| {
            tasks
                .flatten()
                .filter_map(|t| std::fs::read_to_string(t.path().join("comm")).ok())
                .map(|name| name.trim().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// Whether the OpenTelemetry SDK's threads (its metric reader's, its log
/// batch processor's) run in this process.
pub fn sdk_threads() -> usize {
    thread_names()
        .iter()
        .filter(|name| name.starts_with("OpenTelemetry"))
        .count()
}

/// Binds `registry`'s server on a free application port (no management
/// port) with `settings` and runs it on the test's runtime: its address
/// and its run, which ends when the drain does.
pub fn serve_exporting(
    registry: HealthRegistry,
    drain_delay: std::time::Duration,
    settings: OtelSettings,
) -> (
    SocketAddr,
    actix_web::rt::task::JoinHandle<std::io::Result<()>>,
) {
    let endpoints = map_zb_health(registry.clone());
    let bound = ZbHealthServer::new(registry, endpoints, Drain::new(drain_delay))
        .port(0)
        .management_port(None)
        .otel(settings)
        .bind()
        .unwrap();
    let app = bound.addresses().application[0];
    (app, actix_web::rt::spawn(bound.run()))
}
