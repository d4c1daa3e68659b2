// R5 (BE-HLTH-006) for a probe `manifest!` cannot find in the source (one
// another macro writes): the attribute's limit is still checked, at the
// manifest, as one error in the same words.
use zb_health::prelude::{zb_health, Probe, ProbeOutcome, ProbeResult};

zb_health::prelude::manifest!(Health = "manifests/attr_timeout.yaml");

macro_rules! probe {
    ($name:ident) => {
        #[zb_health(name = "slow", timeout = "2s")]
        pub struct $name;

        impl Probe for $name {
            async fn check(&self) -> ProbeOutcome {
                Ok(ProbeResult::healthy())
            }
        }
    };
}

probe!(SlowProbe);

fn main() {}
