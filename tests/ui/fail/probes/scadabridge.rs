// examples/scadabridge's custom probe `PlcLinkProbe`, with the same
// attribute facts as its src/lib.rs, for the cases that quote the example's
// health.yaml (`type: scadabridge::PlcLinkProbe`). A copy, so the workspace
// tests need not depend on an example crate; mounted as `mod scadabridge`
// so the quoted manifest text stays the example's. Not a case itself:
// trybuild globs only `ui/fail/*.rs`.
use zb_health::prelude::*;

#[zb_health(name = "plc-link", tags = [ready], timeout = "200ms", failure_status = degraded)]
pub struct PlcLinkProbe;

impl Probe for PlcLinkProbe {
    async fn check(&self) -> ProbeOutcome {
        Ok(ProbeResult::healthy())
    }
}
