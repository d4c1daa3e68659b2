// R4: unknown key, kind, policy and tag, each with "did you mean".
zb_health::manifest!("manifests/unknown.yaml");

fn main() {}
