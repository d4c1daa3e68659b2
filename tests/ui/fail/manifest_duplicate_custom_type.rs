// R3 (AT-1): one `kind: custom` type listed twice without `name:` is one
// probe registered twice; the manifest reader refuses it at the second
// entry's type, as `zb-health check` does, with one error.
use zb_health::prelude::{zb_health, Probe, ProbeOutcome, ProbeResult};

zb_health::prelude::manifest!(Health = "manifests/duplicate_type.yaml");

#[zb_health(name = "cache", timeout = "500ms")]
pub struct CacheProbe;

impl Probe for CacheProbe {
    async fn check(&self) -> ProbeOutcome {
        Ok(ProbeResult::healthy())
    }
}

fn main() {}
