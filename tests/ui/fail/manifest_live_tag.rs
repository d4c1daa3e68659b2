// R1 (ZB-1.3): a manifest probe registered to `live`.
zb_health::prelude::manifest!(Health = "manifests/live_tag.yaml");

fn main() {}
