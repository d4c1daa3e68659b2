// R7 twice and R5 at once: every fact the manifest and the attributes
// disagree on is its own error, so none hides another.
use zb_health::prelude::{zb_health, Probe, ProbeOutcome, ProbeResult};

zb_health::prelude::manifest!(Health = "manifests/two_contradictions.yaml");

#[zb_health(name = "cache", tags = [ready], timeout = "750ms")]
pub struct CacheProbe;

#[zb_health(name = "slow", timeout = "2s")]
pub struct SlowProbe;

impl Probe for CacheProbe {
    async fn check(&self) -> ProbeOutcome {
        Ok(ProbeResult::healthy())
    }
}

impl Probe for SlowProbe {
    async fn check(&self) -> ProbeOutcome {
        Ok(ProbeResult::healthy())
    }
}

fn main() {}
