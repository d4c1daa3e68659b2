// R5 (BE-HLTH-006): an attribute deadline that does not fit the manifest's orchestrator timeout, reported at the attribute (the key to change) with the manifest's line as a note.
use zb_health::prelude::{zb_health, Probe, ProbeOutcome, ProbeResult};

zb_health::prelude::manifest!(Health = "manifests/attr_timeout.yaml");

#[zb_health(name = "slow", timeout = "2s")]
pub struct SlowProbe;

impl Probe for SlowProbe {
    async fn check(&self) -> ProbeOutcome {
        Ok(ProbeResult::healthy())
    }
}

fn main() {}
