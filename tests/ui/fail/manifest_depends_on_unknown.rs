// R21: a `depends_on` name that is no probe of the manifest,
// at the name, with a "did you mean"; a custom probe named only by its
// attribute cannot be depended on, the help says to give it `name:`.
use zb_health::prelude::{zb_health, Probe, ProbeOutcome, ProbeResult};

zb_health::prelude::manifest!(Health = "manifests/depends_on_unknown.yaml");

#[zb_health(name = "cache")]
pub struct CacheProbe;

impl Probe for CacheProbe {
    async fn check(&self) -> ProbeOutcome {
        Ok(ProbeResult::healthy())
    }
}

fn main() {}
