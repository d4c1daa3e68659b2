// R14: a key written twice is refused at its second occurrence, not
// silently last-wins (the manifest refuses duplicate keys too).
use zb_health::prelude::{zb_health, Probe, ProbeOutcome, ProbeResult};

#[zb_health(name = "cache", tags = [ready], name = "kv", tags = [active])]
struct CacheProbe;

impl Probe for CacheProbe {
    async fn check(&self) -> ProbeOutcome {
        Ok(ProbeResult::healthy())
    }
}

fn main() {}
