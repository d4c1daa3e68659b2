// R25 (group-on-live): a health group on the live tier, which carries no probes.
zb_health::prelude::manifest!(Health = "manifests/group_on_live.yaml");

fn main() {}
