// `blocking = true` on a `BlockingProbe` (generic or not), `blocking =
// false` on a `Probe`, and a manifest `kind: custom` entry naming a
// blocking type, exactly as it names any other.
use zb_health::prelude::{zb_health, BlockingProbe, Probe, ProbeOutcome, ProbeResult, ZbHealthProbe};

#[zb_health(name = "legacy-driver", tags = [ready], timeout = "200ms", blocking = true)]
pub struct LegacyDriver;

impl BlockingProbe for LegacyDriver {
    fn check(&self) -> ProbeOutcome {
        Ok(ProbeResult::healthy())
    }
}

#[zb_health(name = "file-lock", blocking = true, crate = "zb_health")]
struct FileLock<T: Send + Sync + 'static>(T);

impl<T: Send + Sync + 'static> BlockingProbe for FileLock<T> {
    fn check(&self) -> ProbeOutcome {
        Ok(ProbeResult::healthy())
    }
}

#[zb_health(name = "cache", blocking = false)]
struct CacheProbe;

impl Probe for CacheProbe {
    async fn check(&self) -> ProbeOutcome {
        Ok(ProbeResult::healthy())
    }
}

zb_health::prelude::manifest!(Health, yaml = r#"
service: s
probes:
  - { kind: custom, type: crate::LegacyDriver }
"#);

fn main() {
    let regs = Health::registrations(HealthDeps { legacy_driver: LegacyDriver });
    assert_eq!(regs[0].name(), "legacy-driver");
    assert_eq!(Health::PROBES[0].timeout().as_millis(), 200);
    assert_eq!(FileLock(0u8).registration().name(), "file-lock");
    assert_eq!(CacheProbe.registration().name(), "cache");
}

// An inherent `META` does not shadow the attribute's in the registration.
impl CacheProbe {
    #[allow(dead_code)]
    const META: u8 = 0;
}
