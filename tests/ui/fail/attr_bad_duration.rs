// R5 (BE-HLTH-006): malformed, unit-less and zero durations.
use zb_health::prelude::{zb_health, Probe, ProbeOutcome, ProbeResult};

#[zb_health(name = "a", timeout = "1.5s")]
struct A;

#[zb_health(name = "b", timeout = "750")]
struct B;

#[zb_health(name = "c", timeout = "0ms")]
struct C;

macro_rules! probe {
    ($($t:ty),*) => {$(
        impl Probe for $t {
            async fn check(&self) -> ProbeOutcome {
                Ok(ProbeResult::healthy())
            }
        }
    )*};
}
probe!(A, B, C);

fn main() {}
