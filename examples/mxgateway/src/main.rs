//! `cargo run -p mxgateway`: the gateway on 127.0.0.1:8080 with the three
//! tiers over an empty registry, the management server on 8081 and
//! `grpc.health.v1` on 50051, all under the manifest's drain. The variables
//! that move ports are service-kit's (`PORT`, `MANAGEMENT_PORT`,
//! `GRPC_PORT`, `DRAIN_DELAY_MS`); `MXGATEWAY_ROLE=standby` starts it as
//! the standby of a pair.

use std::io;

use mxgateway::{Gateway, GatewayRole, Health, HealthDeps};
use service_kit::{configure_metrics, init_logging};

#[actix_web::main]
async fn main() -> io::Result<()> {
    init_logging();
    let role = GatewayRole::from_env().map_err(io::Error::other)?;
    // No probes: the install sets the orchestrator timeout and builds the
    // tiers over the (empty) process registry.
    let installed = Health::install(HealthDeps {})?;
    let gateway = Gateway::new(role);
    installed
        .server
        .from_env()?
        .metrics(configure_metrics)
        .app(move |config| gateway.configure_app(config))
        .run()
        .await
}
