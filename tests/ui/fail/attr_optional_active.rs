// R10 (ZB-2.3b): a probe on the `active` tier may not be optional. A
// `degraded` failure would answer 200 on `/health/active`, "route the
// writes here", on every standby. Reported at the `failure_status` value.
use zb_health::{zb_health, Probe, ProbeOutcome, ProbeResult};

#[zb_health(name = "lease", tags = [active], failure_status = degraded)]
struct LeaseProbe;

// On `ready` only, `degraded` is how an optional dependency is declared.
#[zb_health(name = "cache", tags = [ready], failure_status = degraded)]
struct CacheProbe;

macro_rules! probe {
    ($($t:ty),*) => {$(
        impl Probe for $t {
            async fn check(&self) -> ProbeOutcome {
                Ok(ProbeResult::healthy())
            }
        }
    )*};
}
probe!(LeaseProbe, CacheProbe);

fn main() {}
