// R7: a custom probe's execution policy is its attribute's; the manifest
// may repeat it, but not differ: `cache` differs, `refresh` is absent from
// the attribute.
use zb_health::prelude::{zb_health, Probe, ProbeOutcome, ProbeResult};

zb_health::prelude::manifest!(Health = "manifests/policy_contradiction.yaml");

#[zb_health(name = "cache", tags = [ready], cache = "2s")]
pub struct CacheProbe;

impl Probe for CacheProbe {
    async fn check(&self) -> ProbeOutcome {
        Ok(ProbeResult::healthy())
    }
}

fn main() {}
