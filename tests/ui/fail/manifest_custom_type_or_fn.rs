// A custom entry names its probe once: by `type:` or by `fn:`, not both,
// and not neither.
use zb_health::prelude::*;

manifest!(Health, yaml = r#"
service: orders
probes:
  - { name: a, kind: custom, type: crate::CacheProbe, fn: crate::ping }
  - { name: b, kind: custom }
"#);

fn main() {}
