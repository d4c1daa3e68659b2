//! `cargo run -p mxgateway`: the gateway on 127.0.0.1:8080 with the three
//! tiers over an empty registry, the management server on 8081 and
//! `grpc.health.v1` on 50051, all under the manifest's drain. The variables
//! that move ports are service-kit's (`PORT`, `MANAGEMENT_PORT`,
//! `GRPC_PORT`, `DRAIN_DELAY_MS`); `MXGATEWAY_ROLE=standby` starts it as
//! the standby of a pair.

use std::io;

use mxgateway::{Gateway, GatewayRole, Health, HealthDeps};
use service_kit::{Defaults, Service, Settings, init_logging};

#[actix_web::main]
async fn main() -> io::Result<()> {
    init_logging();
    let settings = Settings::from_env(Defaults {
        service: Health::SERVICE,
        management_port: Health::MANAGEMENT_PORT,
        grpc_port: 50051,
        drain: Health::DRAIN,
        // No cluster: never bound.
        gossip_port: 0,
    })
    .map_err(io::Error::other)?;
    let role = GatewayRole::from_env().map_err(io::Error::other)?;
    // No probes: the install sets the orchestrator timeout and builds the
    // tiers over the (empty) process registry.
    let installed = Health::install(HealthDeps {}).map_err(io::Error::other)?;
    let registry = zb_health::HealthRegistry::process().clone();
    let grpc = Health::grpc(&registry).map_err(io::Error::other)?;
    let gateway = Gateway::new(role);
    Service {
        settings,
        registry,
        endpoints: installed.endpoints,
        app: move |config: &mut actix_web::web::ServiceConfig| gateway.configure_app(config),
        grpc: Some(grpc),
        cluster: None,
    }
    .run()
    .await
}
