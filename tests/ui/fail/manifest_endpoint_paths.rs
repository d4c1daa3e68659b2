// R6 (ZB-5): colliding and relative endpoint paths.
zb_health::prelude::manifest!(Health = "manifests/paths.yaml");

fn main() {}
