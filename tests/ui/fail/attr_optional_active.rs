// R10 (ZB-2.3b): a probe on the `active` tier may not be optional. A
// `degraded` failure would answer 200 on `/health/active`, "route the
// writes here", on every standby. Reported at the `failure_status` value.
// (On `ready`, `degraded` declares an optional dependency: see
// `ui/pass/attr_probes.rs`.)
use zb_health::prelude::{zb_health, Probe, ProbeOutcome, ProbeResult};

#[zb_health(name = "lease", tags = [active], failure_status = degraded)]
struct LeaseProbe;

impl Probe for LeaseProbe {
    async fn check(&self) -> ProbeOutcome {
        Ok(ProbeResult::healthy())
    }
}

fn main() {}
