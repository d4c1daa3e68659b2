//! Serving: the one wiring path for everything a manifest declares, and
//! the lower-level functions it is built on.
//!
//! [`ZbHealthServer`] is what a manifest's generated `install` returns in
//! its `server` field: the tiers on the application server, the
//! management server on its port, `grpc.health.v1` when the manifest has a
//! `grpc` section, `GET /metrics` (the application's route on both HTTP
//! ports, or the library's exporter with the `prometheus` feature), and
//! the drain under SIGTERM, every port bound to one `HOST`:
//!
//! ```no_run
//! # use zb_health::prelude::HealthRegistry;
//! # use zb_health::lifecycle::Drain;
//! # use zb_health::server::ZbHealthServer;
//! # async fn run(server: ZbHealthServer) -> Result<(), zb_health::prelude::StartError> {
//! // `server` is `Health::install(deps)?.server`.
//! server
//!     .from_env()? // HOST, PORT, MANAGEMENT_PORT, GRPC_PORT, DRAIN_DELAY_MS
//!     .app(|routes| { routes.route("/orders", actix_web::web::get().to(|| async { "[]" })); })
//!     .run()
//!     .await
//! # }
//! ```
//!
//! The alternative, for an application that builds its own `HttpServer`:
//! mount [`ZbHealthServer::endpoints`] (or [`crate::http::map_zb_health`]) with
//! `App::service`, and run the servers with [`serve`](fn@serve) or
//! [`serve_with_management`], which wire SIGTERM and SIGINT to
//! [`Lifecycle::begin_drain`](crate::lifecycle::Lifecycle::begin_drain).

mod bound;
mod builder;
mod close;
mod env;
mod origin;
pub(crate) use origin::Origin;
mod run;
#[cfg(test)]
mod tests;

pub use crate::setting::SettingError;
pub use bound::{Addresses, BoundZbHealthServer};
pub use builder::{DEFAULT_GRPC_PORT, DEFAULT_PORT, ZbHealthServer};
pub use close::{CloseWhenDraining, CloseWhenDrainingService};
pub use run::{Servable, serve, serve_with_management};
