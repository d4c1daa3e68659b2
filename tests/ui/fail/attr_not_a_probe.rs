// The annotated struct must implement `zb_health::Probe`.
use zb_health::zb_health;

#[zb_health(name = "cache")]
struct CacheProbe;

fn main() {}
