//! A server whose ports are bound: where it listens, and running it.

use std::fmt;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;

use actix_web::web;

#[cfg(feature = "grpc")]
use crate::grpc::server::GrpcHealth;
use crate::lifecycle::Drain;
use crate::registry::HealthRegistry;

use super::run::{Servable, serve_all};

/// Routes an application mounts on a server, shared by every worker.
pub(super) type Routes = Arc<dyn Fn(&mut web::ServiceConfig) + Send + Sync>;

/// Where a [`BoundZbHealthServer`] listens.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Addresses {
    /// The application server's addresses.
    pub application: Vec<SocketAddr>,
    /// The management server's; empty without one.
    pub management: Vec<SocketAddr>,
    /// The `grpc.health.v1` server's, if one runs.
    pub grpc: Option<SocketAddr>,
}

/// A [`ZbHealthServer`](super::ZbHealthServer) whose ports are bound, from
/// [`ZbHealthServer::bind`](super::ZbHealthServer::bind).
pub struct BoundZbHealthServer {
    pub(super) registry: HealthRegistry,
    pub(super) drain: Drain,
    pub(super) servers: Vec<Box<dyn Servable>>,
    pub(super) addresses: Addresses,
    #[cfg(feature = "grpc")]
    pub(super) grpc: Option<(GrpcHealth, tonic::transport::server::TcpIncoming)>,
    /// The OpenTelemetry export, flushed when the drain ends.
    #[cfg(feature = "otel")]
    pub(super) otel: Option<crate::observe::otel::Exporting>,
}

impl fmt::Debug for BoundZbHealthServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BoundZbHealthServer")
            .field("addresses", &self.addresses)
            .finish_non_exhaustive()
    }
}

impl BoundZbHealthServer {
    /// Where it listens.
    pub fn addresses(&self) -> &Addresses {
        &self.addresses
    }

    /// Serves until the drain ends, then returns `Ok(())`; see
    /// [`ZbHealthServer`](super::ZbHealthServer). With an OpenTelemetry
    /// export (the `otel` feature), flushes it last, so the final values
    /// and transitions go out before the process exits.
    ///
    /// # Errors
    ///
    /// A server fails.
    pub async fn run(self) -> io::Result<()> {
        tracing::info!(
            application = ?self.addresses.application,
            management = ?self.addresses.management,
            grpc = ?self.addresses.grpc,
            drain_delay_ms = self.drain.delay().as_millis() as u64,
            "zb-health serving"
        );
        #[cfg(feature = "grpc")]
        let grpc_task = self.grpc.map(|(health, incoming)| {
            let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
            let server = tonic::transport::Server::builder()
                .add_service(health.server())
                .serve_with_incoming_shutdown(incoming, async move {
                    let _ = stopped.await;
                });
            // On this runtime; the HTTP workers have threads of their own.
            (health, stop, tokio::spawn(server))
        });
        #[cfg(feature = "grpc")]
        let graceful = self.drain.graceful_timeout();
        let served = serve_all(self.servers, &self.registry, self.drain).await;
        #[cfg(feature = "grpc")]
        if let Some((health, stop, mut task)) = grpc_task {
            // gRPC answers for as long as HTTP does (a `live` service stays
            // SERVING through the drain, as `/healthz` stays 200), so it
            // stops only now: Watch streams end, then in-flight calls get
            // the graceful stop's time, as HTTP requests did.
            health.stop();
            let _ = stop.send(());
            if tokio::time::timeout(graceful, &mut task).await.is_err() {
                task.abort();
            }
        }
        #[cfg(feature = "otel")]
        if let Some(otel) = self.otel {
            // The flush waits on the exporters' threads: not on a worker.
            let _ = tokio::task::spawn_blocking(move || otel.flush()).await;
        }
        served
    }
}
