// R15: a value of the wrong shape is reported at the value, every one at
// once: a name that is not a string, tags that are not a list, a timeout
// that is a bare number, a setting without `= value`.
use zb_health::prelude::{zb_health, Probe, ProbeOutcome, ProbeResult};

#[zb_health(name = cache, tags = ready, timeout = 750, failure_status)]
struct CacheProbe;

impl Probe for CacheProbe {
    async fn check(&self) -> ProbeOutcome {
        Ok(ProbeResult::healthy())
    }
}

fn main() {}
