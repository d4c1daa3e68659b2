// An attribute error does not cascade: the struct and a fallback
// `ZbHealthProbe` impl are still emitted, so the manifest that names the
// type shows no second, misleading "is not a #[zb_health] probe"; only the
// real R1 error is reported.
use zb_health::prelude::{zb_health, Probe, ProbeOutcome, ProbeResult};

#[zb_health(name = "cache", tags = [ready, live])]
pub struct CacheProbe;

impl Probe for CacheProbe {
    async fn check(&self) -> ProbeOutcome {
        Ok(ProbeResult::healthy())
    }
}

zb_health::prelude::manifest!(Health, yaml = r#"
service: s
probes:
  - { kind: custom, type: CacheProbe }
"#);

fn main() {}
