// R3 (AT-1): two custom probes whose #[zb_health] attributes give one name.
use zb_health::prelude::{zb_health, Probe, ProbeOutcome, ProbeResult};

zb_health::prelude::manifest!(Health = "manifests/duplicate_attr.yaml");

#[zb_health(name = "cache", timeout = "500ms")]
pub struct CacheProbe;

impl Probe for CacheProbe {
    async fn check(&self) -> ProbeOutcome {
        Ok(ProbeResult::healthy())
    }
}

#[zb_health(name = "cache")]
pub struct SecondCacheProbe;

impl Probe for SecondCacheProbe {
    async fn check(&self) -> ProbeOutcome {
        Ok(ProbeResult::healthy())
    }
}

fn main() {}
