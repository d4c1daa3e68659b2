// A #[zb_health] async fn returns its `ProbeOutcome`: a fn that returns
// nothing is refused at its parentheses, one that returns another type is
// a type mismatch at that type.
use zb_health::prelude::*;

#[zb_health(name = "ping")]
async fn ping() {}

#[zb_health(name = "pong")]
async fn pong() -> bool {
    true
}

fn main() {}
