// R20 (BE-HLTH-006): a failure threshold that holds a failure back longer
// than the orchestrator's detection time (2 s × 2 by default): four runs
// 2 s apart (the readiness period drives a request-driven probe), and 5 s
// of a background probe's runs, reported at the YAML key; and a custom
// probe's attribute `failure_threshold`, which only the generated code
// sees, against the detection time of its manifest (5 s × 2 for a 10 s
// drain: six runs 5 s apart hold a failure back 25 s).
use zb_health::prelude::{zb_health, Probe, ProbeOutcome, ProbeResult};

zb_health::prelude::manifest!(Health = "manifests/threshold.yaml");

zb_health::prelude::manifest!(Attr = "manifests/threshold_attr.yaml");

#[zb_health(name = "flaky", failure_threshold = 6)]
pub struct FlakyProbe;

impl Probe for FlakyProbe {
    async fn check(&self) -> ProbeOutcome {
        Ok(ProbeResult::healthy())
    }
}

fn main() {}
