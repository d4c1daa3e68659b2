// R14: a key written twice is refused at its second occurrence, not
// silently last-wins (the manifest refuses duplicate keys too).
use zb_health::{zb_health, Probe, ProbeOutcome, ProbeResult};

#[zb_health(name = "cache", timeout = "500ms", name = "kv")]
struct CacheProbe;

#[zb_health(name = "db", tags = [ready], tags = [active])]
struct DbProbe;

macro_rules! probe {
    ($($t:ty),*) => {$(
        impl Probe for $t {
            async fn check(&self) -> ProbeOutcome {
                Ok(ProbeResult::healthy())
            }
        }
    )*};
}
probe!(CacheProbe, DbProbe);

fn main() {}
