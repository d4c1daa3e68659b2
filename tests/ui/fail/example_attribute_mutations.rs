// Mutations of the #[zb_health] attribute of examples/scadabridge's custom
// probe `plc-link` (src/lib.rs): each is rejected at the mutated token,
// naming its rule.
use zb_health::prelude::*;

// `plc-link` moved to the active tier, still optional: R10 at `failure_status`.
#[zb_health(name = "plc-link", tags = [active], timeout = "200ms", failure_status = degraded)]
pub struct ActivePlcLinkProbe;

// `plc-link` with its timeout written twice: R14 at the second `timeout`.
#[zb_health(name = "plc-link", tags = [ready], timeout = "200ms", timeout = "2s")]
pub struct TwiceTimedPlcLinkProbe;

// `plc-link` also tagged `live`: R1 at `live`.
#[zb_health(name = "plc-link", tags = [ready, live], timeout = "200ms", failure_status = degraded)]
pub struct LivePlcLinkProbe;

impl Probe for ActivePlcLinkProbe {
    async fn check(&self) -> ProbeOutcome {
        Ok(ProbeResult::healthy())
    }
}

impl Probe for TwiceTimedPlcLinkProbe {
    async fn check(&self) -> ProbeOutcome {
        Ok(ProbeResult::healthy())
    }
}

impl Probe for LivePlcLinkProbe {
    async fn check(&self) -> ProbeOutcome {
        Ok(ProbeResult::healthy())
    }
}

fn main() {}
