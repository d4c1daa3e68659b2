// Two manifests in one module: each call names what it generates, so
// nothing collides, and each type keeps its own probes and deps.
use zb_health::prelude::{zb_health, Probe, ProbeOutcome, ProbeResult};

#[zb_health(name = "cache", timeout = "250ms")]
pub struct CacheProbe;

impl Probe for CacheProbe {
    async fn check(&self) -> ProbeOutcome {
        Ok(ProbeResult::healthy())
    }
}

zb_health::prelude::manifest!(pub Public, yaml = r#"
service: public-api
probes:
  - { kind: custom, type: crate::CacheProbe }
"#);

zb_health::prelude::manifest!(Admin, yaml = r#"
service: admin-api
orchestrator: { timeout: 1s }
endpoints: { preset: be-hlth-009 }
"#);

fn main() {
    assert_eq!((Public::SERVICE, Admin::SERVICE), ("public-api", "admin-api"));
    let public = zb_health::prelude::HealthRegistry::new();
    Public::install_into(&public, PublicDeps { cache_probe: CacheProbe }).unwrap();
    let admin = zb_health::prelude::HealthRegistry::new();
    Admin::install_into(&admin, AdminDeps {}).unwrap();
    assert_eq!(public.names().len(), 1);
    assert_eq!(admin.orchestrator_timeout(), Some(std::time::Duration::from_secs(1)));
}
