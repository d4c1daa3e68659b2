// `HealthDeps` field names depend only on what the user wrote: keywords
// become raw identifiers, `self` and a leading digit get `p_`, `-` and `.`
// become `_`, a custom entry without `name:` is named after its type in
// snake case with acronyms as words (`HTTPProbe` → `http_probe`), and one
// with `name:` after that name.
use zb_health::database::DatabaseProbe;
use zb_health::grpc::GrpcDependencyProbe;
use zb_health::prelude::{zb_health, Probe, ProbeOutcome, ProbeResult};

#[zb_health(name = "http")]
pub struct HTTPProbe;

#[zb_health(name = "cache")]
pub struct CacheProbe;

#[zb_health(name = "queue")]
pub struct QueueProbe;

macro_rules! healthy {
    ($($t:ty),*) => {$(
        impl Probe for $t {
            async fn check(&self) -> ProbeOutcome {
                Ok(ProbeResult::healthy())
            }
        }
    )*};
}
healthy!(HTTPProbe, CacheProbe, QueueProbe);

zb_health::prelude::manifest!(Health = "manifests/field_names.yaml");

#[allow(dead_code)]
fn deps(db: fn() -> DatabaseProbe, grpc: fn() -> GrpcDependencyProbe) -> HealthDeps {
    HealthDeps {
        p_self: db(),
        r#match: grpc(),
        a_b: db(),
        x_y: db(),
        p_1st: grpc(),
        http_probe: HTTPProbe,
        cache_probe: CacheProbe,
        queue: QueueProbe,
    }
}

fn main() {
    let names: Vec<&str> = Health::PROBES.iter().map(|p| p.name).collect();
    assert_eq!(names, ["self", "match", "a-b", "x.y", "1st", "http", "cache", "queue"]);
}
