// R9 (ZB-3): names that are not short identifiers.
zb_health::prelude::manifest!(Health = "manifests/names.yaml");

fn main() {}
