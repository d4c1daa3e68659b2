// R22: dependencies that form a cycle, a probe depending on
// itself and two probes depending on each other, each reported once at
// the name that closes it, with the cycle's path.
zb_health::prelude::manifest!(Health = "manifests/depends_on_cycle.yaml");

fn main() {}
