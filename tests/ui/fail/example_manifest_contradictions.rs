// The health.yaml of examples/scadabridge over a copy of the example's probe
// type, mutated to contradict two facts of its attribute: the PLC link's
// timeout (the attribute says 200ms) and its failure status (the attribute
// says degraded). Both contradictions are reported, each at its YAML line.
zb_health::prelude::manifest!(Mutated, yaml = r#"
service: scadabridge
orchestrator: { timeout: 1s }
defaults: { timeout: 800ms }
probes:
  - { name: database, kind: database }
  - { name: cluster-membership, kind: cluster-membership, policy: default }
  - { name: active-node, kind: active-node }
  - { kind: custom, type: scadabridge::PlcLinkProbe, timeout: 900ms, failure_status: unhealthy }
"#);

fn main() {}

// The example's probe type, a copy with the same attribute facts.
#[path = "probes/scadabridge.rs"]
mod scadabridge;
