// R10 (ZB-2.3b, lmxopcua#494): no probe on the `active` tier may be
// optional, whichever way its failure status is written. The error points
// where the status was written: the probe's own `failure_status`, or
// `defaults.failure_status` that it inherits.

mod own_status {
    zb_health::prelude::manifest!(Health, yaml = r#"
service: plant
probes:
  - { name: active-node, kind: active-node, failure_status: degraded }
"#);
}

mod inherited_status {
    zb_health::prelude::manifest!(Health, yaml = r#"
service: plant
defaults: { failure_status: degraded }
probes:
  - { name: database, kind: database }
  - { name: active-node, kind: active-node }
"#);
}

fn main() {}
