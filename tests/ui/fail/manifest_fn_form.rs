// A custom entry's form must be its probe's: `fn:` names a #[zb_health]
// async fn, `type:` a #[zb_health] struct; each mix-up is one error at
// the YAML line and column.
use zb_health::prelude::*;

#[zb_health(name = "ping")]
async fn ping() -> ProbeOutcome {
    Ok(ProbeResult::healthy())
}

#[zb_health(name = "cache")]
struct CacheProbe;

impl Probe for CacheProbe {
    async fn check(&self) -> ProbeOutcome {
        Ok(ProbeResult::healthy())
    }
}

manifest!(Health, yaml = r#"
service: orders
probes:
  - { name: cache, kind: custom, fn: crate::CacheProbe }
  - { name: ping, kind: custom, type: crate::ping }
"#);

fn main() {}
