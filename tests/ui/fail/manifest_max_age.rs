// R19 (BE-HLTH-006): a cached or background result as old as the
// orchestrator's detection time (readiness periodSeconds × failureThreshold
// for the drain delay: 2 s × 2 by default), reported at the YAML key; and
// a custom probe's attribute `cache`, which only the generated code sees,
// against the detection time of its manifest (5 s × 2 for a 10 s drain).
use zb_health::prelude::{zb_health, Probe, ProbeOutcome, ProbeResult};

zb_health::prelude::manifest!(Health = "manifests/max_age.yaml");

zb_health::prelude::manifest!(Attr = "manifests/max_age_attr.yaml");

#[zb_health(name = "cached", cache = "5m")]
pub struct CachedProbe;

impl Probe for CachedProbe {
    async fn check(&self) -> ProbeOutcome {
        Ok(ProbeResult::healthy())
    }
}

fn main() {}
