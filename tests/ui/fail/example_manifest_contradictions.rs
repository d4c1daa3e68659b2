// The health.yaml of examples/plant-service over the example's own probe
// types, mutated to contradict two of their attributes: the database's
// timeout (the attribute says 800ms) and the primary's tags (the attribute
// says [active]). Both contradictions are reported, each at its YAML line.
zb_health::manifest!(Mutated, yaml = r#"
service: plant-service
orchestrator: { timeout: 1s }
probes:
  - { kind: custom, type: plant_service::DatabaseProbe, timeout: 900ms }
  - { kind: custom, type: plant_service::DiskSpaceProbe }
  - { kind: custom, type: plant_service::PrimaryProbe, tags: [ready] }
"#);

fn main() {}
