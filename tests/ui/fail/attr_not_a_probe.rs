// The annotated struct must implement `zb_health::prelude::Probe`.
use zb_health::prelude::zb_health;

#[zb_health(name = "cache")]
struct CacheProbe;

fn main() {}
