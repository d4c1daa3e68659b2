// `kind: certificate`: a `warn_within` that is not days or hours (R15) at its
// value, and an `address:` that is a URL, not a `host:port` (R15), at its
// value.
zb_health::prelude::manifest!(Health = "manifests/certificate.yaml");

fn main() {}
