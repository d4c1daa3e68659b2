//! What the three sister example services (scadabridge, mxgateway,
//! otopcua) share, so none of them repeats it:
//!
//! * [`settings`]: the example's own [`Settings`] from the environment, with
//!   documented variables and defaults (the ports, `HOST` and the drain are
//!   the library's `ZbHealthServer::from_env`, so service-kit has no server
//!   code);
//! * [`database`]: a sea-orm connection (SQLite file by default, PostgreSQL
//!   when `DATABASE_URL` says so) and an idempotent schema bootstrap;
//! * [`cluster`]: a real chitchat node on UDP 127.0.0.1 and the
//!   [`ClusterView`](zb_health::cluster::ClusterView) the probes and the
//!   gate read;
//! * [`metrics`]: `GET /metrics` in Prometheus text, the library's exporter;
//! * [`logging`]: logs on stderr, `RUST_LOG` to filter.
//!
//! The process-test harness the examples' tests use is the
//! `zb-health-testkit` crate (`testkit/`), a dev-dependency of each example.

pub mod cluster;
pub mod database;
pub mod logging;
pub mod metrics;
pub mod settings;

pub use cluster::ClusterNode;
pub use database::{bootstrap_schema, connect_database};
pub use logging::init_logging;
pub use metrics::configure_metrics;
pub use settings::{ClusterSettings, Defaults, Settings};
