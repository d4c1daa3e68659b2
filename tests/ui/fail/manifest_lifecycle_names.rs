// Startup gates and watchdogs are named like probes (R9, reserved names
// included) and uniquely (R3); a watchdog needs a deadline (R11) of at
// least 1 ms (R5). All reported at once, each at its value.
zb_health::prelude::manifest!(Health = "manifests/lifecycle_names.yaml");

fn main() {}
