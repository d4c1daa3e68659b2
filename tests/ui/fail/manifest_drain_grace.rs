// R18 (BE-HLTH-005): the drain delay and the graceful stop must end within
// the orchestrator's termination grace period, or it kills the process
// with requests still in flight.
zb_health::prelude::manifest!(Health = "manifests/drain_grace.yaml");

fn main() {}
