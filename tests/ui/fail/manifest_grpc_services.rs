// The `grpc` section (AT-7): a bad service name (R9), an unknown tier and
// an unknown probe (R4, with a hint), a zero period (R5), an unknown key
// (R4), all at once, each at its YAML position.
zb_health::prelude::manifest!(Health, yaml = r#"
service: plant
probes:
  - { name: database, kind: database }
grpc:
  period: 0ms
  port: 50051
  services:
    "plant..db": { probe: databse }
    plant.v1.Writes: writes
"#);

fn main() {}
