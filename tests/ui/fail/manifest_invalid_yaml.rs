// R8: not valid YAML; the parser's line:column is reported.
zb_health::prelude::manifest!(Health = "manifests/invalid.yaml");

fn main() {}
