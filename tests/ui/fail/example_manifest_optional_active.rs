// The health.yaml of examples/scadabridge, mutated to make the active-node
// probe optional: R10, located at the `failure_status` that was written.
zb_health::prelude::manifest!(Mutated, yaml = r#"
service: scadabridge
orchestrator: { timeout: 1s }
defaults: { timeout: 800ms }
probes:
  - { name: database, kind: database }
  - { name: cluster-membership, kind: cluster-membership, policy: default }
  - { name: active-node, kind: active-node, failure_status: degraded }
  - { kind: custom, type: scadabridge::PlcLinkProbe }
"#);

fn main() {}

// The example's probe type, a copy with the same attribute facts.
#[path = "probes/scadabridge.rs"]
mod scadabridge;
