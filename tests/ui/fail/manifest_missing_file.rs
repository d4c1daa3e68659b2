// R8: a manifest file that does not exist.
zb_health::prelude::manifest!(Health = "manifests/does-not-exist.yaml");

fn main() {}
