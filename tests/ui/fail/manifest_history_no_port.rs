// R26 (history-needs-a-port): `history` without a management port and
// without `application_port: true`.
zb_health::prelude::manifest!(Health = "manifests/history_no_port.yaml");

fn main() {}
