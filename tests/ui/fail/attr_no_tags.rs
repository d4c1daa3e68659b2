// R13 (ZB-1.1): a probe with an empty tag list would never run on any
// tier. (Leaving `tags` out means `[ready]`.)
use zb_health::prelude::{zb_health, Probe, ProbeOutcome, ProbeResult};

#[zb_health(name = "cache", tags = [])]
struct CacheProbe;

impl Probe for CacheProbe {
    async fn check(&self) -> ProbeOutcome {
        Ok(ProbeResult::healthy())
    }
}

fn main() {}
