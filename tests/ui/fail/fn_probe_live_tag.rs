// R1 (ZB-1.3) on an async fn probe: the attribute's rules are the struct
// form's, at the same token.
use zb_health::prelude::*;

#[zb_health(name = "ping", tags = [ready, live], timeout = "200ms")]
async fn ping() -> ProbeOutcome {
    Ok(ProbeResult::healthy())
}

fn main() {}
