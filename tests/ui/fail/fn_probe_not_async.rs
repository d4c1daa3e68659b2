// A #[zb_health] fn is an `async fn`: a plain fn is refused at `fn`.
use zb_health::prelude::*;

#[zb_health(name = "ping")]
fn ping() -> ProbeOutcome {
    Ok(ProbeResult::healthy())
}

fn main() {}
