// A #[zb_health] async fn needs no state, so it takes no arguments (and
// has no generic parameters); state belongs in a probe struct.
use zb_health::prelude::*;

#[zb_health(name = "ping")]
async fn ping(host: &'static str) -> ProbeOutcome {
    Ok(ProbeResult::healthy().with_description(host))
}

#[zb_health(name = "pong")]
async fn pong<T: Default>() -> ProbeOutcome {
    let _ = T::default();
    Ok(ProbeResult::healthy())
}

fn main() {}
