// R5, R16, R17 (BE-HLTH-006) in the attribute, judged with the attribute's
// tags by the same rule function as the manifest and the runtime builder.
use zb_health::prelude::{zb_health, Probe, ProbeOutcome, ProbeResult};

// R17: an `active` probe answers live.
#[zb_health(name = "lease", tags = [active], refresh = "1s")]
struct LeaseProbe;

// R16: `max_staleness` not greater than `refresh`.
#[zb_health(name = "feed", refresh = "5s", max_staleness = "5s")]
struct FeedProbe;

// R16: `cache` with `refresh`; R5: a zero `max_staleness`.
#[zb_health(name = "disk", cache = "1s", refresh = "5s", max_staleness = "0ms")]
struct DiskProbe;

macro_rules! healthy {
    ($($t:ty),*) => {$(
        impl Probe for $t {
            async fn check(&self) -> ProbeOutcome {
                Ok(ProbeResult::healthy())
            }
        }
    )*};
}
healthy!(LeaseProbe, FeedProbe, DiskProbe);

fn main() {}
