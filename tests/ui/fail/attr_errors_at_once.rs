// Every error of one attribute at once, and only the real ones: a
// malformed duration (R5) and an unknown tag (R4, with a "did you mean"),
// and no bogus "has no tags" (R13) for the list whose only tag is unknown.
use zb_health::prelude::{zb_health, Probe, ProbeOutcome, ProbeResult};

#[zb_health(name = "c", timeout = "1.5s", tags = [raedy])]
struct CacheProbe;

impl Probe for CacheProbe {
    async fn check(&self) -> ProbeOutcome {
        Ok(ProbeResult::healthy())
    }
}

fn main() {}
