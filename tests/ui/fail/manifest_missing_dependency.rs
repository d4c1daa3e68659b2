// Typed registration: forgetting a dependency the manifest names is a compile error naming it.
use zb_health::prelude::{zb_health, Probe, ProbeOutcome, ProbeResult};

zb_health::prelude::manifest!(Health = "manifests/two_probes.yaml");

#[zb_health(name = "cache", timeout = "500ms")]
pub struct CacheProbe;

impl Probe for CacheProbe {
    async fn check(&self) -> ProbeOutcome {
        Ok(ProbeResult::healthy())
    }
}

#[zb_health(name = "search", timeout = "500ms")]
pub struct SearchProbe;

impl Probe for SearchProbe {
    async fn check(&self) -> ProbeOutcome {
        Ok(ProbeResult::healthy())
    }
}

fn main() {
    let _ = HealthDeps { cache: CacheProbe };
}
