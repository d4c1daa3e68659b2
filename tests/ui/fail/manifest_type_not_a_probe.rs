// R4: a custom `type:` that is not a #[zb_health] probe.
zb_health::prelude::manifest!(Health = "manifests/not_a_probe.yaml");

pub struct Cache;

fn main() {}
