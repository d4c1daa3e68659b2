// R15 for `kind: http`: a `url` that is not one, and an empty `status` range, each at its value.
zb_health::prelude::manifest!(Health = "manifests/http.yaml");

fn main() {}
