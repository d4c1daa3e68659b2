// `blocking = true` needs a `BlockingProbe` impl, and the error names that
// trait at the struct, even if the type implements `Probe`; `blocking`
// takes a bool (R15), and a wrong value adds no error about the type.
use zb_health::prelude::{zb_health, BlockingProbe, Probe, ProbeOutcome, ProbeResult};

#[zb_health(name = "legacy-driver", blocking = true)]
struct LegacyDriver;

impl Probe for LegacyDriver {
    async fn check(&self) -> ProbeOutcome {
        Ok(ProbeResult::healthy())
    }
}

#[zb_health(name = "file-lock", blocking = "yes")]
struct FileLock;

impl BlockingProbe for FileLock {
    fn check(&self) -> ProbeOutcome {
        Ok(ProbeResult::healthy())
    }
}

fn main() {}
