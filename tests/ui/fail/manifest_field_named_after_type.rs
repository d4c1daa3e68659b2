// A custom entry without `name:` gets a field named after its type
// (`cache_probe`), not after its attribute's `name = "cache"`, which the
// macro cannot read: the error offers the right field.
use zb_health::prelude::{zb_health, Probe, ProbeOutcome, ProbeResult};

#[zb_health(name = "cache")]
pub struct CacheProbe;

impl Probe for CacheProbe {
    async fn check(&self) -> ProbeOutcome {
        Ok(ProbeResult::healthy())
    }
}

zb_health::prelude::manifest!(Health = "manifests/unnamed_custom.yaml");

fn main() {
    let _ = HealthDeps { cache: CacheProbe };
}
