// R15 for `kind: redis`: a `rediss://` URL (no TLS client; its password
// shown as `***`) and a path that is no database number, each at its value.
zb_health::prelude::manifest!(Health = "manifests/redis.yaml");

fn main() {}
