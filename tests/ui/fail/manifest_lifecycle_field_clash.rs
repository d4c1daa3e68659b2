// R3: two startup gates whose names give one field of the generated
// `HealthStartup` (`-` becomes `_`) are an error naming both, never a
// silent suffix.
zb_health::prelude::manifest!(
    Health,
    yaml = r#"
service: plant
lifecycle:
  startup_gates: [warm-cache, warm_cache]
"#
);

fn main() {}
