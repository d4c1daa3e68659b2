//! `cargo run -p mxgateway`: the gateway on 127.0.0.1:8080 with the three
//! tiers (`active` follows the gateway's role), the management server on 8081 and
//! `grpc.health.v1` on 50051, all under the manifest's drain. The variables
//! that move ports are service-kit's (`PORT`, `MANAGEMENT_PORT`,
//! `GRPC_PORT`, `DRAIN_DELAY_MS`); `MXGATEWAY_ROLE=standby` starts it as
//! the standby of a pair.

use std::io;

use mxgateway::{Gateway, GatewayRole, Health, HealthDeps};
use service_kit::{configure_metrics, init_logging};
use zb_health::prelude::StartError;

#[actix_web::main]
async fn main() -> Result<(), StartError> {
    init_logging();
    let role = GatewayRole::from_env().map_err(io::Error::other)?;
    // The role is both the active tier's probe and the write route's gate.
    let installed = Health::install(HealthDeps {
        gateway_role: role.clone(),
    })?;
    let gateway = Gateway::new(role);
    installed
        .server
        .from_env()?
        .metrics(configure_metrics)
        .app(move |config| gateway.configure_app(config))
        .run()
        .await
}
