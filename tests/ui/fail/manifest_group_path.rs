// R24 (group-path): a health group's path collides with a tier's, with a per-probe path under ready, or with another group's.
zb_health::prelude::manifest!(Health = "manifests/group_path.yaml");

fn main() {}
