// MxGateway style: all three tiers, zero probes, installed into the process
// registry, whose endpoints the application mounts.
zb_health::prelude::manifest!(Health = "manifests/mxgateway.yaml");

fn main() {
    let endpoints = Health::install(HealthDeps {}).unwrap().server.endpoints().clone();
    assert_eq!(endpoints.path(zb_health::prelude::Tag::Live), "/healthz");
    assert!(Health::PROBES.is_empty());
    assert_eq!(Health::ORCHESTRATOR_TIMEOUT, None);
}
