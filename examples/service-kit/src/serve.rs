//! Running an example service: the application server, the management
//! server and the gRPC health server under one drain.

use std::io;

use actix_web::{App, HttpServer, web};
use zb_health::grpc::server::GrpcHealth;
use zb_health::lifecycle::serve_with_management;
use zb_health::{HealthRegistry, ZbHealthEndpoints};

use crate::cluster::ClusterNode;
use crate::metrics::configure_metrics;
use crate::settings::Settings;

/// Logs to stderr: a probe's transition to failure once at warn level with
/// its real error, its recovery at info (BE-HLTH-008). `RUST_LOG`
/// overrides the default filter, which keeps chitchat's chatter out.
pub fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info,chitchat=warn"));
    // A second call (a test calling two services' setups) keeps the first.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_target(false)
        .try_init();
}

/// An example service, ready to run: what [`run`](Self::run) serves.
pub struct Service<A> {
    /// The settings the ports and the drain come from.
    pub settings: Settings,
    /// The registry the manifest was installed into.
    pub registry: HealthRegistry,
    /// The three tiers, served on both ports.
    pub endpoints: ZbHealthEndpoints,
    /// The application's own routes (and its admin endpoints, gated or not).
    pub app: A,
    /// `grpc.health.v1` (the manifest's `grpc` section), served on
    /// `settings.grpc_port` when given.
    pub grpc: Option<GrpcHealth>,
    /// The cluster node, if any: kept alive while serving, and told to
    /// announce `Leaving` when the drain begins.
    pub cluster: Option<ClusterNode>,
}

impl<A> Service<A>
where
    A: Fn(&mut web::ServiceConfig) + Send + Clone + 'static,
{
    /// Binds every port, then serves until the drain ends
    /// (`lifecycle::serve_with_management`):
    ///
    /// * 127.0.0.1:`port`: the tiers, `GET /metrics` and the application's
    ///   routes, on actix's default workers;
    /// * 127.0.0.1:`management_port`: the tiers and `GET /metrics` on one
    ///   worker of their own, which busy application workers cannot hold up;
    /// * 127.0.0.1:`grpc_port`: `grpc.health.v1`, `NOT_SERVING` from the
    ///   first signal, stopped after the drain delay.
    ///
    /// On SIGTERM (or Ctrl-C) `ready` and `active` answer 503 at once, the
    /// node announces `Leaving` (with a cluster), everything keeps serving
    /// for the drain delay, then in-flight requests finish and it returns
    /// `Ok(())`. Tasks the caller spawned before calling (the warm-up) run
    /// once this awaits, i.e. after every port is bound.
    ///
    /// # Errors
    ///
    /// A port cannot be bound, or a server fails.
    pub async fn run(self) -> io::Result<()> {
        let Self {
            settings,
            registry,
            endpoints,
            app,
            grpc,
            cluster,
        } = self;
        let drain = settings.drain;
        let management = HttpServer::new({
            let endpoints = endpoints.clone();
            move || {
                App::new()
                    .service(endpoints.clone())
                    .configure(configure_metrics)
            }
        })
        .workers(1)
        .bind(("127.0.0.1", settings.management_port))?;
        let server = HttpServer::new(move || {
            App::new()
                .service(endpoints.clone())
                .configure(configure_metrics)
                .configure(app.clone())
        })
        .bind(("127.0.0.1", settings.port))?;
        let grpc_task = match &grpc {
            Some(grpc) => {
                let incoming = tonic::transport::server::TcpIncoming::bind(
                    ([127, 0, 0, 1], settings.grpc_port).into(),
                )?;
                let stopped = grpc.shutdown_after_drain(drain.delay());
                let server = tonic::transport::Server::builder()
                    .add_service(grpc.server())
                    .serve_with_incoming_shutdown(incoming, stopped);
                // On this (main) runtime; the HTTP workers have their own threads.
                Some(tokio::spawn(server))
            }
            None => None,
        };
        if let Some(node) = &cluster {
            node.leave_on_drain(&registry);
        }
        println!(
            "{service} on http://127.0.0.1:{port} (/health/ready, /health/active, /healthz, /metrics); \
             management on http://127.0.0.1:{management}{grpc}; database {db}{data}; {cluster}; drain delay {drain} ms",
            service = settings.service,
            port = settings.port,
            management = settings.management_port,
            grpc = if grpc.is_some() {
                format!("; grpc.health.v1 on 127.0.0.1:{}", settings.grpc_port)
            } else {
                String::new()
            },
            db = settings.database_display(),
            data = if settings.is_sqlite() {
                format!(" (file under {})", settings.data_dir.display())
            } else {
                String::new()
            },
            cluster = match &cluster {
                Some(node) if settings.cluster.seeds.is_empty() =>
                    format!("single-node cluster, gossip on udp {}", node.address()),
                Some(node) => format!(
                    "gossip on udp {} with seeds {}",
                    node.address(),
                    settings.cluster.seeds.join(",")
                ),
                None => "no cluster".to_owned(),
            },
            drain = drain.delay().as_millis(),
        );
        let served = serve_with_management(server, management, &registry, drain).await;
        // Ends Watch streams if the HTTP servers stopped without a drain.
        if let Some(grpc) = &grpc {
            grpc.stop();
        }
        if let Some(task) = grpc_task {
            task.abort();
        }
        drop(cluster);
        served
    }
}
