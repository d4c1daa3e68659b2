// `blocking = true` says how a probe struct's code runs; an async fn
// probe is refused at the value.
use zb_health::prelude::*;

#[zb_health(name = "ping", blocking = true)]
async fn ping() -> ProbeOutcome {
    Ok(ProbeResult::healthy())
}

fn main() {}
