// R4: a misspelt custom `type:` (`CahceProbe`) is one error, ours, at the
// manifest path, naming the YAML line and column, with a "did you mean" for
// the #[zb_health] probe of a close name: no suggestion that rewrites the
// macro call, nothing else about the missing type, no const evaluation.
// The entry has no `name:`, so its field is named after the type: after
// the suggested one, which stands in, so the literal below adds nothing.
use zb_health::prelude::{zb_health, Probe, ProbeOutcome, ProbeResult};

zb_health::prelude::manifest!(Health = "manifests/type_typo.yaml");

#[zb_health(name = "cache", tags = [ready])]
pub struct CacheProbe;

impl Probe for CacheProbe {
    async fn check(&self) -> ProbeOutcome {
        Ok(ProbeResult::healthy())
    }
}

fn main() {
    let _ = |db| Health::registrations(HealthDeps { db, cache_probe: CacheProbe });
}
