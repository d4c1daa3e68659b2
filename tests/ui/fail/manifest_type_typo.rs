// R4: a misspelt custom `type:` is one error, ours, at the manifest path,
// naming the YAML line and column; nothing else about the missing type.
use zb_health::{zb_health, Probe, ProbeOutcome, ProbeResult};

zb_health::manifest!(Health = "manifests/type_typo.yaml");

#[zb_health(name = "cache")]
pub struct CacheProbe;

impl Probe for CacheProbe {
    async fn check(&self) -> ProbeOutcome {
        Ok(ProbeResult::healthy())
    }
}

fn main() {}
