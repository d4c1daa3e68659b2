// R7 (BE-HLTH-003): `shared` fails a dependency open when most of the
// cluster shares its failure, a readiness decision: refused on a probe on
// the `active` tier, or off `ready`, at the YAML value; and a `shared`
// that is not a bool; and the attribute's `shared` on an `active` probe.
use zb_health::prelude::{zb_health, Probe, ProbeOutcome, ProbeResult};

zb_health::prelude::manifest!(Health = "manifests/shared.yaml");

#[zb_health(name = "leader-lease", tags = [active], shared = true)]
pub struct LeaderLease;

impl Probe for LeaderLease {
    async fn check(&self) -> ProbeOutcome {
        Ok(ProbeResult::healthy())
    }
}

fn main() {}
