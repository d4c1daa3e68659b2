// R4: unknown key, kind, policy and tag, each with "did you mean".
zb_health::prelude::manifest!(Health = "manifests/unknown.yaml");

fn main() {}
