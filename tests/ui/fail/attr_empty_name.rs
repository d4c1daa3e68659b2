// R9 (ZB-3): a probe needs a short fixed name.
use zb_health::prelude::{zb_health, Probe, ProbeOutcome, ProbeResult};

#[zb_health(name = "")]
struct Nameless;

#[zb_health(tags = [ready])]
struct Unnamed;

macro_rules! probe {
    ($($t:ty),*) => {$(
        impl Probe for $t {
            async fn check(&self) -> ProbeOutcome {
                Ok(ProbeResult::healthy())
            }
        }
    )*};
}
probe!(Nameless, Unnamed);

fn main() {}
