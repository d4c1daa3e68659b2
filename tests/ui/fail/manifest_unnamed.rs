// The generated items are named at the call site; the unnamed form says how.
zb_health::prelude::manifest!("manifests/unnamed_custom.yaml");

fn main() {}
