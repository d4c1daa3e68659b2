//! `GET /metrics`: every `metrics` value of the process, zb-health's
//! included, in Prometheus text (see `spec/observability.md`): the
//! library's exporter, from its `prometheus` feature.

use actix_web::web;

/// Mounts `GET /metrics`, the library's exporter
/// (`zb_health::observe::prometheus::configure`, which installs its
/// recorder on first use). The examples give it to
/// `ZbHealthServer::metrics`, which mounts it on both HTTP ports.
pub fn configure_metrics(config: &mut web::ServiceConfig) {
    zb_health::observe::prometheus::configure(config);
}
