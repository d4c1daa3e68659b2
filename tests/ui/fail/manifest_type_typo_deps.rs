// R4: a misspelt custom `type:` (`CahceProbe`) in a service whose `main`
// builds the deps struct, as the README's tour does, is still ONE error:
// the macro's own, at the manifest path, naming the YAML line and column,
// with the "did you mean" and no name of the generated code. The probe
// the hint names stands in for the missing type, so `HealthDeps { cache }`
// adds no "expected `CahceProbe`, found `CacheProbe`".
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use zb_health::prelude::*;

#[zb_health(name = "cache", tags = [ready], timeout = "750ms", failure_status = degraded)]
#[derive(Clone, Default)]
pub struct CacheProbe(Arc<AtomicBool>);

impl Probe for CacheProbe {
    async fn check(&self) -> ProbeOutcome {
        if self.0.load(Ordering::Relaxed) {
            Ok(ProbeResult::healthy())
        } else {
            Err("cache refused the connection".into())
        }
    }
}

zb_health::prelude::manifest!(pub Health = "manifests/type_typo_deps.yaml");

#[actix_web::main]
async fn main() -> Result<(), StartError> {
    let cache = CacheProbe(Arc::new(AtomicBool::new(true)));
    let installed = Health::install(HealthDeps { cache })?;
    installed.server.run().await
}
