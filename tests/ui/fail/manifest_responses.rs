// What the bodies show (BE-HLTH-001, -007; AT-8): R4 for an unknown format,
// disclosure level, tier and `cluster_ready` probe, each with "did you
// mean"; R7 for a `cluster_ready` naming a probe of another kind; R11 for
// `cluster_ready: true` without a membership probe to read.
zb_health::prelude::manifest!(Health = "manifests/responses.yaml");

zb_health::prelude::manifest!(Kind, yaml = r#"
service: s
endpoints: { cluster_ready: database }
probes:
  - { name: database, kind: database }
"#);

zb_health::prelude::manifest!(Missing, yaml = r#"
service: s
endpoints: { cluster_ready: true }
"#);

fn main() {}
