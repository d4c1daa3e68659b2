// Mutations of the #[zb_health] attributes of examples/plant-service
// (src/lib.rs): each is rejected at the mutated token, naming its rule.
use zb_health::prelude::*;

// `primary` made optional on the active tier: R10 at `failure_status`.
#[zb_health(name = "primary", tags = [active], timeout = "200ms", failure_status = degraded)]
pub struct PrimaryProbe;

// `database` with its timeout written twice: R14 at the second `timeout`.
#[zb_health(name = "database", tags = [ready], timeout = "800ms", timeout = "2s")]
pub struct DatabaseProbe;

// `disk-space` also tagged `live`: R1 at `live`.
#[zb_health(name = "disk-space", tags = [ready, live], timeout = "300ms")]
pub struct DiskSpaceProbe;

impl Probe for PrimaryProbe {
    async fn check(&self) -> ProbeOutcome {
        Ok(ProbeResult::healthy())
    }
}

impl Probe for DatabaseProbe {
    async fn check(&self) -> ProbeOutcome {
        Ok(ProbeResult::healthy())
    }
}

impl Probe for DiskSpaceProbe {
    async fn check(&self) -> ProbeOutcome {
        Ok(ProbeResult::healthy())
    }
}

fn main() {}
