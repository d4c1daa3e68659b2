// R27: `restart_after` restarts a pod whose shared dependency fails here
// alone, so it needs `shared`, `ready` alone, and a time longer than the
// orchestrator's detection time (2 s × 2 by default), so the pod is out
// of rotation first: each refused at the YAML value; the attribute's on an
// `active` probe that is not shared, at the attribute; and a custom
// probe's attribute `restart_after`, which only the generated code sees,
// against the detection time of its manifest.
use zb_health::prelude::{zb_health, Probe, ProbeOutcome, ProbeResult};

zb_health::prelude::manifest!(Health = "manifests/restart_after.yaml");

zb_health::prelude::manifest!(Attr = "manifests/restart_after_attr.yaml");

#[zb_health(name = "lease", tags = [active], restart_after = "2m")]
pub struct LeaseProbe;

#[zb_health(name = "feed", shared = true, restart_after = "4s")]
pub struct FeedProbe;

macro_rules! healthy {
    ($($t:ty),*) => {$(
        impl Probe for $t {
            async fn check(&self) -> ProbeOutcome {
                Ok(ProbeResult::healthy())
            }
        }
    )*};
}
healthy!(LeaseProbe, FeedProbe);

fn main() {}
