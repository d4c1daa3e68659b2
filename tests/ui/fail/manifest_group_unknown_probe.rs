// R23 (group-unknown-probe): a health group names a probe the manifest does not have (a typo), or selects nothing; and, in generated code, a name no custom probe's attribute gives.
use zb_health::prelude::{zb_health, Probe, ProbeOutcome, ProbeResult};

zb_health::prelude::manifest!(Health = "manifests/group_unknown_probe.yaml");

zb_health::prelude::manifest!(Attr, yaml = r#"
service: plant
probes:
  - { kind: custom, type: CacheProbe }
groups:
  canary: { path: /health/canary, probes: [cahce] }
"#);

#[zb_health(name = "cache")]
pub struct CacheProbe;

impl Probe for CacheProbe {
    async fn check(&self) -> ProbeOutcome {
        Ok(ProbeResult::healthy())
    }
}

fn main() {}
