// R5 (BE-HLTH-006): malformed and zero durations, and a deadline not below the orchestrator's.
zb_health::prelude::manifest!(Health = "manifests/durations.yaml");

fn main() {}
