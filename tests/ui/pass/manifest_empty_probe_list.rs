// MxGateway style: all three tiers, zero probes.
zb_health::manifest!("manifests/mxgateway.yaml");

fn main() {
    let registry = HealthManifest::registry();
    let endpoints = HealthManifest::install(&registry, HealthDeps {}).unwrap();
    assert_eq!(endpoints.path(zb_health::Tag::Live), "/healthz");
    assert!(HealthManifest::PROBES.is_empty());
}
