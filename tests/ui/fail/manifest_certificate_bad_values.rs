// `kind: certificate`: a `warn_within` that is not days or hours (R15) at its
// value, and the planned `address:` source (R4) at its key.
zb_health::prelude::manifest!(Health = "manifests/certificate.yaml");

fn main() {}
