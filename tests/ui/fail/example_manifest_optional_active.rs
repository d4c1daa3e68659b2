// The health.yaml of examples/plant-service over the example's own probe
// types, mutated to make the active-tier probe optional: R10, located at
// the `failure_status` that was written.
zb_health::manifest!(Mutated, yaml = r#"
service: plant-service
orchestrator: { timeout: 1s }
probes:
  - { kind: custom, type: plant_service::DatabaseProbe }
  - { kind: custom, type: plant_service::DiskSpaceProbe }
  - { kind: custom, type: plant_service::PrimaryProbe, tags: [active], failure_status: degraded }
"#);

fn main() {}
