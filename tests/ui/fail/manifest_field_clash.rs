// Two probes that would get one `HealthDeps` field: an error naming both
// and saying where field names come from, never a positional suffix.
zb_health::prelude::manifest!(Health = "manifests/field_clash.yaml");

fn main() {}
