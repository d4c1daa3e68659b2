// R4 in generated code: a gRPC service maps to a probe that no entry of the
// manifest names, and a custom probe takes its name from its attribute, so
// only the generated check can tell.
use zb_health::prelude::{zb_health, Probe, ProbeOutcome, ProbeResult};

zb_health::prelude::manifest!(Health, yaml = r#"
service: plant
grpc:
  services: { plant.cache: { probe: cahce } }
probes:
  - { kind: custom, type: CacheProbe }
"#);

#[zb_health(name = "cache")]
pub struct CacheProbe;

impl Probe for CacheProbe {
    async fn check(&self) -> ProbeOutcome {
        Ok(ProbeResult::healthy())
    }
}

fn main() {}
