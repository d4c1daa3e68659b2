// R16 (BE-HLTH-006): a background probe's timing that cannot work, each
// reported at the key it is about: `max_staleness` not greater than
// `refresh` (every result would be stale), `cache` with `refresh` (a
// background probe is never run by a request), `max_staleness` without
// `refresh`.
zb_health::prelude::manifest!(Health = "manifests/refresh_policy.yaml");

fn main() {}
